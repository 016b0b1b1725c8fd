"""Write quotas hold across two server processes on one database (issue 38 item 2): the count lives in
PostgreSQL, so a key cannot double its quota by spreading its writes over servers, even at once."""

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from bench.support.processes import manage

from .support import AGENT_A, KenfoldServer, call, mcp_client, serve, tool_error_text

pytestmark = pytest.mark.anyio

PROJECT = "git@github.com:acme/quota.git"
PER_DAY = 6


@pytest.fixture(scope="module")
def two_servers(module_home: Path) -> Iterator[tuple[KenfoldServer, KenfoldServer]]:
    limits = {"KENFOLD_QUOTA_MEMORIES_PER_DAY": str(PER_DAY), "KENFOLD_QUOTA_WRITES_PER_MINUTE": "0"}
    keys = {AGENT_A: manage(module_home, "key", "create", AGENT_A).stdout.strip()}
    with serve(module_home, keys, **limits) as first, serve(module_home, keys, **limits) as second:
        yield first, second


async def test_the_daily_quota_holds_across_two_servers_even_for_concurrent_writes(
    two_servers: tuple[KenfoldServer, KenfoldServer],
) -> None:
    first, second = two_servers
    key = first.keys[AGENT_A]
    async with mcp_client(first.url, key=key) as one, mcp_client(second.url, key=key) as two:
        for number, client in enumerate([one, two, one, two]):
            await call(client, "remember", content=f"Quota fact number {number}.", project=PROJECT)
        results: list = []

        async def remember(client, number: int) -> None:
            results.append(
                await client.call_tool(
                    "remember", {"content": f"Concurrent quota fact {number}.", "project": PROJECT}
                )
            )

        async with anyio.create_task_group() as group:
            for number in range(6):
                group.start_soon(remember, one if number % 2 else two, number)
    stored = [result for result in results if not result.is_error]
    refused = [tool_error_text(result) for result in results if result.is_error]
    assert len(stored) == PER_DAY - 4 and len(refused) == 4
    for message in refused:
        assert f"created {PER_DAY} memories today (UTC); its limit is {PER_DAY} memories per day" in message
        assert "KENFOLD_QUOTA_MEMORIES_PER_DAY" in message and "resets at 00:00:00 UTC, in " in message
        assert "Nothing was written" in message and "manage.py key quota kf_" in message
    listing = first.manage("memory", "list", "--scope", PROJECT, "--limit", "50").stdout
    assert listing.count("quota fact") + listing.count("Quota fact") == PER_DAY

    # REST writes share the same count: a docs sync on the other server gets 429 with Retry-After.
    response = httpx.post(
        f"{second.base}/api/v1/docs/sync",
        headers={"Authorization": f"Bearer {key}"},
        json={
            "project": PROJECT,
            "files": [
                {
                    "path": "docs/a.md",
                    "file_hash": "a" * 64,
                    "chunks": [{"heading_path": ["A"], "content": "## A\n\nText."}],
                }
            ],
            "deleted": [],
        },
        timeout=30,
    )
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0
    assert f"its limit is {PER_DAY} memories per day" in response.json()["error"]
    audit = first.manage("audit", "--days", "1").stdout
    assert f"{PER_DAY} created" in audit
