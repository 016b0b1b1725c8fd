"""Claude Code's other ways to Kenfold, the real CLI against a scripted model: the README's stdio form
(`manage.py mcp` started by Claude Code) and the plugin in this repository, installed from its local
marketplace with the README's line.

Not part of `make test` (marked `agents`): `make test-agents` installs the pinned CLIs and runs it.
"""

import json
from pathlib import Path

import pytest

from bench.support.processes import REPO
from tests.agents.scripted_models import Call, Say, ScriptedModel
from tests.agents.support import (
    DATA_FRAMING,
    README,
    checkout,
    cli,
    doc_block,
    machine,
    memories,
    system_text,
    tool_json,
    tool_results,
)
from tests.mcp.support import KenfoldServer

pytestmark = pytest.mark.agents


def test_claude_code_over_stdio(server: KenfoldServer, model: ScriptedModel, tmp_path: Path) -> None:
    """The README's stdio form: Claude Code starts `manage.py mcp` itself; writes carry KENFOLD_AGENT."""
    shop = checkout(tmp_path / "shop").path
    local = machine(server, model.url, tmp_path / "home")
    local.shell(doc_block(README, containing='manage.py" mcp'))
    listed = local.run([cli("claude"), "mcp", "list"], cwd=shop)
    assert "kenfold: " in listed and "manage.py mcp - ✔ Connected" in listed

    fact = "The stdio server shares the database of the HTTP one"
    model.script = [
        Call("ToolSearch", {"query": "select:mcp__kenfold__remember"}),
        Call(
            "mcp__kenfold__remember", {"content": fact, "type": "project", "project": "github.com/acme/stdio"}
        ),
        Say("Stored."),
    ]
    local.claude("Remember how stdio works", cwd=shop, allowed=["mcp__kenfold__remember"])
    result = tool_json(tool_results(model.requests("/v1/messages")[-1])[-1])
    assert result["status"] == "active"
    stored = memories(server, scope="project:github.com/acme/stdio")
    assert [(m["content"], m["agent"]) for m in stored] == [(fact, "claude-code")]


def test_claude_code_plugin(server: KenfoldServer, model: ScriptedModel, tmp_path: Path) -> None:
    """The plugin in this repository passes `claude plugin validate --strict`, installs from the local
    marketplace with the README's line, and carries the round trip: SessionStart's context, `remember`
    through the plugin's MCP server (its key from the key file, its address from KENFOLD_URL), and
    SessionEnd's summary."""
    shop = checkout(tmp_path / "shop").path
    user = machine(server, model.url, tmp_path / "home")
    for path in (REPO / "plugins" / "kenfold", REPO):
        report = user.run([cli("claude"), "plugin", "validate", "--strict", path], cwd=REPO)
        assert "✔ Validation passed" in report
    first_screen = doc_block(README, containing="claude mcp add --scope user --transport http")
    user.shell("\n".join(line for line in first_screen.splitlines() if "key create claude-code" in line))
    user.shell(doc_block(README, containing="claude plugin install"))
    address = {"KENFOLD_URL": server.url}
    listed = user.run([cli("claude"), "mcp", "list"], cwd=shop, **address)
    assert f"plugin:kenfold:kenfold: {server.url} (HTTP) - ✔ Connected" in listed

    project = "github.com/acme/plugin"
    plugin_shop = checkout(tmp_path / "plugin-shop", f"https://{project}.git")
    fact = "The plugin reads the key file the README creates"
    tool = "mcp__plugin_kenfold_kenfold__remember"
    model.script = [
        Call("ToolSearch", {"query": f"select:{tool}"}),
        Call(tool, {"content": fact, "type": "project", "project": project}),
        Say("Stored."),
    ]
    user.claude("Remember how the plugin connects", cwd=plugin_shop.path, allowed=[tool], **address)
    assert tool_json(tool_results(model.requests("/v1/messages")[-1])[-1])["status"] == "active"
    stored = memories(server, scope=f"project:{project}")
    assert [(m["type"], m["content"], m["agent"]) for m in stored if m["type"] == "project"] == [
        ("project", fact, "claude-code")
    ]
    summaries = [m["content"] for m in stored if m["type"] == "episodic"]
    assert len(summaries) == 1 and "Remember how the plugin connects" in summaries[0]

    # The next session starts with that memory, framed as data, from the plugin's SessionStart hook.
    sent = len(model.requests("/v1/messages"))
    model.script = [Say("Noted.")]
    user.claude("What do we know?", cwd=plugin_shop.path, allowed=[], **address)
    context = system_text(model.requests("/v1/messages")[sent])
    assert f"SessionStart hook additional context: Kenfold shared memory for project {project}." in context
    assert DATA_FRAMING in context and fact in context


