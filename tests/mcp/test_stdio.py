"""MCP over stdio: the SDK's stdio client spawning `manage.py mcp` on the home of a running HTTP server."""

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

import psycopg
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import Implementation

from bench.support.processes import REPO, home_database, kenfold_env
from edge.backpressure import DATABASE_STOPPED
from kenfold.embedded_db import EmbeddedCluster

from .support import (
    AGENT_A,
    MODES,
    TOOL_NAMES,
    KenfoldServer,
    call,
    mcp_client,
    stdio_tool_calls,
    tool_error_text,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server_home(cluster_home: Path) -> Path:
    """A cluster of the module's own: tests stop the database under the servers, and start it from stdio."""
    return cluster_home


@asynccontextmanager
async def stdio_session(
    server: KenfoldServer,
    *,
    mode: str,
    client_name: str = "pytest",
    errlog: IO[str] | None = None,
    **env: str,
) -> AsyncIterator[Client]:
    # The stdio client starts the child with a minimal environment (HOME, PATH, ...), as desktop clients do:
    # everything Kenfold needs is passed explicitly, the way a client's configuration would.
    params = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp"],
        cwd=REPO,
        env={
            "KENFOLD_HOME": str(server.home),
            "KENFOLD_EMBEDDED_DURABLE": "false",
            "DJANGO_SETTINGS_MODULE": "kenfold.settings",
            # The run's server user (`make test` as root names a fresh one): the child must not create
            # and use the default one for a cluster that runs as another.
            **{k: v for k, v in os.environ.items() if k == "KENFOLD_EMBEDDED_SERVER_USER"},
            # The server's database, when it is not the home's own cluster (tests/conftest.py's module_home).
            **home_database(server.home),
            **env,
        },
    )
    async with Client(
        stdio_client(params, errlog=errlog),
        mode=mode,
        client_info=Implementation(name=client_name, version="1.0"),
    ) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_shares_the_database_and_writes_as_kenfold_agent(
    server: KenfoldServer, mode: str
) -> None:
    project = f"github.com/org/stdio-{mode}"
    async with stdio_session(server, mode=mode, client_name="Some Client", KENFOLD_AGENT="codex") as client:
        assert [tool.name for tool in (await client.list_tools()).tools] == TOOL_NAMES
        stored = await call(
            client, "remember", content=f"Migrations are squashed before {mode} releases", project=project
        )
        found = (await call(client, "recall", query="squashed migrations", project=project))["memories"]
        assert (found[0]["id"], found[0]["source_agent"]) == (stored["id"], "codex")

        handoff = await call(
            client,
            "handoff",
            summary="Squashing is half done",
            next_steps=["Squash app memories"],
            project=project,
        )
        resumed = (await call(client, "resume", project=project))["handoff"]
        assert (resumed["id"], resumed["next_steps"], resumed["resumed_by"]) == (
            handoff["id"],
            ["Squash app memories"],
            "codex",
        )

    # Same database as the HTTP server: another agent finds the memory there.
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as agent:
        recalled = (await call(agent, "recall", query="squashed migrations", project=project))["memories"]
    assert {m["id"]: m["source_agent"] for m in recalled}.get(stored["id"]) == "codex"


@pytest.mark.parametrize("mode", MODES)
async def test_without_kenfold_agent_writes_are_attributed_to_the_client_name(
    server: KenfoldServer, mode: str
) -> None:
    project = f"github.com/org/stdio-client-name-{mode}"
    async with stdio_session(server, mode=mode, client_name="Claude Code") as client:
        await call(client, "remember", content="Fixtures live in tests/fixtures", project=project)
        found = (await call(client, "recall", query="fixtures", project=project))["memories"]
    assert [m["source_agent"] for m in found] == ["claude-code"]


async def test_a_stopped_database_is_reported_with_how_to_start_it_not_internal_and_logged(
    server: KenfoldServer, tmp_path: Path
) -> None:
    with open(tmp_path / "stderr.log", "w+") as errlog:
        async with stdio_session(server, mode="auto", errlog=errlog) as client:
            await call(client, "recall", query="warm up")
            # The owner stops the database under a running server: not a bug of Kenfold's; the agent is told
            # who stopped it and how it comes back.
            server.manage("db", "stop")
            try:
                result = await client.call_tool("recall", {"query": "anything"})
            finally:
                server.manage("db", "start")
            assert result.is_error
            assert tool_error_text(result) == f"recall: {DATABASE_STOPPED}"
            assert "psycopg" not in tool_error_text(result).lower()
            # The same process recovers once the database is back.
            await call(client, "recall", query="anything")
        errlog.seek(0)
        log = errlog.read()
    assert "MCP tool recall: database unavailable" in log and "OperationalError" in log
    assert "MCP tool recall failed" not in log, "not logged as an internal failure"


def test_stdout_carries_only_the_protocol(server: KenfoldServer) -> None:
    # With the database stopped, the command starts it itself: that start-up must not print to stdout either.
    server.manage("db", "stop")
    exchange = stdio_tool_calls([("recall", {"query": "x"})], env=kenfold_env(server.home))
    replies = exchange.replies
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[0]["result"]["serverInfo"]["name"] == "kenfold"
    assert replies[1]["result"]["isError"] is False
    assert exchange.rest == "", "nothing but JSON-RPC replies on stdout"
    assert EmbeddedCluster(home=server.home).status().running, "the command started the database"


def test_a_bad_kenfold_agent_stops_the_command_with_a_clear_message(server: KenfoldServer) -> None:
    result = server.manage("mcp", check=False, KENFOLD_AGENT="Not Valid")
    assert result.returncode != 0 and result.stdout == ""
    assert "KENFOLD_AGENT is not a valid agent name" in result.stderr


def test_the_command_never_migrates(server: KenfoldServer) -> None:
    # An empty database next to the server's: cheaper than a cluster of its own.
    cluster = EmbeddedCluster(home=server.home)
    with psycopg.connect(**cluster.superuser_conninfo(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE unmigrated OWNER "{cluster.app_role}"')
    url = f"postgres://{cluster.app_role}@/unmigrated?host={cluster.socket_dir}&port={cluster.port}"
    for _ in range(2):
        result = server.manage("mcp", check=False, KENFOLD_DATABASE_URL=url)
        # Refused the second time too: the first run did not migrate.
        assert result.returncode != 0 and result.stdout == ""
        assert "the database schema is out of date: run `python manage.py migrate`" in result.stderr
