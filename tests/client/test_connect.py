"""`kenfold connect` and `kenfold doctor` (issue 35, item 4) against a real server, run as a user runs them:
the client distribution installed alone, a home folder of its own, and no agent CLI on PATH, so that
connect prints the registration to do by hand (the real Claude Code and Codex are driven by
tests/agents). What the commands write is read back from the files the agents read.
"""

import json
import shlex
import subprocess
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.support.processes import free_port, manage
from tests.mcp.support import KenfoldServer, serve

# No claude or codex here: /usr/bin and /bin hold git and sh, which is all the commands need.
BARE_PATH = "/usr/bin:/bin"


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[KenfoldServer]:
    keys = {
        agent: manage(module_home, "key", "create", agent).stdout.strip()
        for agent in ("claude-code", "codex")
    }
    keys["reader"] = manage(module_home, "key", "create", "claude-code", "--read-only").stdout.strip()
    with serve(module_home, keys, KENFOLD_EMBED="off") as started:
        yield started


@dataclass
class Machine:
    """The agent's machine: a home folder, the installed `kenfold`, and the environment it runs in."""

    home: Path
    kenfold: Path
    env: dict[str, str]

    def save_key(self, key: str, name: str = "claude-code.key", mode: int = 0o600) -> Path:
        path = self.home / ".config" / "kenfold" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(key + "\n")
        path.chmod(mode)
        return path

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.kenfold), *args],
            env=self.env | env,
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def report(self, *args: str, **env: str) -> tuple[int, Any]:
        result = self.run(*args, "--json", **env)
        assert not result.stderr, result.stderr
        return result.returncode, json.loads(result.stdout)


@pytest.fixture
def machine(standalone_client: Path, tmp_path: Path) -> Machine:
    home = tmp_path / "user"
    home.mkdir()
    return Machine(
        home=home, kenfold=standalone_client / "kenfold", env={"PATH": BARE_PATH, "HOME": str(home)}
    )


def checks(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["check"]: check for check in report["checks"]}