def test_the_hook_marks_what_a_claude_code_session_reused(
    server: KenfoldServer, model: ScriptedModel, tmp_path: Path
) -> None:
    """Issue 39: the plugin's SessionStart serves the project's rules (recorded with the session id), the
    agent recalls one and edits the file it names; at SessionEnd the hook reads Claude Code's transcript
    and marks that memory used, and only that one."""
    project = "github.com/acme/usage"
    repo = checkout(tmp_path / "usage-shop", f"https://{project}.git")
    repo.write("app/payments/refund.py", "def refund(payment_id: str) -> None:\n    pass\n")
    repo.commit("refunds")
    shop = repo.path
    user = machine(server, model.url, tmp_path / "home")
    first_screen = doc_block(README, containing="claude mcp add --scope user --transport http")
    user.shell("\n".join(line for line in first_screen.splitlines() if "key create claude-code" in line))
    user.shell(doc_block(README, containing="claude plugin install"))
    address = {"KENFOLD_URL": server.url}
    refund = "Refunds go through PaymentService.refund() in app/payments/refund.py, never a direct UPDATE."
    staging = "The staging database is reset every Sunday night."
    created = server.manage(
        "shell",
        "-c",
        "import json\nfrom access.caller import Caller\nfrom memories.services.remember import memory_remember\n"
        f"ids = [memory_remember(caller=Caller(agent='codex'), content=c, type='project', project={project!r}).id"
        f" for c in ({refund!r}, {staging!r})]\nprint(json.dumps(ids))",
    )
    refund_id, staging_id = json.loads(created.stdout.splitlines()[-1])

    tool = "mcp__plugin_kenfold_kenfold__recall"
    model.script = [
        Call("ToolSearch", {"query": f"select:{tool}"}),
        Call(tool, {"query": "how do refunds work", "project": project}),
        Call("Read", {"file_path": str(shop / "app/payments/refund.py")}),
        Call(
            "Edit",
            {
                "file_path": str(shop / "app/payments/refund.py"),
                "old_string": "pass",
                "new_string": "log(payment_id)",
            },
        ),
        Say("Refunds are logged now."),
    ]
    user.claude("Log every refund", cwd=shop, allowed=[tool, "Read", "Edit"], **address)
    assert refund in tool_results(model.requests("/v1/messages")[-1])[1]

    rows = server.manage(
        "shell",
        "-c",
        "import json\nfrom memories.models import ServedCall\n"
        f"rows = ServedCall.objects.filter(memory_ids__contains=[{refund_id!r}]).order_by('id')\n"
        "print(json.dumps([[r.tool, r.agent, bool(r.session_id), [str(i) for i in r.memory_ids],"
        " [str(i) for i in r.used_ids]] for r in rows]))",
    )
    start, recall = json.loads(rows.stdout.splitlines()[-1])
    # SessionStart's answer, recorded with the session, served both rules; the session reused one of them.
    assert start[:3] == ["get_context", "claude-code", True] and set(start[3]) == {refund_id, staging_id}
    assert start[4] == [refund_id]
    assert recall[:3] == ["recall", "claude-code", False] and recall[3][0] == refund_id and recall[4] == []
