"""The REST API against its own OpenAPI document: schemathesis drives a real server (gunicorn, the ASGI
stack with its gate and guard, PostgreSQL) with requests generated from /api/v1/openapi.json.

Every check runs, so the document must state exactly the rules the server keeps: a schema-valid request
is accepted (positive_data_acceptance) and a schema-invalid one refused (negative_data_rejection). The
rules beyond JSON Schema (what a project is, a repository-relative path) are named formats, which
tests/kenfold/schemathesis_hooks.py defines for the generator.
"""

import asyncio
import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.support.processes import manage
from tests.mcp.support import KenfoldServer, call, mcp_client, serve

OPERATIONS = {
    "GET /api/v1/refs",
    "HEAD /api/v1/refs",
    "POST /api/v1/refs/check",
    "GET /api/v1/docs/files",
    "HEAD /api/v1/docs/files",
    "POST /api/v1/docs/sync",
    "GET /api/v1/whoami",
    "POST /api/v1/usage/used",
}
# The project of the document's examples: with a memory that names code in it, the examples phase gets
# real targets back, and reports on them, not only refusals.
PROJECT = "github.com/kenfold/kenfold"
ROOT = Path(__file__).resolve().parents[2]


async def _remember_code(server: KenfoldServer) -> None:
    async with mcp_client(server.url, key=server.keys["refs-sync"]) as client:
        await call(
            client,
            "remember",
            content="The REST API's auth class is `GuardBearer` in kenfold/api.py.",
            project=PROJECT,
        )


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[KenfoldServer]:
    keys = {"refs-sync": manage(module_home, "key", "create", "refs-sync").stdout.strip()}
    with serve(module_home, keys) as started:
        asyncio.run(_remember_code(started))
        yield started


def test_every_operation_answers_as_the_document_says(server: KenfoldServer, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    schemathesis = Path(sys.executable).parent / "schemathesis"
    argv = [
        str(schemathesis),
        "run",
        f"{server.base}/api/v1/openapi.json",
        "--header",
        f"Authorization: Bearer {server.keys['refs-sync']}",
        "--checks",
        "all",
        # Bounded and reproducible: at most 50 generated requests per operation (plus the coverage
        # phase's fixed set of boundary values), the same ones on every run, none remembered between runs.
        "--max-examples",
        "50",
        "--seed",
        "14",
        "--generation-database",
        "none",
        "--workers",
        "1",
        "--continue-on-failure",
        "--report",
        "junit",
        "--report-junit-path",
        str(junit),
        "--no-color",
    ]
    # cwd: schemathesis keeps its own state (.hypothesis, .schemathesis) in the working directory.
    # Kenfold's own string formats (a project, a reference path, a docs path) are defined for schemathesis
    # by the hooks module, so that "schema-valid" means what the document says.
    env = os.environ | {
        "SCHEMATHESIS_HOOKS": "tests.kenfold.schemathesis_hooks",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-2000:]
    suite = ElementTree.parse(junit).getroot()
    # A run that tested nothing would also exit 0: every operation of the document must have been tried.
    assert {case.get("name") for case in suite.iter("testcase")} == OPERATIONS
    assert (suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("0", "0", "0")
    # The examples phase reported the example's findings: the memory's references were anchored.
    targets = httpx.get(
        f"{server.base}/api/v1/refs",
        params={"project": PROJECT},
        headers={"Authorization": f"Bearer {server.keys['refs-sync']}"},
    ).json()["targets"]
    assert {("kenfold/api.py", "GuardBearer")} <= {
        (target["path"], target["symbol"]) for target in targets if target["anchor_commit"] == "4f2a9c1"
    }
