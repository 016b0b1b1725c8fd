"""KENFOLD_PUBLIC_URL: the issuer, in one canonical spelling, or the process does not start."""

import subprocess
import sys
from pathlib import Path

import pytest

from bench.support.processes import REPO, kenfold_env
from kenfold.settings import _public_url
from kenfold_common.env import ConfigError


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("https://Memory.Example.org", "https://memory.example.org"),
        ("https://memory.example.org/", "https://memory.example.org"),
        ("https://memory.example.org:443", "https://memory.example.org"),
        ("https://memory.example.org:8443", "https://memory.example.org:8443"),
        ("http://127.0.0.1:7077", "http://127.0.0.1:7077"),
        ("http://localhost", "http://localhost"),
        ("http://[::1]:7077/", "http://[::1]:7077"),
    ],
)
def test_canonical_spelling(raw: str, canonical: str) -> None:
    assert _public_url(raw) == canonical


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("http://memory.example.org", "must use https"),
        ("https://memory.example.org/kenfold", "without a path"),
        ("https://memory.example.org?x=1", "without a path"),
        ("https://user:pw@memory.example.org", "without a path"),
        ("memory.example.org", "absolute https URL"),
        ("ftp://memory.example.org", "absolute https URL"),
        ("https://memory.example.org:99999", "invalid port"),
    ],
)
def test_refused_values(raw: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        _public_url(raw)


def test_a_bad_public_url_stops_the_process(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=kenfold_env(tmp_path, KENFOLD_PUBLIC_URL="http://memory.example.org"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "KENFOLD_PUBLIC_URL must use https" in result.stderr
