"""Export and import of a large store: `manage.py export` of N memories (with edges and code references),
then `manage.py import` of that archive into an empty database, each timed as the owner runs it (a
separate process, start-up included): wall time, and the command's own CPU time (the database server's
is not in it), which a loaded machine inflates far less. Issue 13 asks for under a minute each at
100,000 memories.

    .venv/bin/python bench/archive.py [--memories 100000] [--json OUT]

Runs on a throwaway embedded cluster in a temporary KENFOLD_HOME: the first database is filled with SQL
(memories of every status and type, with attrs, about 230 characters each; one edge per 5 memories and
one code reference per 3 project memories), the second is created empty on the same cluster and migrated.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

FILL = """
INSERT INTO memory (type, scope, content, attrs, source_agent, source_session, trust, confidence, status,
                    expires_at, created_at, updated_at)
SELECT (ARRAY['semantic','episodic','project','preference','codebase','temporary'])[1 + i %% 6],
       CASE WHEN i %% 3 = 0 THEN 'user' ELSE 'project:github.com/acme/repo-' || (i %% 50) END,
       'Memory ' || i || ': the ' || (ARRAY['billing','deploy','search','auth','mobile','docs'])[1 + i %% 6]
           || ' service keeps its state in ' || md5(i::text) || ' and retries failed jobs after '
           || (i %% 90) || ' seconds; the owner decided this in session ' || md5((i * 7)::text) || '.',
       CASE WHEN i %% 4 = 0 THEN jsonb_build_object('type_source', 'agent', 'next_steps',
           jsonb_build_array('run the tests', 'merge ' || i)) ELSE '{}'::jsonb END,
       (ARRAY['claude-code','codex','opencode'])[1 + i %% 3],
       CASE WHEN i %% 2 = 0 THEN 'session-' || (i / 10) END,
       (ARRAY['agent','user','external'])[1 + i %% 3],
       (i %% 100) / 100.0,
       (ARRAY['active','active','active','proposed','superseded','deleted'])[1 + i %% 6],
       CASE WHEN i %% 6 = 5 THEN now() + interval '7 days' END,
       now() - (i || ' minutes')::interval,
       now() - (i || ' minutes')::interval
FROM generate_series(1, %(n)s) AS i
"""
EDGES = """
INSERT INTO memory_edge (src_id, relation, dst_id, weight, source_agent)
SELECT a.id, 'derived_from', b.id, 1.0, 'kenfold-extractor'
FROM (SELECT id, row_number() OVER (ORDER BY id) AS r FROM memory) a
JOIN (SELECT id, row_number() OVER (ORDER BY id) AS r FROM memory) b ON b.r = a.r + 1
WHERE a.r % 5 = 0
"""
REFS = """
INSERT INTO memory_ref (memory_id, scope, path, symbol, state)
SELECT id, scope, 'internal/' || left(md5(id::text), 8) || '.go', '', 'pending'
FROM (SELECT id, scope, row_number() OVER (ORDER BY id) AS r FROM memory WHERE scope <> 'user') m
WHERE r % 3 = 0
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--json", type=Path, help="write the figures here")
    return parser.parse_args()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def manage(env: dict[str, str], *args: str) -> tuple[float, float, str]:
    """Run `manage.py *args`; its wall time, its own CPU time (not the database server's), its output."""
    cpu = _children_cpu()
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=1800
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return elapsed, _children_cpu() - cpu, result.stdout + result.stderr


@contextmanager
def sibling_database(name: str) -> Iterator[str]:
    """An empty database `name` on the server Django is connected to (same user), as the
    KENFOLD_DATABASE_URL that reaches it; dropped at the end, once whoever used it has gone.

    Dropped without `WITH (FORCE)`: a role that is not a superuser may not end another role's backend (an
    autovacuum worker on the new database failed a CI run that way). A plain DROP stops autovacuum itself
    and waits up to 5 s for other sessions, so only a session that outlives its user makes it retry."""
    import psycopg
    from django.db import connection

    params = connection.get_connection_params()

    def maintenance() -> psycopg.Connection:
        return psycopg.connect(
            host=params["host"],
            port=params["port"],
            user=params["user"],
            dbname=params["dbname"],
            autocommit=True,
        )

    with maintenance() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield (
            f"postgres://{quote(params['user'])}@/{name}"
            f"?host={quote(str(params['host']), safe='')}&port={params['port']}"
        )
    finally:
        with maintenance() as conn:
            for attempt in range(5):
                try:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
                    break
                except psycopg.errors.ObjectInUse:
                    if attempt == 4:
                        raise
                    time.sleep(1)


def main() -> int:
    args = parse_args()
    home = Path(tempfile.mkdtemp(prefix="kenfold-archive-bench-"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("KENFOLD_")}
    env |= {
        "KENFOLD_HOME": str(home),
        "KENFOLD_EMBEDDED_DURABLE": "false",
        "KENFOLD_EMBED": "off",
        "KENFOLD_LOG_LEVEL": "warning",
        "DJANGO_SETTINGS_MODULE": "kenfold.settings",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection, connections

    try:
        manage(env, "migrate", "-v0")
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute(FILL, {"n": args.memories})
            cursor.execute(EDGES)
            cursor.execute(REFS)
            cursor.execute("ANALYZE")
        print(f"filled {args.memories} memories in {time.perf_counter() - started:.1f} s", file=sys.stderr)

        archive = home / "archive.jsonl"
        export_seconds, export_cpu, export_output = manage(env, "export", "--out", str(archive))
        print(export_output.strip(), file=sys.stderr)

        with sibling_database("kenfold_import") as url:
            second = env | {"KENFOLD_DATABASE_URL": url}
            manage(second, "migrate", "-v0")
            import_seconds, import_cpu, import_output = manage(second, "import", str(archive))
            print(import_output.strip(), file=sys.stderr)
            _, _, again_output = manage(second, "import", "--json", str(archive))
            again = json.loads(again_output.strip().splitlines()[-1])

        report = {
            "memories": args.memories,
            "archive_mb": round(archive.stat().st_size / 1e6, 1),
            "export_seconds": round(export_seconds, 1),
            "export_cpu_seconds": round(export_cpu, 1),
            "import_seconds": round(import_seconds, 1),
            "import_cpu_seconds": round(import_cpu, 1),
            "load_average_at_end": round(os.getloadavg()[0], 1),
            "reimport_already_here": again["memories_already_here"],
            "under_a_minute": export_seconds < 60 and import_seconds < 60,
        }
        print(json.dumps(report, indent=2))
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        return 0
    finally:
        connections.close_all()
        cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
