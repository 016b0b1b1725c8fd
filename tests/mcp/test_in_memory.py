"""The tool layer through the SDK's in-memory transport: the SDK's own `Client` connected to `build_server()`
in process, no HTTP and no server process, on the test database.

Each scenario runs under `async_to_sync` from the test's thread, so the tools' thread-sensitive ORM calls
run back in that thread: on the test's connection, inside the transaction rolled back after the test.
"""

from collections.abc import Awaitable, Callable
from contextlib import nullcontext
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from mcp import Client

from access.caller import Caller
from edge.auth import authenticated_as
from edge.mcp.server import build_server
from edge.mcp.tools import READ_ONLY_TOOLS, TOOL_ANNOTATIONS
from memories.models import Memory

pytestmark = pytest.mark.django_db

AGENT = "in-memory-test"
PROJECT = "github.com/acme/in-memory"
RULE = "Refunds go through PaymentService.refund(), never through a direct UPDATE of the payments table."


def in_memory(scenario: Callable[[Client], Awaitable[Any]], *, caller: Caller | None = None) -> Any:
    """Run `scenario` with a client of `build_server()`; with `caller`, as if the HTTP guard had
    authenticated that caller (set before the client starts, so the server's tasks inherit it)."""

    async def connected() -> Any:
        with authenticated_as(caller) if caller else nullcontext():
            async with Client(build_server(agent=AGENT)) as client:
                return await scenario(client)

    return async_to_sync(connected)()


async def call(client: Client, tool: str, **arguments: object) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def test_the_six_tools_are_listed_and_only_the_readers_are_read_only() -> None:
    async def listed(client: Client) -> list:
        return (await client.list_tools()).tools

    tools = in_memory(listed)
    assert {tool.name for tool in tools} == {
        "get_context",
        "recall",
        "remember",
        "handoff",
        "resume",
        "forget",
    }
    read_only = {tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint}
    assert read_only == READ_ONLY_TOOLS
    assert all(tool.description and tool.output_schema for tool in tools)


def test_remember_then_recall_finds_the_memory_in_the_database() -> None:
    async def scenario(client: Client) -> tuple[dict, dict]:
        remembered = await call(client, "remember", content=RULE, project=PROJECT)
        recalled = await call(client, "recall", query="how do I refund a payment?", project=PROJECT)
        return remembered, recalled

    remembered, recalled = in_memory(scenario)
    stored = Memory.objects.get(id=remembered["id"])
    assert (stored.content, stored.scope, stored.source_agent) == (RULE, f"project:{PROJECT}", AGENT)
    assert remembered["status"] == "active"
    assert [(found["id"], found["content"]) for found in recalled["memories"]] == [(remembered["id"], RULE)]


def test_a_tool_error_reaches_the_client_as_a_result_it_can_act_on() -> None:
    async def scenario(client: Client) -> Any:
        return await client.call_tool("remember", {"content": "", "project": PROJECT})

    result = in_memory(scenario)
    assert result.is_error
    assert result.content[0].text == "remember: `content` must not be empty"  # type: ignore[union-attr]
    assert not Memory.objects.exists()


# One call per tool that a full-access caller may make on an empty database.
ANY_CALL = {
    "get_context": {"project": PROJECT},
    "recall": {"query": "refunds", "project": PROJECT},
    "remember": {"content": RULE, "project": PROJECT},
    "handoff": {"summary": "Half-way through the refund rules", "project": PROJECT},
    "resume": {"project": PROJECT},
    "forget": {"id": "01a22cd3-fb12-7f08-8738-778c8375fde5"},
}


def test_a_read_only_caller_is_refused_exactly_the_tools_not_annotated_read_only() -> None:
    async def scenario(client: Client) -> dict[str, Any]:
        return {tool: await client.call_tool(tool, arguments) for tool, arguments in ANY_CALL.items()}

    results = in_memory(scenario, caller=Caller(agent="reader", read_only=True, credential="key:1"))
    assert set(results) == set(TOOL_ANNOTATIONS)
    refused = {tool for tool, result in results.items() if result.is_error}
    assert refused == {tool for tool, hints in TOOL_ANNOTATIONS.items() if not hints.read_only_hint}
    for tool in refused:
        assert (
            results[tool]
            .content[0]
            .text.startswith(  # type: ignore[union-attr]
                f"{tool} is not allowed: this client was granted read-only access"
            )
        )
    assert not Memory.objects.exists()
