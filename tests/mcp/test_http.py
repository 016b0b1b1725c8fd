"""Spec §2 "Cross-agent", end to end: two agents with their own API keys share one memory over MCP.

Real server, real HTTP, the SDK's own client, in both protocol eras. Embeddings are not configured, so
search is full-text only.
"""

from datetime import UTC, datetime, timedelta

import pytest

from .support import AGENT_A, AGENT_B, MODES, KenfoldServer, call, call_error, mcp_client

pytestmark = pytest.mark.anyio

RULE = "The public API paginates with cursors; offset pagination was removed in v2"
RULE_VARIANT = "  the PUBLIC api paginates with   cursors; offset pagination was removed in V2.  "


@pytest.mark.parametrize("mode", MODES)
async def test_two_agents_share_one_project_memory(server: KenfoldServer, mode: str) -> None:
    https_remote = f"https://github.com/Org/Shared-{mode}.git"
    scp_remote = f"git@github.com:org/shared-{mode}"
    scope = f"project:github.com/org/shared-{mode}"
    # Agent A's client claims another name: attribution must come from the key alone.
    async with (
        mcp_client(server.url, key=server.keys[AGENT_A], mode=mode, client_name="Impostor Agent") as agent_a,
        mcp_client(server.url, key=server.keys[AGENT_B], mode=mode) as agent_b,
    ):
        rule = await call(agent_a, "remember", content=RULE, project=https_remote)
        assert rule == {"id": rule["id"], "type": "project", "status": "active", "deduplicated": False}

        # Same statement up to case, whitespace and a trailing period, through the other remote spelling.
        again = await call(agent_a, "remember", content=RULE_VARIANT, project=scp_remote)
        assert again == {"id": rule["id"], "type": "project", "status": "active", "deduplicated": True}

        before = datetime.now(UTC)
        handoff = await call(
            agent_a,
            "handoff",
            summary="Cursor pagination is done for /items; /orders still uses offsets",
            next_steps=["Port /orders to cursors", "Delete the offset helpers"],
            project=scp_remote,
        )
        expires_at = datetime.fromisoformat(handoff["expires_at"])
        assert before + timedelta(days=7) - timedelta(minutes=1) < expires_at < before + timedelta(days=7, minutes=1)

        found = (await call(agent_b, "recall", query="how does the API paginate", project=https_remote))["memories"]
        assert [m["id"] for m in found] == [rule["id"]]
        assert found[0]["source_agent"] == AGENT_A
        assert found[0]["scope"] == scope and found[0]["content"] == RULE
        assert 0 < found[0]["score"] <= 1

        context = await call(agent_b, "get_context", project=scp_remote, task="paginate the API with cursors")
        assert [m["id"] for m in context["project"]] == [rule["id"]]
        assert rule["id"] not in [m["id"] for m in context["relevant"]], "each memory appears once"
        assert context["handoff"]["id"] == handoff["id"]
        assert context["handoff"]["next_steps"] == ["Port /orders to cursors", "Delete the offset helpers"]
        assert context["handoff"]["source_agent"] == AGENT_A
        # Optional fields are left out rather than sent as null.
        assert set(context["project"][0]) == {"id", "type", "scope", "content", "source_agent", "trust", "created_at"}
        assert "resumed_by" not in context["handoff"] and "truncated" not in context

        resumed = (await call(agent_b, "resume", project=https_remote))["handoff"]
        assert resumed["id"] == handoff["id"] and resumed["resumed_by"] == AGENT_B
        assert "handoff" not in await call(agent_a, "get_context", project=https_remote)
        # Still returned by resume, and the first agent to resume it stays on record.
        assert (await call(agent_a, "resume", project=scp_remote))["handoff"]["resumed_by"] == AGENT_B

        replacement = await call(
            agent_b,
            "remember",
            content="The public API paginates with cursors only; the v1 offset endpoints are gone",
            project=https_remote,
            supersedes=rule["id"],
        )
        assert replacement["status"] == "active" and replacement["type"] == "project"
        found = (await call(agent_a, "recall", query="API paginates cursors", project=scp_remote))["memories"]
        assert [m["id"] for m in found] == [replacement["id"]]

        message = await call_error(
            agent_a, "remember", content="Pagination uses page tokens", project=scp_remote, supersedes=rule["id"]
        )
        assert "no longer active" in message and "use recall" in message

        message = await call_error(
            agent_a, "remember", content="Pagination uses page tokens", supersedes=replacement["id"]
        )
        assert "pass the same project" in message

        forgotten = await call(agent_a, "forget", id=replacement["id"], reason="the API was rewritten")
        assert forgotten == {"id": replacement["id"], "status": "deleted"}
        assert await call(agent_a, "forget", id=replacement["id"]) == forgotten
        assert (await call(agent_b, "recall", query="API paginates cursors", project=scp_remote))["memories"] == []


@pytest.mark.parametrize("mode", MODES)
async def test_a_preference_is_served_only_after_the_owner_approves_it(server: KenfoldServer, mode: str) -> None:
    project = f"github.com/org/preferences-{mode}"
    text = f"The user prefers tabs over spaces in {mode} code"
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as agent:
        proposed = await call(agent, "remember", content=text, type="preference", project=project)
        assert proposed["status"] == "proposed"
        assert (await call(agent, "get_context", project=project))["preferences"] == []
        assert (await call(agent, "recall", query="tabs spaces", project=project))["memories"] == []

        server.manage("memory", "approve", proposed["id"])

        preferences = (await call(agent, "get_context", project=project))["preferences"]
        assert [(p["id"], p["trust"], p["content"]) for p in preferences] == [(proposed["id"], "user", text)]


@pytest.mark.parametrize("mode", MODES)
async def test_bad_input_gets_an_actionable_error_and_changes_nothing(server: KenfoldServer, mode: str) -> None:
    project = f"github.com/org/bad-input-{mode}"
    token = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as agent:
        message = await call_error(agent, "forget", id="not-a-uuid")
        assert '"not-a-uuid" is not a memory id' in message

        message = await call_error(agent, "remember", content="Notes", project=project, supersedes="not-a-uuid")
        assert "is not a memory id" in message

        message = await call_error(agent, "remember", content=f"Deploy with token {token}", project=project)
        assert "GitHub token" in message and token not in message and token[:12] not in message

        message = await call_error(agent, "remember", content="Use ruff for linting", project="/home/me/repo")
        assert "is a local path" in message and "git remote URL" in message

        message = await call_error(agent, "recall", query="linting", limit=500)
        assert "limit" in message, "schema validation rejects out-of-range arguments before the service"

        assert (await call(agent, "recall", query="deploy token ruff linting", project=project))["memories"] == []
