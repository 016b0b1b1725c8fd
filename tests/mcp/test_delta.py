"""Delta context and exact load over MCP (issue 17, items 4 and 5): a real server, real HTTP, the SDK's own
client. The state is carried by the caller, so it works from a new connection (another HTTP session)."""

import json

import pytest
from mcp import Client

from .support import AGENT_A, AGENT_B, MODES, KenfoldServer, call, call_error, mcp_client
from .test_stdio import stdio_session

pytestmark = pytest.mark.anyio

RULES = [
    "Every REST endpoint is versioned under /api/v1 and documented in the OpenAPI schema.",
    "Money is stored as integer minor units with an ISO 4217 currency code, never as floats.",
    "Background jobs are idempotent: a retried job must not charge a customer twice.",
    "Database access goes through selectors for reads and services for writes.",
    "Tests run against the real PostgreSQL, never against mocks of the ORM.",
]


async def get_context(client: Client, **arguments: object) -> tuple[dict, int]:
    """The structured result and the size in bytes of the text the model reads."""
    result = await client.call_tool("get_context", arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    return result.structured_content, len(text.encode())


def items(context: dict) -> list[dict]:
    handoff = [context["handoff"]] if "handoff" in context else []
    sections = ("preferences", "recent", "project", "relevant")
    return [*handoff, *(item for section in sections for item in context[section])]


@pytest.mark.parametrize("mode", MODES)
async def test_get_context_twice_with_state_sends_only_references(server: KenfoldServer, mode: str) -> None:
    project = f"git@github.com:acme/delta-{mode}.git"
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as writer:
        ids = [(await call(writer, "remember", content=rule, project=project))["id"] for rule in RULES]
        await call(
            writer,
            "handoff",
            summary="Half of the invoice exporter is done",
            next_steps=["Render PDFs", "Email them"],
            project=project,
        )
    task = "add a REST endpoint that refunds a payment"
    async with mcp_client(server.url, key=server.keys[AGENT_B], mode=mode) as agent:
        first, first_size = await get_context(agent, project=project, task=task)
        assert all("content" in item and item["content_hash"] for item in items(first))
        assert {item["id"] for item in first["project"]} == set(ids)
    # A new connection: another HTTP session, as after a client restart. The state alone carries over.
    async with mcp_client(server.url, key=server.keys[AGENT_B], mode=mode) as agent:
        second, second_size = await get_context(agent, project=project, task=task, state=first["state"])
    print(
        f"\nget_context response: first call {first_size} bytes, second call with state {second_size} bytes"
    )
    held = {item["id"]: item["content_hash"] for item in items(first)}
    assert {item["id"]: item["content_hash"] for item in items(second)} == held
    assert all(set(item) == {"id", "content_hash"} for item in items(second))
    assert second["removed"] == [] and second["state"] != first["state"]
    assert second_size * 2 < first_size, (first_size, second_size)


async def test_changes_since_the_state_and_exact_load(server: KenfoldServer) -> None:
    project = "github.com/acme/delta-changes"
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as agent:
        old, kept = [
            (await call(agent, "remember", content=rule, project=project))["id"] for rule in RULES[:2]
        ]
        first, _ = await get_context(agent, project=project)
        new = await call(
            agent,
            "remember",
            content="Money is stored in minor units; currencies follow ISO 4217.",
            project=project,
            supersedes=old,
        )
        second, _ = await get_context(agent, project=project, state=first["state"])
        assert second["removed"] == [old]
        by_id = {item["id"]: item for item in second["project"]}
        assert by_id[new["id"]]["content"].startswith("Money is stored in minor units")
        assert by_id[kept] == {"id": kept, "content_hash": by_id[kept]["content_hash"]}

        # Exact load: whole memories with their hashes; a known hash comes back unchanged, without text.
        unknown = "0190b6a2-0000-7000-8000-000000000000"
        loaded = await call(agent, "recall", ids=[kept, new["id"], old, unknown], project=project)
        assert [item["id"] for item in loaded["memories"]] == [kept, new["id"]]
        assert loaded["memories"][0]["content"] == RULES[1] and loaded["missing"] == [old, unknown]
        hashes = {item["id"]: item["content_hash"] for item in loaded["memories"]}
        assert hashes[kept] == by_id[kept]["content_hash"], "the same view has the same hash everywhere"
        again = await call(agent, "recall", ids=[kept], known_hashes={kept: hashes[kept]}, project=project)
        assert again == {"memories": [{"id": kept, "content_hash": hashes[kept], "changed": False}]}

        # A bad, altered or foreign state is a tool error that says what to do, never an empty start.
        assert "without state" in await call_error(agent, "get_context", project=project, state="c1.x.y")
        prefix, snapshot, mac = second["state"].split(".")
        altered = f"{prefix}.{snapshot}.{'A' if mac[0] != 'A' else 'B'}{mac[1:]}"
        assert "signature does not match" in await call_error(
            agent, "get_context", project=project, state=altered
        )
        message = await call_error(
            agent, "get_context", project="github.com/acme/other", state=second["state"]
        )
        assert "another project" in message
        assert "either query" in await call_error(agent, "recall", query="money", ids=[kept])


async def test_a_state_from_an_http_session_works_over_stdio(server: KenfoldServer) -> None:
    """The state is carried by the caller and checked against the database, so any transport honours it."""
    project = "github.com/acme/delta-stdio"
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as agent:
        rule = (await call(agent, "remember", content=RULES[3], project=project))["id"]
        first, _ = await get_context(agent, project=project)
    async with stdio_session(server, mode="auto") as local:
        second = await call(local, "get_context", project=project, state=first["state"])
    assert second["project"] == [{"id": rule, "content_hash": first["project"][0]["content_hash"]}]
    assert second["removed"] == []