def test_whoami_says_who_a_key_is(server: KenfoldServer) -> None:
    def whoami(key: str | None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.get(f"{server.base}/api/v1/whoami", headers=headers)

    assert whoami(server.keys["codex"]).json() == {
        "agent": "codex",
        "read_only": False,
        "credential": "api_key",
    }
    assert whoami(server.keys["reader"]).json() == {
        "agent": "claude-code",
        "read_only": True,
        "credential": "api_key",
    }
    assert whoami(None).status_code == 401
    assert whoami("kf_" + "x" * 43).status_code == 401


def test_connect_claude_code_without_its_cli_prints_the_registration_and_installs_the_hooks(
    server: KenfoldServer, machine: Machine
) -> None:
    key_file = machine.save_key(server.keys["claude-code"])
    result = machine.run("connect", "claude-code", "--url", server.url)
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"Connecting Claude Code to Kenfold at {server.url} (key file {key_file})"
    assert lines[1] == f"✓ server: Kenfold answers at {server.base}/healthz"
    assert lines[2] == "✓ key: valid, read and write, writes as claude-code"
    assert lines[3] == "✓ key file: readable only by you"
    assert lines[4] == (
        "✗ MCP: claude is not on PATH (nor set in KENFOLD_CLAUDE_BIN), so Kenfold is not registered with "
        "Claude Code"
    )
    assert lines[5] == "    install Claude Code (npm install -g @anthropic-ai/claude-code), then run:"
    by_hand = shlex.split(lines[6])
    assert by_hand[:6] == ["claude", "mcp", "add-json", "--scope", "user", "kenfold"]
    entry = json.loads(by_hand[6])
    assert (entry["type"], entry["url"]) == ("http", server.url)
    assert server.keys["claude-code"] not in result.stdout, "the key stays in its file"
    assert lines[7].startswith(
        f"✓ hooks: Installed the Kenfold hooks in {machine.home}/.claude/settings.json."
    )
    assert lines[8] == "✓ round trip: an MCP recall answered (0 memories)"
    assert lines[9] == "1 problem: do what the ✗ line says, then run `kenfold doctor claude-code`."

    # The headers helper Claude Code runs (through a shell) prints the key file's bearer header.
    helper = subprocess.run(
        ["sh", "-c", entry["headersHelper"]], env=machine.env, capture_output=True, text=True, check=True
    )
    assert json.loads(helper.stdout) == {"Authorization": f"Bearer {server.keys['claude-code']}"}
    response = httpx.post(
        server.url,
        headers=json.loads(helper.stdout) | {"Accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "0"},
            },
        },
    )
    assert response.status_code == 200 and "Kenfold" in response.text

    settings = json.loads((machine.home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert shlex.split(command)[1:] == [
        "hook",
        "--client",
        "claude-code",
        "--url",
        server.url,
        "--key-file",
        str(key_file),
    ]

    # Doctor finds the URL and key file through the hooks, and the same missing registration.
    code, [report] = machine.report("doctor")
    assert code == 1 and report["url"] == server.url and report["key_file"] == str(key_file)
    found = checks(report)
    assert [name for name, check in found.items() if not check["ok"]] == ["MCP"]
    assert (
        found["MCP"]["detail"]
        == f"Claude Code has no user settings yet ({machine.home}/.claude.json does not exist)"
    )
    assert "claude mcp add-json --scope user kenfold" in found["MCP"]["fix"]
    assert found["hooks"]["ok"] and found["round trip"]["ok"]

    # Once `claude mcp add-json` has stored the entry (in ~/.claude.json, where Claude Code keeps
    # user-scope servers), everything holds.
    (machine.home / ".claude.json").write_text(json.dumps({"mcpServers": {"kenfold": entry}}))
    assert machine.run("doctor", "claude-code").returncode == 0
    text = machine.run("doctor", "claude-code").stdout
    assert (
        f"✓ MCP: {machine.home}/.claude.json has kenfold at {server.url}, with the key read from {key_file}"
        in text
    )
    assert text.rstrip().endswith("Claude Code is connected: start a new Claude Code session.")


def test_connect_codex_writes_its_config_and_keeps_the_users(server: KenfoldServer, machine: Machine) -> None:
    key_file = machine.save_key(server.keys["codex"], "codex.key")
    config = machine.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(
        'model = "o4-mini"\n\n[mcp_servers.kenfold]\nurl = "http://old.example/mcp"\n\n'
        '[mcp_servers.kenfold.env]\nOLD = "1"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n'
    )
    code, report = machine.report("connect", "codex", "--url", server.url)
    assert code == 0, report
    assert report["ok"] and report["client"] == "codex" and report["key_file"] == str(key_file)
    found = checks(report)
    assert list(found) == ["server", "key", "key file", "MCP", "hooks", "round trip"]
    assert found["MCP"]["detail"].startswith(
        f"wrote [mcp_servers.kenfold] in {config} (the previous file is saved as "
    )
    assert found["MCP"]["detail"].endswith(
        f"; {config} has kenfold at {server.url}, with the key read from {key_file}; codex itself is not on "
        "PATH yet (npm install -g @openai/codex)"
    )
    written = tomllib.loads(config.read_text())
    assert written["model"] == "o4-mini" and written["mcp_servers"]["docs"] == {"command": "docs-server"}
    kenfold = written["mcp_servers"]["kenfold"]
    assert set(kenfold) == {"url", "http_headers_helper"} and kenfold["url"] == server.url
    assert server.keys["codex"] not in config.read_text()
    # Codex runs the helper through a shell, as Claude Code does, and sends the header it prints.
    helper = subprocess.run(
        ["sh", "-c", kenfold["http_headers_helper"]],
        env=machine.env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(helper.stdout) == {"Authorization": f"Bearer {server.keys['codex']}"}
    hooks = json.loads((machine.home / ".codex" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"}

    # Connecting again changes nothing; doctor finds the same setup.
    before = config.read_text()
    assert machine.run("connect", "codex", "--url", server.url).returncode == 0
    assert config.read_text() == before
    code, [report] = machine.report("doctor")
    assert code == 0 and report["client"] == "codex" and report["key_file"] == str(key_file)

    # A table written by hand with the key in an environment variable holds when the variable does.
    config.write_text(
        f'[mcp_servers.kenfold]\nurl = "{server.url}"\nbearer_token_env_var = "KENFOLD_API_KEY"\n'
    )
    code, [report] = machine.report("doctor", "codex", KENFOLD_API_KEY=server.keys["codex"])
    assert code == 0 and checks(report)["MCP"]["detail"].endswith("with the key from $KENFOLD_API_KEY")
    code, [report] = machine.report("doctor", "codex", KENFOLD_API_KEY=server.keys["claude-code"])
    mcp = checks(report)["MCP"]
    assert (
        code == 1
        and mcp["detail"] == f"[mcp_servers.kenfold] in {config} does not send the key of {key_file}"
    )
    assert mcp["fix"].endswith(f"http_headers_helper = {json.dumps(kenfold['http_headers_helper'])}")


def test_doctor_names_hooks_that_use_another_url_or_key_file(server: KenfoldServer, machine: Machine) -> None:
    key_file = machine.save_key(server.keys["claude-code"])
    assert machine.run("connect", "claude-code", "--url", server.url).returncode == 1
    other = machine.save_key(server.keys["claude-code"], "other.key")
    machine.run("hook", "install", "claude-code", "--url", server.url, "--key-file", str(other))
    code, [report] = machine.report("doctor", "claude-code", "--key-file", str(key_file))
    hooks = checks(report)["hooks"]
    assert not hooks["ok"] and hooks["detail"].endswith(f"reads the key from {other}")
    assert hooks["fix"] == f"kenfold hook install claude-code --url {server.url} --key-file {key_file}"
    stale = f"http://127.0.0.1:{free_port()}/mcp"
    # The install refuses a URL where nothing answers, so the server "moved" after the hooks were installed.
    machine.run("hook", "install", "claude-code", "--url", server.url, "--key-file", str(key_file))
    settings = machine.home / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(server.url, stale))
    code, [report] = machine.report("doctor", "claude-code", "--url", server.url)
    assert code == 1 and checks(report)["hooks"]["detail"].endswith(f"uses --url {stale}")


def test_a_read_only_key_is_reported_and_works(server: KenfoldServer, machine: Machine) -> None:
    machine.save_key(server.keys["reader"])
    code, report = machine.report("connect", "claude-code", "--url", server.url)
    found = checks(report)
    assert code == 1, "claude is not on PATH"
    assert found["key"]["detail"] == (
        "valid, read-only, writes as claude-code (the agent can search memory but not remember; session "
        "summaries will be refused)"
    )
    assert found["round trip"]["ok"]


def test_nothing_is_written_when_the_server_or_the_key_fails(server: KenfoldServer, machine: Machine) -> None:
    nothing = machine.run("doctor")
    assert nothing.returncode == 1
    assert nothing.stderr == (
        "kenfold: error: no agent on this machine is set up for Kenfold; run `kenfold connect claude-code` "
        "or `kenfold connect codex` (see --help)\n"
    )
    unreachable = f"http://127.0.0.1:{free_port()}/mcp"
    code, report = machine.report("connect", "claude-code", "--url", unreachable)
    assert code == 1 and [check["check"] for check in report["checks"]] == ["server"]
    assert report["checks"][0]["detail"].startswith("cannot reach Kenfold at http://127.0.0.1:")
    assert "--url" in report["checks"][0]["fix"]

    code, report = machine.report("connect", "claude-code", "--url", server.url)
    key = checks(report)["key"]
    assert key["detail"] == f"there is no key file at {machine.home}/.config/kenfold/claude-code.key"
    assert "umask 077" in key["fix"] and "manage.py key create claude-code" in key["fix"]

    machine.save_key("kf_" + "A" * 43)
    code, report = machine.report("connect", "claude-code", "--url", server.url)
    key = checks(report)["key"]
    assert not key["ok"] and key["detail"].startswith("the server refused the key in ")
    assert "unknown API key" in key["detail"]
    assert not (machine.home / ".claude").exists(), "no hooks point to a server or key that does not work"

    machine.save_key(server.keys["claude-code"], mode=0o644)
    code, report = machine.report("connect", "claude-code", "--url", server.url)
    private = checks(report)["key file"]
    assert not private["ok"] and private["fix"] == f"chmod 600 {machine.home}/.config/kenfold/claude-code.key"

    result = machine.run("connect", "claude-code", "--url", f"{server.base}/api")
    assert result.returncode == 2 and "is not a Kenfold MCP URL" in result.stderr
