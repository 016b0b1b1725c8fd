"""The tool list agents load stays small: a product rule, measured by bench/tool_descriptions.py.

Part of `make test` (it lists the tools in-process, no database, a few seconds); moved here from tests/bench.
"""

import json
import subprocess
import sys
from pathlib import Path

from bench.support.processes import REPO, kenfold_env

# What most clients put in the model's context (names, descriptions, input schemas): 9,052 bytes after
# issue 17 (docs/benchmarks.md). A tool or a description that pushes it past this needs a reason.
MODEL_FACING_CEILING = 11_000


def test_the_tool_list_is_measured_and_stays_small(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "bench/tool_descriptions.py", "--json"],
        cwd=REPO,
        env=kenfold_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(result.stdout)
    names = [row["tool"] for row in report["tools"]]
    assert {"get_context", "recall", "remember"} <= set(names)
    total = report["total"]
    assert total["tools"] == len(names)
    for key in ("description_chars", "parameter_description_chars", "model_facing_bytes", "listing_bytes"):
        assert total[key] == sum(row[key] for row in report["tools"]) > 0
    assert all(row["model_facing_bytes"] < row["listing_bytes"] for row in report["tools"])
    assert total["model_facing_bytes"] <= MODEL_FACING_CEILING, total
