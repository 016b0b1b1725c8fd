"""The published tool surface, byte for byte: what `tools/list` gives the SDK's own client, against a
recording (data/tools_list.json) made before the tools became module-level functions.

Agents learn Kenfold from this listing, so any change to a name, title, description, input or output
schema or annotation must be on purpose. When it is, record the listing again and commit the file with
the change:

    .venv/bin/python -m tests.mcp.test_tools_list
"""

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from mcp import Client

RECORDING = Path(__file__).parent / "data" / "tools_list.json"


async def _listed() -> list[dict[str, Any]]:
    from edge.mcp.server import build_server

    async with Client(build_server(agent="tools-list")) as client:
        tools = (await client.list_tools()).tools
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]


def _as_text(listing: list[dict[str, Any]]) -> str:
    return json.dumps(listing, indent=2, ensure_ascii=False) + "\n"


def test_tools_list_is_the_recorded_one() -> None:
    # Listing runs no tool, so no database is needed; asyncio.run gives the client its own loop.
    listed = asyncio.run(_listed())
    recorded = json.loads(RECORDING.read_text())
    assert [tool["name"] for tool in listed] == [tool["name"] for tool in recorded]
    for now, then in zip(listed, recorded, strict=True):
        assert now == then, f"{now['name']} changed: record again only if that is on purpose"
    assert _as_text(listed) == RECORDING.read_text()


if __name__ == "__main__":
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    django.setup()
    RECORDING.write_text(_as_text(asyncio.run(_listed())))
    print(f"recorded {RECORDING}")
