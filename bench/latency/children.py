"""The processes the benchmark starts for one checkout (--repo) and one KENFOLD_HOME: manage commands, the
Django-side tasks of tasks.py, and `manage.py serve`. How a Kenfold process is started, waited for and
stopped is bench/support/processes.py, shared with the tests.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.support.processes import Running, free_port, kenfold_env, manage, running

from .tasks import RESULT_PREFIX

TASKS = Path(__file__).with_name("tasks.py")
ACCESS_LINE = re.compile(r"^POST /mcp HTTP/[\d.]+ 200 (\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Checkout:
    """A checkout of Kenfold whose code the benchmark runs, and what it is."""

    path: Path
    commit: str
    # Tracked product files that differ from `commit` (the benchmark and the docs are not what is measured).
    modified: tuple[str, ...]

    @classmethod
    def at(cls, path: Path) -> Checkout:
        path = path.resolve()
        if not (path / "manage.py").is_file():
            raise SystemExit(f"--repo {path}: not a Kenfold checkout (no manage.py there)")

        def git(*args: str) -> str:
            # Read-only queries: which code is measured, and whether it differs from its commit.
            return subprocess.run(
                ["git", *args], cwd=path, capture_output=True, text=True, check=False
            ).stdout

        status = git("status", "--porcelain", "--untracked-files=no").split("\n")
        return cls(
            path=path,
            commit=git("rev-parse", "--short", "HEAD").strip() or "unknown (not a git checkout)",
            modified=tuple(
                line[3:] for line in status if line.strip() and not line[3:].startswith(("docs/", "bench/"))
            ),
        )

    @property
    def label(self) -> str:
        return f"{self.path.name}@{self.commit}" + (" (modified)" if self.modified else "")


def _variables(embed: str, **extra: str) -> dict[str, str]:
    # KENFOLD_EMBED="" means unset: the product's default embedders.
    return {"KENFOLD_LOG_LEVEL": "warning", **({"KENFOLD_EMBED": embed} if embed else {}), **extra}


def bench_manage(home: Path, checkout: Checkout, embed: str, *args: str) -> str:
    return manage(home, *args, repo=checkout.path, timeout=600, **_variables(embed)).stdout


def run_task(
    task: str,
    payload: dict[str, Any],
    *,
    home: Path,
    checkout: Checkout,
    embed: str,
    timeout: float = 7200,
    extra: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Run one of tasks.py's tasks with `checkout`'s code for `home`, in a child process."""
    # -P: the tasks' own folder is not put on sys.path, so only the checkout's code is importable there.
    result = subprocess.run(
        [sys.executable, "-P", str(TASKS), task],
        cwd=checkout.path,
        env=kenfold_env(
            home, repo=checkout.path, **_variables(embed, BENCH_PAYLOAD=json.dumps(payload), **(extra or {}))
        ),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if result.returncode != 0 or not lines:
        raise RuntimeError(f"task {task} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return json.loads(lines[-1][len(RESULT_PREFIX) :])


@dataclass(frozen=True)
class Server:
    """A running `manage.py serve`, and its access log."""

    base: str
    running: Running

    def log_offset(self) -> int:
        return self.running.log_path.stat().st_size

    def mcp_durations_ms(self, offset: int) -> list[float]:
        """Server-side durations of the POST /mcp requests logged after `offset`."""
        with open(self.running.log_path, "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
        return [int(m.group(1)) / 1000 for m in ACCESS_LINE.finditer(text)]


@contextmanager
def serve(home: Path, checkout: Checkout, *, embed: str, workers: int, with_worker: bool) -> Iterator[Server]:
    """`manage.py serve` of `checkout` (gunicorn -k asgi; with `with_worker`, qcluster beside it) on a free
    127.0.0.1 port, until the block ends."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = kenfold_env(
        home,
        repo=checkout.path,
        **_variables(
            embed,
            KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}",
            KENFOLD_WORKERS=str(workers),
            # Only the access-log format changes (gunicorn reads this variable): request, status and the
            # server-side duration in microseconds, to tell server time from client time.
            GUNICORN_CMD_ARGS="--access-logformat '%(r)s %(s)s %(D)s'",
        ),
    )
    argv = [sys.executable, "manage.py", "serve", *(["--with-worker"] if with_worker else [])]
    with running(
        argv,
        env=env,
        ready_url=f"{base}/readyz",
        cwd=checkout.path,
        log_path=home / "server.log",
        timeout=120,
    ) as started:
        yield Server(base=base, running=started)
