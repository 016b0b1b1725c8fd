"""An embedding provider that fails after remember commits, seen through MCP over HTTP: the agent gets the
stored id, not a tool error, and once the provider is back the backfill makes the memory findable by
meaning."""

from pathlib import Path

import pytest

from bench.support.processes import manage
from tests.provider_servers import Received, Reply, openai_embeddings, provider_server

from .support import AGENT_A, call, mcp_client, recall_ids, serve

pytestmark = pytest.mark.anyio

PROJECT = "github.com/acme/outage"
MEMORY = "Payments are idempotent on the event id."
# Shares no word with MEMORY: only the vectors can find it (tests/provider_servers.py's synonyms).
VECTOR_ONLY_QUERY = "how do we avoid charging twice"


async def test_remember_returns_the_stored_id_while_the_embedding_provider_fails(module_home: Path) -> None:
    provider_up = False

    def embeddings(received: Received) -> Reply:
        return openai_embeddings(received) if provider_up else Reply(status=500, json={"error": "crashed"})

    home = module_home
    with provider_server(embeddings) as provider:
        env = {"KENFOLD_EMBED_URL": provider.url, "KENFOLD_EMBED_MODEL": "fake"}
        key = manage(home, "key", "create", AGENT_A, **env).stdout.strip()
        with serve(home, {AGENT_A: key}, **env) as server:
            async with mcp_client(server.url, key=key) as client:
                stored = await call(client, "remember", content=MEMORY, project=PROJECT)
                assert stored == {
                    "id": stored["id"],
                    "type": "project",
                    "status": "active",
                    "deduplicated": False,
                }
                assert provider.received, "the provider was asked, and failed"
                assert await recall_ids(client, VECTOR_ONLY_QUERY, project=PROJECT) == []

                provider_up = True
                server.manage("reindex", **env)
                assert await recall_ids(client, VECTOR_ONLY_QUERY, project=PROJECT) == [stored["id"]]
