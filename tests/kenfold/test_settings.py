"""Configuration: typed readers fail loudly, and every variable is documented in .env.example and
docs/configuration.md."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.support.processes import REPO, kenfold_env, manage
from kenfold_common import env

# Variables of the test harness, not of Kenfold: .env.example mentions them, the configuration page does not.
HARNESS_VARIABLES = {"KENFOLD_TEST_DATABASE_URL"}
SOURCE_DIRS = ["kenfold", "memories", "coderefs", "oauth", "dashboard", "consolidation", "client", "scripts"]


def used_variables() -> set[str]:
    names: set[str] = set()
    for folder in SOURCE_DIRS:
        for path in (REPO / folder).rglob("*"):
            if path.suffix in {".py", ".sh"}:
                names |= set(re.findall(r"\bKENFOLD_[A-Z0-9_]+\b", path.read_text()))
    return names - HARNESS_VARIABLES


def documented_rows(page: Path) -> list[str]:
    """The variables named in the first column of a Markdown table on `page`, once per mention."""
    names = []
    for line in page.read_text().splitlines():
        if line.startswith("| `"):
            names += re.findall(r"`(KENFOLD_[A-Z0-9_]+)`", line.split(" | ")[0])
    return names


def test_every_variable_is_in_env_example_and_the_configuration_page() -> None:
    names = used_variables()
    assert {"KENFOLD_HOME", "KENFOLD_DATABASE_URL", "KENFOLD_HTTP_ADDR"} <= names
    # Read as the server reads it to warn about misspelt variables (kenfold.settings.KNOWN_VARIABLES).
    example = env.documented_variables(REPO / ".env.example") - HARNESS_VARIABLES
    assert sorted(names - example) == []
    rows = documented_rows(REPO / "docs" / "configuration.md")
    # Every variable the code reads or .env.example lists has exactly one row, and no row names another.
    assert sorted(n for n in names | example if rows.count(n) != 1) == []
    assert sorted(set(rows) - names - example) == []


@pytest.mark.parametrize(
    ("reader", "value", "message"),
    [
        (lambda: env.env_bool("KENFOLD_X", True), "maybe", "not a boolean"),
        (lambda: env.env_int("KENFOLD_X", 1, minimum=1), "0", "below the minimum"),
        (lambda: env.env_int("KENFOLD_X", 1), "ten", "not a whole number"),
        (lambda: env.env_float("KENFOLD_X", 0.5), "nan", "finite"),
        (lambda: env.env_choice("KENFOLD_X", "a", ("a", "b")), "c", "not one of: a, b"),
        (lambda: env.env_list("KENFOLD_X", ["a"]), " , ", "set but empty"),
        (lambda: env.env_url("KENFOLD_X"), "ftp://x", "must start with http or https"),
        (lambda: env.env_addr("KENFOLD_X", "127.0.0.1:1"), "localhost", "host:port"),
        (lambda: env.env_addr("KENFOLD_X", "127.0.0.1:1"), "127.0.0.1:99999", "between 1 and 65535"),
    ],
)
def test_bad_values_fail_loudly(monkeypatch: pytest.MonkeyPatch, reader, value: str, message: str) -> None:
    monkeypatch.setenv("KENFOLD_X", value)
    with pytest.raises(env.ConfigError, match=message):
        reader()


def test_good_values_are_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KENFOLD_X", "[::1]:7077")
    assert env.env_addr("KENFOLD_X", "127.0.0.1:1") == ("::1", 7077)
    monkeypatch.setenv("KENFOLD_X", " Off ")
    assert env.env_bool("KENFOLD_X", True) is False
    monkeypatch.setenv("KENFOLD_X", "a.example, b.example")
    assert env.env_list("KENFOLD_X", []) == ["a.example", "b.example"]


def test_a_bad_setting_stops_the_process_with_the_variable_named(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=kenfold_env(tmp_path, KENFOLD_HTTP_ADDR="nonsense"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "KENFOLD_HTTP_ADDR='nonsense' must be host:port" in result.stderr


def test_a_bad_bridge_weight_stops_the_process_with_the_variable_named(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=REPO,
        env=kenfold_env(tmp_path, KENFOLD_SEARCH_BRIDGE_WEIGHT="lots"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "KENFOLD_SEARCH_BRIDGE_WEIGHT" in result.stderr


@pytest.mark.parametrize(
    ("command", "variables", "message"),
    [
        (
            "serve",
            {"KENFOLD_EMBED": "locl"},
            "KENFOLD_EMBED='locl' is not one of: local, local-english, local-multilingual, http, http+local, off",
        ),
        (
            "check",
            {"KENFOLD_EMBED": "locl"},
            "KENFOLD_EMBED='locl' is not one of: local, local-english, local-multilingual, http, http+local, off",
        ),
        ("serve", {"KENFOLD_EMBED": "http"}, "KENFOLD_EMBED=http needs KENFOLD_EMBED_URL"),
        (
            "serve",
            {"KENFOLD_RERANK_URL": "localhost:8012"},
            "KENFOLD_RERANK_URL is not a valid URL; it must start with http or https://",
        ),
        (
            "check",
            {"KENFOLD_CHAT_REASONING": "max"},
            "KENFOLD_CHAT_REASONING='max' is not one of: none, minimal, low, medium, high, omit",
        ),
        (
            "serve",
            {"KENFOLD_EXTRACT_POLICY": "yolo"},
            "KENFOLD_EXTRACT_POLICY='yolo' is not one of: propose, auto",
        ),
        ("check", {"KENFOLD_CLASSIFY": "sometimes"}, "KENFOLD_CLASSIFY='sometimes' is not a boolean"),
        ("check", {"KENFOLD_CONSOLIDATE": "often"}, "KENFOLD_CONSOLIDATE='often' is not a boolean"),
        (
            "serve",
            {"KENFOLD_CONSOLIDATE": "true", "KENFOLD_CHAT_URL": ""},
            "KENFOLD_CONSOLIDATE=true needs a chat model: set KENFOLD_CHAT_URL",
        ),
    ],
)
def test_a_bad_provider_setting_stops_the_process_before_it_serves(
    tmp_path: Path, command: str, variables: dict[str, str], message: str
) -> None:
    """Provider variables are checked at start like every other setting: a typo used to pass `check`,
    `serve` and /readyz, and fail the first remember after its memory was stored."""
    result = manage(tmp_path, command, check=False, **variables)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr, "the owner gets the message, not Django's internals"
    assert not (tmp_path / "pgdata").exists(), "nothing was started"
