"""`manage.py serve`'s access log keeps no query strings: they may carry credentials (issue 37)."""

import sys
import time
from pathlib import Path

import httpx

from bench.support.processes import DatabaseHome, free_port, kenfold_env, running

TOKEN = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
REMOTE = f"https://x-access-token:{TOKEN}@github.com/o/r.git"


def test_query_strings_never_reach_the_access_log(tmp_path: Path, database_home: DatabaseHome) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with database_home(tmp_path / "home") as home:
        env = kenfold_env(home, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}", KENFOLD_WORKERS="1")
        argv = [sys.executable, "manage.py", "serve", "--migrate"]
        with running(argv, env=env, ready_url=f"{base}/healthz", timeout=120) as server:
            referer = {"Referer": f"{base}/dashboard/memories?q={TOKEN}"}
            for path in ("/api/v1/refs", "/api/v1/docs/files"):
                response = httpx.get(f"{base}{path}", params={"project": REMOTE}, headers=referer)
                assert response.status_code == 401, "answered (without a key) and so logged"
            httpx.get(f"{base}/healthz?{TOKEN}")
            httpx.get(f"{base}/readyz")
            expected = [
                'GET /api/v1/refs?[redacted] HTTP/1.1" 401',
                'GET /api/v1/docs/files?[redacted] HTTP/1.1" 401',
                f'"{base}/dashboard/memories?[redacted]"',  # the referer's query goes too
                "GET /healthz?[redacted]",  # a bare token as the query goes too
                'GET /readyz HTTP/1.1" 200',  # a path without a query is logged as it is
            ]
            # A request's line is written after its answer; wait for all of them.
            deadline = time.monotonic() + 10
            while not all(line in server.output() for line in expected) and time.monotonic() < deadline:
                time.sleep(0.1)
            log = server.output()
        assert [line for line in expected if line not in log] == []
        assert TOKEN[4:12] not in log and "x-access-token" not in log
