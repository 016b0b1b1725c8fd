"""Background jobs run once with several job workers (issue 40): two `qcluster` processes on one database
never run one task twice nor one schedule twice, and Kenfold's guarded jobs (embedding backfill, per-scope
index builds, consolidation) never run twice in parallel, whichever processes start them.

Every worker and job here is a process of its own on the embedded database, as in a deployment with two
worker machines; the embeddings come from a slow real HTTP server on 127.0.0.1 that records what it embeds.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.support.processes import REPO, kenfold_env, manage
from tests.provider_servers import Received, Reply, openai_embeddings, provider_server

MEMORIES = 40  # three backfill batches of at most 16 (memories.search.embedding_store: the smallest batch)


@pytest.fixture(scope="module")
def home(module_home: Path) -> Path:
    return module_home


def shell(home: Path, code: str, **extra: str) -> str:
    """The last line `code` prints, run by `manage.py shell` in a process of its own."""
    return manage(home, "shell", "-c", code, timeout=180, **extra).stdout.splitlines()[-1]


def slow_embeddings(received: Received) -> Reply:
    # Slow enough that a second run started beside the first finds it still running (3 batches, 9 s).
    reply = openai_embeddings(received)
    reply.delay = 3.0
    return reply


def test_two_backfills_started_at_once_embed_each_memory_once(home: Path) -> None:
    # Stored without vectors (embeddings off), as after a model switch or a provider outage.
    shell(
        home,
        "from access.caller import Caller\nfrom memories.services.remember import memory_remember\n"
        f"for n in range({MEMORIES}):\n"
        "    memory_remember(caller=Caller(agent='probe'), content=f'Backfill probe {n}: the build uses cache {n}')\n"
        "print('ok')",
        KENFOLD_EMBED="off",
    )
    with provider_server(slow_embeddings) as provider:
        env = {"KENFOLD_EMBED_URL": provider.url, "KENFOLD_EMBED_MODEL": "fake-embed"}
        code = "from memories.tasks import embeddings_backfill\nprint(embeddings_backfill())"
        with ThreadPoolExecutor(2) as pool:
            reports = list(pool.map(lambda _n: shell(home, code, **env), range(2)))
        embedded = Counter(text for request in provider.received for text in request.json["input"])
    # A job's output names only counts: which one ran is up to the race.
    assert sorted(report.split(",")[0] for report in reports) == [
        "another worker is running the embedding backfill",
        "fake-embed: embedded 40",
    ]
    assert len(embedded) == MEMORIES and set(embedded.values()) == {1}
    stored = shell(
        home,
        "from django.db import connection\nc = connection.cursor()\n"
        "c.execute(\"SELECT count(*), count(DISTINCT memory_id) FROM memory_embedding WHERE model = 'fake-embed'\")\n"
        "print(list(c.fetchone()))",
    )
    assert json.loads(stored) == [MEMORIES, MEMORIES]


PROBE = "tests.kenfold.job_probe.record"


def test_two_workers_run_each_task_and_each_due_schedule_once(home: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs.txt"
    runs.touch(mode=0o666)
    tasks = 8
    shell(
        home,
        "from datetime import timedelta\nfrom django.utils import timezone\n"
        "from django_q.models import Schedule\nfrom django_q.tasks import async_task\n"
        # Only the probe is due: the product's own schedules wait, so the run is about the probe alone.
        "Schedule.objects.update(next_run=timezone.now() + timedelta(hours=1))\n"
        f"Schedule.objects.create(name='probe', func='{PROBE}', args=\"'{runs}', 'scheduled'\", "
        "schedule_type=Schedule.MINUTES, minutes=10, repeats=-1, next_run=timezone.now())\n"
        f"for n in range({tasks}):\n"
        f"    async_task('{PROBE}', '{runs}', f'task-{{n}}')\n"
        "print('ok')",
    )
    workers = [
        subprocess.Popen(
            [sys.executable, "manage.py", "qcluster"],
            cwd=REPO,
            env=kenfold_env(home, KENFOLD_EMBED="off"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(2)
    ]
    try:
        # django-q2 looks at the schedules every 30 s, each worker on its own clock. Once the probe has run,
        # one more look by each worker: a second run would show by then. The tasks go in the first seconds.
        expected = {f"task-{n}" for n in range(tasks)} | {"scheduled"}
        deadline, settled = time.monotonic() + 150, None
        while time.monotonic() < (settled or deadline):
            time.sleep(1)
            assert all(worker.poll() is None for worker in workers)
            labels = {line.split()[0] for line in runs.read_text().splitlines()}
            if settled is None and labels >= expected:
                settled = time.monotonic() + 32
        lines = [line.split() for line in runs.read_text().splitlines()]
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGINT)
        for worker in workers:
            worker.wait(timeout=60)
    labels = Counter(label for label, _pid, _start, _end in lines)
    assert labels == Counter({f"task-{n}": 1 for n in range(tasks)} | {"scheduled": 1})
