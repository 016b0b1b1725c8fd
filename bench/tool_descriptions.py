"""The size of the MCP tool list an agent loads into its context: tool descriptions and parameter
descriptions in characters, the part most clients show the model (name, description, input schema) and
the whole `tools/list` entry (with annotations and output schema) in bytes, per tool and in total.

    .venv/bin/python bench/tool_descriptions.py [--json]

Builds the server in-process (no database is touched: listing tools runs no tool).
"""

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _parameter_descriptions(schema: Any) -> int:
    """Characters of every `description` inside an input schema (nested $defs included)."""
    if isinstance(schema, dict):
        own = len(schema["description"]) if isinstance(schema.get("description"), str) else 0
        return own + sum(
            _parameter_descriptions(value) for key, value in schema.items() if key != "description"
        )
    if isinstance(schema, list):
        return sum(_parameter_descriptions(item) for item in schema)
    return 0


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


async def measure() -> dict[str, Any]:
    import django

    django.setup()
    from edge.mcp.server import build_server

    tools = await build_server().list_tools()
    rows = []
    for tool in tools:
        listed = tool.model_dump(mode="json", by_alias=True, exclude_none=True)
        shown = {key: listed[key] for key in ("name", "description", "inputSchema") if key in listed}
        rows.append(
            {
                "tool": tool.name,
                "description_chars": len(tool.description or ""),
                "parameter_description_chars": _parameter_descriptions(tool.input_schema),
                "model_facing_bytes": _json_bytes(shown),
                "listing_bytes": _json_bytes(listed),
            }
        )
    total = {
        key: sum(row[key] for row in rows)
        for key in ("description_chars", "parameter_description_chars", "model_facing_bytes", "listing_bytes")
    }
    return {"tools": rows, "total": {"tools": len(rows), **total}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    os.environ.setdefault("KENFOLD_LOG_LEVEL", "warning")
    report = asyncio.run(measure())
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{'tool':<12} {'description':>11} {'parameters':>10} {'name+desc+input':>15} {'tools/list':>10}")
    for row in [*report["tools"], {"tool": "total", **report["total"]}]:
        print(
            f"{row['tool']:<12} {row['description_chars']:>11} {row['parameter_description_chars']:>10} "
            f"{row['model_facing_bytes']:>15} {row['listing_bytes']:>10}"
        )


if __name__ == "__main__":
    main()
