"""Claude Code, Codex and OpenCode share one memory (issue 35), each the real CLI from npm on a HOME of its
own, configured by running the README's and docs/clients.md's own commands, talking to a scripted model on
127.0.0.1 and to a live Kenfold. Hooks fire as the agents fire them, MCP tools are listed and called by the
agents' own MCP clients, and each assertion is on what the scripted model received or what Kenfold stored.

Not part of `make test` (marked `agents`): `make test-agents` installs the pinned CLIs and runs it.
"""

import json
from pathlib import Path

import pytest

from tests.agents.scripted_models import Call, Say, ScriptedModel
from tests.agents.support import (
    CLIENTS,
    DATA_FRAMING,
    DOCS_URL,
    README,
    chat_tool_results,
    checkout,
    cli,
    contents,
    doc_block,
    function_outputs,
    machine,
    memories,
    response_texts,
    system_text,
    tool_json,
    tool_results,
)
from tests.mcp.support import KenfoldServer

pytestmark = pytest.mark.agents

PROJECT = "github.com/acme/shop"
SCOPE = f"project:{PROJECT}"
FACT = "Checkout retries are idempotent on the order id"
CONTEXT_HEADER = f"Kenfold shared memory for project {PROJECT}."


def test_claude_code_codex_and_opencode_share_memory_and_hand_off(
    server: KenfoldServer, model: ScriptedModel, tmp_path: Path
) -> None:
    shop = checkout(tmp_path / "shop").path

    # Claude Code, connected with the README's first-screen block: a key file, the MCP server at user
    # scope, the hooks with the same key file and URL.
    claude_machine = machine(server, model.url, tmp_path / "claude-home")
    claude_machine.shell(doc_block(README, containing="claude mcp add --scope user --transport http"))
    key_file = claude_machine.home / ".config" / "kenfold" / "claude-code.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    claude_config = json.loads((claude_machine.home / ".claude.json").read_text())
    assert claude_config["mcpServers"]["kenfold"]["url"] == server.url
    listed = claude_machine.run([cli("claude"), "mcp", "list"], cwd=shop)
    assert f"kenfold: {server.url} (HTTP) - ✔ Connected" in listed

    # Session 1: the model stores a fact through Claude Code's MCP client (tools are listed lazily, so it
    # first selects the tool with ToolSearch); SessionEnd stores the session's summary.
    model.script = [
        Call("ToolSearch", {"query": "select:mcp__kenfold__remember"}),
        Call("mcp__kenfold__remember", {"content": FACT, "type": "project", "project": PROJECT}),
        Say("Stored."),
    ]
    prompt = "Remember that checkout retries are idempotent"
    assert claude_machine.claude(prompt, cwd=shop, allowed=["mcp__kenfold__remember"]).strip() == "Stored."
    session_one = model.requests("/v1/messages")
    stored = tool_json(tool_results(session_one[-1])[-1])
    assert stored["status"] == "active" and stored["type"] == "project"
    written = memories(server, scope=SCOPE)
    assert [(m["type"], m["content"], m["agent"]) for m in written if m["type"] == "project"] == [
        ("project", FACT, "claude-code")
    ]
    summaries = [m for m in written if m["type"] == "episodic"]
    assert len(summaries) == 1 and summaries[0]["agent"] == "claude-code"
    assert prompt in summaries[0]["content"] and "Stored." in summaries[0]["content"]

    # Codex, on a machine of its own, connected with docs/clients.md's blocks: keys, `codex mcp add`,
    # the hooks. Codex runs no hook it has not trusted (`codex exec` skips them silently), so they are
    # trusted as /hooks would: its app-server's hooks/list, then config/batchWrite of the trusted hashes.
    codex_machine = machine(server, model.url, tmp_path / "codex-home")
    codex_machine.shell(doc_block(CLIENTS, containing="key create codex"))
    codex_machine.shell(doc_block(CLIENTS, containing="codex mcp add kenfold --url"))
    installed = codex_machine.shell(doc_block(CLIENTS, containing="kenfold hook install codex"))
    assert "Next: start `codex` and approve Kenfold's hooks with /hooks" in installed
    listed = codex_machine.run([cli("codex"), "mcp", "list"], cwd=shop).split()
    assert listed[listed.index("kenfold") + 1 : listed.index("kenfold") + 4] == [
        server.url,
        "KENFOLD_API_KEY",
        "enabled",
    ]
    hooks = codex_machine.codex_trust_hooks(cwd=shop)
    assert {hook["eventName"] for hook in hooks} == {"sessionStart", "userPromptSubmit", "stop", "sessionEnd"}
    assert all(
        " hook --client codex " in hook["command"] and hook["trustStatus"] == "untrusted" for hook in hooks
    )

    # The model recalls what Claude Code wrote, then leaves a handoff.
    model.script = [
        Call("recall", {"query": "checkout retries", "project": PROJECT}, namespace="mcp__kenfold"),
        Call(
            "handoff",
            {
                "summary": "Retry wrapper half done",
                "next_steps": ["Wire retry() into the payment call"],
                "project": PROJECT,
            },
            namespace="mcp__kenfold",
        ),
        Say("Handed off."),
    ]
    codex_key = codex_machine.home / ".config" / "kenfold" / "codex.key"
    output = codex_machine.codex("Continue the checkout retry work", cwd=shop, key_file=codex_key)
    assert output.strip() == "Handed off."
    codex_session = model.requests("/v1/responses")
    # SessionStart's context reached Codex's model, framed as data.
    first_input = response_texts(codex_session[0])
    assert CONTEXT_HEADER in first_input and DATA_FRAMING in first_input
    recalled = tool_json(function_outputs(codex_session[-1])[0])["memories"]
    assert {"content": FACT, "source_agent": "claude-code"}.items() <= next(
        memory for memory in recalled if memory["content"] == FACT
    ).items()
    assert tool_json(function_outputs(codex_session[-1])[1])["id"]
    # Kenfold stored the handoff (a temporary memory) and, from Codex's SessionEnd hook, its summary.
    codex_wrote = [m for m in memories(server, scope=SCOPE) if m["agent"] == "codex"]
    assert [(m["type"], m["content"]) for m in codex_wrote if m["type"] == "temporary"] == [
        ("temporary", "Retry wrapper half done")
    ]
    codex_summaries = [m["content"] for m in codex_wrote if m["type"] == "episodic"]
    assert len(codex_summaries) == 1 and "Continue the checkout retry work" in codex_summaries[0]

    # OpenCode, configured with docs/clients.md's opencode.json (plus its model, the scripted server as an
    # OpenAI-compatible provider): get_context returns what Claude Code and Codex wrote.
    opencode_machine = machine(server, model.url, tmp_path / "opencode-home")
    opencode_machine.shell(doc_block(CLIENTS, containing="key create opencode"))
    config = json.loads(
        doc_block(CLIENTS, language="json", containing='"type": "remote"').replace(DOCS_URL, server.url)
    )
    config["provider"] = {
        "scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": f"{model.url}/v1", "apiKey": "scripted-model-key"},
            "models": {"scripted-model": {"name": "Scripted"}},
        }
    }
    config["model"] = "scripted/scripted-model"
    config_file = opencode_machine.home / ".config" / "opencode" / "opencode.json"
    config_file.parent.mkdir(parents=True)
    config_file.write_text(json.dumps(config))
    model.script = [Call("kenfold_get_context", {"project": PROJECT}), Say("Context loaded.")]
    assert "Context loaded." in opencode_machine.opencode("What is going on in this project?", cwd=shop)
    context_items = list(
        contents(tool_json(chat_tool_results(model.requests("/v1/chat/completions")[-1])[-1]))
    )
    assert (FACT, "claude-code") in context_items
    assert ("Retry wrapper half done", "codex") in context_items

    # Claude Code's next session: SessionStart's context names the handoff and the fact, as data; the
    # model resumes Codex's handoff.
    sent = len(session_one)
    model.script = [
        Call("ToolSearch", {"query": "select:mcp__kenfold__resume"}),
        Call("mcp__kenfold__resume", {"project": PROJECT}),
        Say("Resumed."),
    ]
    claude_machine.claude("Pick up where Codex left off", cwd=shop, allowed=["mcp__kenfold__resume"])
    session_two = model.requests("/v1/messages")[sent:]
    context = system_text(session_two[0])
    assert f"SessionStart hook additional context: {CONTEXT_HEADER}" in context
    assert DATA_FRAMING in context and "Retry wrapper half done" in context
    resumed = tool_json(tool_results(session_two[-1])[-1])["handoff"]
    assert resumed["source_agent"] == "codex"
    assert resumed["next_steps"] == ["Wire retry() into the payment call"]
