"""`kenfold connect` and `kenfold doctor` with the real Claude Code and Codex CLIs (pinned in tests/agents):
one command registers the MCP server user-wide and installs the hooks, and the agent then uses Kenfold.

Not part of `make test` (marked `agents`): `make test-agents` installs the pinned CLIs and runs it.
"""

import sys
from pathlib import Path

import pytest

from tests.agents.scripted_models import Call, Say, ScriptedModel
from tests.agents.support import (
    checkout,
    cli,
    function_outputs,
    machine,
    memories,
    tool_json,
    tool_results,
)
from tests.mcp.support import KenfoldServer

pytestmark = pytest.mark.agents

PROJECT = "github.com/acme/connected"


def test_kenfold_connect_then_doctor_with_the_real_clis(
    server: KenfoldServer, model: ScriptedModel, tmp_path: Path
) -> None:
    shop = checkout(tmp_path / "shop", f"https://{PROJECT}.git").path
    user = machine(server, model.url, tmp_path / "home")
    for agent in ("claude-code", "codex"):
        user.shell(
            f"mkdir -p ~/.config/kenfold && (umask 077 && {sys.executable} manage.py key create {agent}"
            f" > ~/.config/kenfold/{agent}.key)"
        )

    # Claude Code: registered with its own CLI (found on PATH), no key in any of its files.
    connected = user.run(["kenfold", "connect", "claude-code", "--url", server.url], cwd=shop)
    assert "✗" not in connected, connected
    for check in ("server", "key", "key file", "MCP", "hooks", "round trip"):
        assert f"✓ {check}:" in connected
    key = (user.home / ".config" / "kenfold" / "claude-code.key").read_text().strip()
    assert key not in (user.home / ".claude.json").read_text()
    listed = user.run([cli("claude"), "mcp", "list"], cwd=shop)
    assert f"kenfold: {server.url} (HTTP) - ✔ Connected" in listed

    fact = "Connected agents share the checkout's retry rules"
    model.script = [
        Call("ToolSearch", {"query": "select:mcp__kenfold__remember"}),
        Call("mcp__kenfold__remember", {"content": fact, "type": "project", "project": PROJECT}),
        Say("Stored."),
    ]
    user.claude("Remember the retry rules", cwd=shop, allowed=["mcp__kenfold__remember"])
    assert tool_json(tool_results(model.requests("/v1/messages")[-1])[-1])["status"] == "active"
    stored = memories(server, scope=f"project:{PROJECT}")
    assert [(m["content"], m["agent"]) for m in stored if m["type"] == "project"] == [(fact, "claude-code")]

    # Codex: its config.toml reads the key file through the headers helper; no KENFOLD_API_KEY is set.
    connected = user.run(["kenfold", "connect", "codex", "--url", server.url], cwd=shop)
    assert "✗" not in connected, connected
    assert server.url in user.run([cli("codex"), "mcp", "list"], cwd=shop)
    model.script = [
        Call("recall", {"query": "retry rules", "project": PROJECT}, namespace="mcp__kenfold"),
        Say("Found it."),
    ]
    assert user.codex("What are the retry rules?", cwd=shop).strip() == "Found it."
    recalled = tool_json(function_outputs(model.requests("/v1/responses")[-1])[0])["memories"]
    assert (fact, "claude-code") in [(m["content"], m["source_agent"]) for m in recalled]

    # doctor finds both setups from the installed hooks and passes every check, changing nothing.
    before = (user.home / ".codex" / "config.toml").read_text()
    report = user.run(["kenfold", "doctor"], cwd=shop)
    assert "✗" not in report and report.count("✓ round trip:") == 2, report
    assert (user.home / ".codex" / "config.toml").read_text() == before
