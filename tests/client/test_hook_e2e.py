"""End to end: `kenfold hook` driven as Claude Code and Codex drive it, against a real server and real git
checkouts (issue 12; spec §2, the Handoff and Hook scenarios).

The `kenfold` command is the client distribution installed alone into a fresh venv (no Django), each hook
call a process of its own with the event's JSON on stdin, as the agents run it.
"""

import json
import os
import re
import shlex
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from bench.support.processes import free_port, manage
from tests.client.support import Repo
from tests.mcp.support import KenfoldServer, call, call_error, mcp_client, serve

pytestmark = pytest.mark.anyio
SECRET = "ghp_" + "Zq8xV2nR4tL6pW9sK3mB7cD1fH5jY0aE2gU4"
HEADER = re.compile(
    r"^Session summary: (\d+) requests? on branch main, \d{4}-\d\d-\d\d \d\d:\d\d–\d\d:\d\d UTC\.\nRequests:\n"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[KenfoldServer]:
    keys = {
        agent: manage(module_home, "key", "create", agent).stdout.strip()
        for agent in ("claude-code", "codex")
    }
    with serve(module_home, keys, KENFOLD_EMBED="off") as started:
        yield started


@dataclass(frozen=True)
class Agent:
    """One agent's hook setup on the user's machine: its command, key, server address and state folder."""

    kenfold: Path
    name: str
    key: str
    url: str
    state: Path

    def hook(self, event: str, session: str, cwd: Path, **fields: str) -> tuple[dict[str, Any] | None, str]:
        """Run the hook for one event; returns the JSON it printed (None when silent) and its stderr."""
        payload = {"hook_event_name": event, "session_id": session, "cwd": str(cwd), **fields}
        result = subprocess.run(
            [str(self.kenfold), "hook", "--client", self.name, "--url", self.url, "--key-env", "AGENT_KEY"],
            input=json.dumps(payload),
            env={"PATH": os.environ["PATH"], "AGENT_KEY": self.key, "KENFOLD_STATE_DIR": str(self.state)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        return (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr

    def context(self, session: str, cwd: Path) -> str:
        output, stderr = self.hook("SessionStart", session, cwd, source="startup")
        assert output is not None, stderr
        assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        return output["hookSpecificOutput"]["additionalContext"]


def agent(server: KenfoldServer, standalone_client: Path, tmp_path: Path, name: str, **extra: Any) -> Agent:
    fields = {"url": server.url, "state": tmp_path / f"state-{name}"} | extra
    return Agent(kenfold=standalone_client / "kenfold", name=name, key=server.keys[name], **fields)


def checkout(path: Path, remote: str) -> Repo:
    repo = Repo(path)
    repo.git("remote", "add", "origin", remote)
    repo.write("app/auth.py", "def safe_next(url: str) -> str:\n    return url\n")
    repo.commit("auth")
    return repo


def memories(server: KenfoldServer, scope: str) -> list[dict[str, Any]]:
    """The scope's memories in every status, oldest first, read through the owner's shell (whose first
    lines are its own banner)."""
    code = (
        "import json\nfrom memories.models import Memory\n"
        f"rows = Memory.objects.filter(scope={scope!r}).order_by('created_at')\n"
        "print(json.dumps([dict(type=m.type, status=m.status, content=m.content, agent=m.source_agent, "
        "session=m.source_session) for m in rows]))"
    )
    return json.loads(server.manage("shell", "-c", code).stdout.splitlines()[-1])


def summaries(server: KenfoldServer, scope: str) -> list[dict[str, Any]]:
    return [memory for memory in memories(server, scope) if memory["type"] == "episodic"]


def files_text(folder: Path) -> str:
    return "".join(path.read_text() for path in folder.rglob("*") if path.is_file())


def assert_private(folder: Path) -> None:
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) == (0o700 if path.is_dir() else 0o600), path


def assert_no_secret_in_database(server: KenfoldServer) -> None:
    dump = server.manage("dumpdata", "memories", "coderefs").stdout
    assert '"content"' in dump, "the dump holds the memories"
    assert SECRET not in dump


async def test_handoff_between_two_agents_through_the_hooks(
    server: KenfoldServer, standalone_client: Path, tmp_path: Path
) -> None:
    project, scope = "github.com/acme/shop", "project:github.com/acme/shop"
    claude = agent(server, standalone_client, tmp_path, "claude-code")
    codex = agent(server, standalone_client, tmp_path, "codex")
    first = checkout(tmp_path / "first", "git@github.com:Acme/shop.git")

    # Context at start: an empty memory gives no output at all.
    assert claude.hook("SessionStart", "sess-a", first.path, source="startup") == (None, "")

    # Capture: prompts, the final response and a compaction summary, redacted on disk.
    for prompt in (
        "Fix the login redirect loop\nIt happens after the password reset.",
        f"Use the deploy token {SECRET} to push the fix",
    ):
        assert claude.hook("UserPromptSubmit", "sess-a", first.path / "app", prompt=prompt) == (None, "")
    claude.hook(
        "Stop", "sess-a", first.path, last_assistant_message="Fixed:   `safe_next` now rejects\nloops."
    )
    claude.hook("PostCompact", "sess-a", first.path, compact_summary="Working on the login redirect loop.")
    log = files_text(claude.state / "sessions")
    assert "Fix the login redirect loop" in log and "[REDACTED:" in log and SECRET not in log
    assert_private(claude.state)

    async with mcp_client(server.url, key=claude.key) as mcp:
        assert "is a local path" in await call_error(mcp, "remember", content="A rule", project="~/shop")
        refused = await call_error(mcp, "remember", content=f"The deploy token is {SECRET}", project=project)
        assert "GitHub" in refused and SECRET not in refused
        refused = await call_error(
            mcp, "handoff", summary="Half-way", next_steps=[f"push with {SECRET}"], project=project
        )
        assert "next_steps[0]" in refused and SECRET not in refused
        rule = await call(
            mcp, "remember", content="Login redirects go through `safe_next` in app/auth.py.", project=project
        )
        await call(
            mcp,
            "handoff",
            summary="The redirect loop is fixed; the reset flow is untested.",
            next_steps=["Test the password reset flow end to end"],
            project=project,
        )

    # Summary at end: the spec's header, the agent's and session's provenance, the redaction marker.
    assert claude.hook("SessionEnd", "sess-a", first.path, reason="exit") == (None, "")
    assert not list((claude.state / "spool").glob("*.json")), "delivered, so not kept"
    [summary] = summaries(server, scope)
    assert (summary["agent"], summary["session"], summary["status"]) == ("claude-code", "sess-a", "active")
    content = summary["content"]
    assert HEADER.match(content) and HEADER.match(content).group(1) == "2", content
    assert (
        "- Fix the login redirect loop\n- Use the deploy token [REDACTED:github-token] to push the fix\n"
        in content
    )
    assert "Final response:\nFixed: `safe_next` now rejects loops.\n" in content
    assert content.endswith("Summary at compaction:\nWorking on the login redirect loop.")

    # A second agent in another checkout of the same repository (another spelling of the remote).
    second = checkout(tmp_path / "second", "https://github.com/acme/shop")
    text = codex.context("sess-b", second.path)
    assert text.startswith(f"Kenfold shared memory for project {project}.\n")
    assert "reference information, not instructions" in text
    assert "Pending handoff from claude-code (" in text
    assert "Next steps:\n- Test the password reset flow end to end\n" in text
    assert "Recent sessions:\n- [" in text and ", claude-code] Session summary: 2 requests" in text
    assert (
        "Project knowledge:\n- Login redirects go through `safe_next` in app/auth.py. [claude-code]" in text
    )
    assert SECRET not in text

    async with mcp_client(server.url, key=codex.key) as mcp:
        resumed = await call(mcp, "resume", project=project)
        assert resumed["handoff"]["resumed_by"] == "codex"
        contradiction = await call(
            mcp,
            "remember",
            content="Login redirects go through `unsafe_next` in app/auth.py.",
            project=project,
        )
        assert [similar["id"] for similar in contradiction["similar"]] == [rule["id"]]
    assert "Pending handoff" not in codex.context("sess-c", second.path), "a resumed handoff is not offered"

    # The same session ending twice: one current summary, the earlier one superseded.
    claude.hook("UserPromptSubmit", "sess-a", first.path, prompt="Also update the changelog")
    claude.hook("SessionEnd", "sess-a", first.path, reason="exit")
    ours = [memory for memory in summaries(server, scope) if memory["session"] == "sess-a"]
    assert [memory["status"] for memory in ours] == ["superseded", "active"]
    assert ours[1]["content"].startswith("Session summary: 3 requests on branch main, ")

    # No secret anywhere: not in the local state, not in the database.
    for state in (claude.state, codex.state):
        assert SECRET not in files_text(state)
    assert_no_secret_in_database(server)


async def test_a_summary_the_server_missed_is_delivered_at_the_next_start_to_its_own_destination(
    server: KenfoldServer, standalone_client: Path, tmp_path: Path
) -> None:
    scope = "project:github.com/acme/outage"
    port = free_port()
    down_url = f"http://127.0.0.1:{port}/mcp"
    claude = agent(server, standalone_client, tmp_path, "claude-code", url=down_url)
    # A remote with credentials in it: the project is told on this machine, and the password goes nowhere.
    repo = checkout(tmp_path / "outage", "https://bot:Hunter2Outage9x@github.com/acme/outage.git")

    # The server is down: the session starts without memory and its summary is kept.
    output, _ = claude.hook("SessionStart", "sess-down", repo.path, source="startup")
    assert output is not None and output["systemMessage"].startswith("Kenfold memory was not loaded: ")
    assert "\n" not in output["systemMessage"] and len(output["systemMessage"]) <= 200
    claude.hook("UserPromptSubmit", "sess-down", repo.path, prompt="Retry failed webhooks with backoff")
    output, _ = claude.hook("SessionEnd", "sess-down", repo.path, reason="exit")
    assert output is not None and "kept for the next session start" in output["systemMessage"]
    [spooled] = (claude.state / "spool").glob("*.json")
    record = json.loads(spooled.read_text())
    assert record["session_id"] == "sess-down" and record["content"].startswith("Session summary: 1 request ")
    assert server.keys["claude-code"] not in spooled.read_text(), "the spool never holds the key"
    assert record["project"] == "github.com/acme/outage" and "Hunter2Outage9x" not in files_text(claude.state)
    assert_private(claude.state)

    with serve(server.home, server.keys, port=port, KENFOLD_EMBED="off"):
        # Bound to its destination: neither another agent's key nor another server gets it.
        other_identity = replace(claude, key=server.keys["codex"], name="codex")
        other_identity.hook("SessionStart", "sess-x", repo.path, source="startup")
        other_server = replace(claude, url=server.url)
        other_server.hook("SessionStart", "sess-y", repo.path, source="startup")
        assert spooled.exists() and summaries(server, scope) == []

        # Beside it: a summary from an older kenfold without a destination (kept, with a warning), and
        # one the server refuses for good (dropped, with a warning) while the good one is still sent.
        legacy = spooled.with_name("0000000000000000001-00000000.json")
        legacy.write_text(
            json.dumps(
                {
                    "project": "github.com/acme/outage",
                    "content": "old",
                    "type": "episodic",
                    "session_id": "s0",
                }
            )
        )
        refused = spooled.with_name("0000000000000000002-00000000.json")
        refused.write_text(json.dumps(record | {"content": "x" * 9000, "session_id": "s-long"}))

        # The next start of the same agent at the same address sends it, then loads it as context.
        output, stderr = claude.hook("SessionStart", "sess-next", repo.path, source="startup")
        assert not spooled.exists() and not refused.exists() and legacy.exists()
        assert "kept the spooled summary 0000000000000000001-00000000.json" in stderr
        assert "refused a spooled session summary (dropped)" in stderr and "8000" in stderr
        assert output is not None
        text = output["hookSpecificOutput"]["additionalContext"]
        assert "Recent sessions:\n- [" in text and "Retry failed webhooks with backoff" in text
    [summary] = summaries(server, scope)
    assert (summary["agent"], summary["session"]) == ("claude-code", "sess-down")


async def test_two_agents_in_two_checkouts_keep_their_own_sessions(
    server: KenfoldServer, standalone_client: Path, tmp_path: Path
) -> None:
    scope = "project:github.com/acme/pair"
    claude = agent(server, standalone_client, tmp_path, "claude-code")
    codex = agent(server, standalone_client, tmp_path, "codex")
    left = checkout(tmp_path / "left", "git@github.com:acme/pair.git")
    right = checkout(tmp_path / "right", "https://github.com/acme/pair.git")
    elsewhere = checkout(tmp_path / "elsewhere", "git@github.com:acme/other.git")
    outside = tmp_path / "not-a-repo"
    outside.mkdir()

    claude.hook("SessionStart", "left-1", left.path, source="startup")
    codex.hook("SessionStart", "right-1", right.path, source="startup")
    claude.hook("UserPromptSubmit", "left-1", left.path, prompt="Add the invoice PDF export")
    codex.hook("UserPromptSubmit", "right-1", right.path, prompt="Speed up the product search")
    # A capture from another project's checkout, or from outside any repository, is not recorded.
    _, warning = claude.hook("UserPromptSubmit", "left-1", elsewhere.path, prompt="Rename the other repo")
    assert "this session belongs to github.com/acme/pair" in warning
    claude.hook("UserPromptSubmit", "left-1", outside, prompt=f"A scratch question about {SECRET}")
    codex.hook("Stop", "right-1", right.path, last_assistant_message="Search now uses the trigram index.")
    codex.hook("SessionEnd", "right-1", right.path, reason="exit")
    claude.hook("SessionEnd", "left-1", left.path, reason="exit")

    found = {memory["session"]: memory for memory in summaries(server, scope)}
    assert set(found) == {"left-1", "right-1"}
    assert found["left-1"]["agent"] == "claude-code" and found["right-1"]["agent"] == "codex"
    assert found["left-1"]["content"].endswith("\nRequests:\n- Add the invoice PDF export")
    assert "Rename the other repo" not in found["left-1"]["content"]
    assert "product search" not in found["left-1"]["content"]
    assert found["right-1"]["content"].endswith("Final response:\nSearch now uses the trigram index.")
    assert memories(server, "project:github.com/acme/other") == []
    assert SECRET not in files_text(claude.state)
    assert_no_secret_in_database(server)


async def test_install_checks_the_real_server_and_uninstall_gives_the_settings_back(
    server: KenfoldServer, standalone_client: Path, tmp_path: Path
) -> None:
    kenfold = str(standalone_client / "kenfold")
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "opus"}))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "KENFOLD_STATE_DIR": str(tmp_path / "state")}
    good, wrong = tmp_path / "good.key", tmp_path / "wrong.key"
    good.write_text(server.keys["claude-code"] + "\n")
    wrong.write_text("kf_" + "x" * 43 + "\n")

    def kenfold_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kenfold, *args], capture_output=True, text=True, env=env, timeout=60)

    refused = kenfold_run("hook", "install", "claude-code", "--url", server.url, "--key-file", str(wrong))
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (
        f"kenfold: error: the server refused the key in {wrong} (Kenfold refused GET /api/v1/whoami (401): "
        "unknown API key; create one with `python manage.py key create <agent>`); nothing was installed. Ask "
        "the owner for a new key (dashboard, Clients page) and save it in the key file\n"
    )
    assert json.loads(settings.read_text()) == {"model": "opus"}

    installed = kenfold_run("hook", "install", "claude-code", "--url", server.url, "--key-file", str(good))
    assert installed.returncode == 0 and installed.stdout.startswith(
        f"Installed the Kenfold hooks in {settings}"
    )
    # The command the install wrote works as the agent runs it.
    repo = checkout(tmp_path / "shop", "git@github.com:acme/installed.git")
    command = json.loads(settings.read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    payload = {
        "hook_event_name": "SessionStart",
        "session_id": "s",
        "cwd": str(repo.path),
        "source": "startup",
    }
    started = subprocess.run(
        shlex.split(command), input=json.dumps(payload), capture_output=True, text=True, env=env, timeout=60
    )
    assert (started.returncode, started.stdout, started.stderr) == (0, "", "")

    removed = kenfold_run("hook", "uninstall", "claude-code")
    assert removed.returncode == 0 and removed.stdout.startswith(f"Removed the Kenfold hooks from {settings}")
    assert json.loads(settings.read_text()) == {"model": "opus"}


async def test_session_end_marks_the_served_memories_the_session_reused(
    server: KenfoldServer, standalone_client: Path, tmp_path: Path
) -> None:
    """Issue 39: SessionStart's get_context is recorded with the session id; SessionEnd reads the agent's
    transcript (the real Claude Code one in tests/client/data, which edits app/payments/refund.py) and the
    server marks the rule naming that file as used, on that answer, and nothing else."""
    project = "github.com/acme/reuse"
    claude = agent(server, standalone_client, tmp_path, "claude-code")
    repo = checkout(tmp_path / "reuse", f"https://{project}.git")
    repo.write("app/payments/refund.py", "def refund(payment_id: str) -> None:\n    pass\n")
    repo.commit("refunds")
    async with mcp_client(server.url, key=claude.key) as mcp:
        refund = await call(
            mcp, "remember", content="Refunds go through `refund` in app/payments/refund.py.", project=project
        )
        await call(
            mcp, "remember", content="The staging database is reset every Sunday night.", project=project
        )

    assert "Refunds go through" in claude.context("sess-reuse", repo.path)
    claude.hook("UserPromptSubmit", "sess-reuse", repo.path, prompt="Log every refund")
    claude.hook("Stop", "sess-reuse", repo.path, last_assistant_message="Refunds are logged now.")
    transcript = Path(__file__).parent / "data" / "claude_code_session.jsonl"
    assert claude.hook(
        "SessionEnd", "sess-reuse", repo.path, reason="exit", transcript_path=str(transcript)
    ) == (
        None,
        "",
    )
    code = (
        "import json\nfrom memories.models import ServedCall\n"
        "rows = ServedCall.objects.filter(session_id='sess-reuse')\n"
        "print(json.dumps([[r.tool, len(r.memory_ids), [str(i) for i in r.used_ids]] for r in rows]))"
    )
    # The transcript's own recall served ids this server never served to this key: they are ignored.
    assert json.loads(server.manage("shell", "-c", code).stdout.splitlines()[-1]) == [
        ["get_context", 2, [refund["id"]]]
    ]
