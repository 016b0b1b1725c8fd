"""The MCP SDK's client as agents use it (Streamable HTTP, the API key in a header), for the tests and the
benchmarks' simulated agents (bench/latency, bench/load, bench/cluster)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Implementation


@asynccontextmanager
async def mcp_client(
    url: str, *, key: str | None, mode: str = "auto", client_name: str = "pytest", timeout: float = 30
) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, sending the API key the way agents configure it (a header).

    The latency benchmark's simulated agents are these clients too (bench/latency/phases.py).
    """
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        Client(
            streamable_http_client(url, http_client=http),
            mode=mode,
            client_info=Implementation(name=client_name, version="1.0"),
        ) as client,
    ):
        yield client


async def call(
    client: Client, tool: str, meta: dict[str, Any] | None = None, **arguments: Any
) -> dict[str, Any]:
    """A tool's structured result; fails (AssertionError) if the tool reported an error."""
    result = await client.call_tool(tool, arguments, meta=meta)
    assert not result.is_error, f"{tool} failed: {tool_error_text(result)}"
    assert result.structured_content is not None
    return result.structured_content


def tool_error_text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)
