"""Kenfold at scale on loopback (issue 40): PostgreSQL 18 + pgvector as a TCP server, PgBouncer (transaction
mode), 3 web servers and 2 job workers on KENFOLD_DATABASE_URL, HAProxy in front; the same shape as
docker-compose.scale.yml. Everything listens on 127.0.0.1 only, in a scratch folder that is deleted at the
end (logs are kept with --keep), and every process is stopped on exit, Ctrl-C, SIGTERM or --timeout.

    make bench-cluster            (installs Debian's pgbouncer and haproxy when missing, then runs this)
    .venv/bin/python bench/cluster/run.py [--phases checks,faults,numbers] [--clients 64] [--fault-seconds 120]
        [--json OUT] [--keep] [--timeout 2400]

checks: what must hold whichever server answers (bench/cluster/checks.py). faults: 64 agents with the six
tools through HAProxy while a web server is killed (-9), then a job worker, then PgBouncer is restarted
(bench/cluster/faults.py). numbers: throughput with 1 and 3 web servers and recall through the balancer
(bench/cluster/figures.py). The script supervises every process: whatever exits is started again, as a
process manager (systemd's Restart=always, Docker's restart policy) would. Exit status 0 when every check
and the fault run passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Run as a script, Python puts this folder first on sys.path; the repository's root instead, so that its
# packages (bench, tests, kenfold) import and no module here shadows a standard one.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(REPO)
elif str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.cluster import topology  # noqa: E402
from bench.cluster.cluster import Cluster  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/cluster/run.py",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    parser.add_argument("--phases", default="checks,faults", help="checks, faults, numbers (comma-separated)")
    parser.add_argument("--clients", type=int, default=64, help="agents in the fault run")
    parser.add_argument("--fault-seconds", type=float, default=120, help="length of the fault run")
    parser.add_argument("--counts", default="16,32,64,128", help="numbers: client counts")
    parser.add_argument("--seconds", type=float, default=30, help="numbers: seconds per client count")
    parser.add_argument(
        "--recall-memories", default="100000", help="numbers: store sizes for recall p95, e.g. 100000,1000000"
    )
    parser.add_argument("--embed", help="KENFOLD_EMBED of every Kenfold process (default: the product's)")
    parser.add_argument("--json", type=Path, help="write the report here too")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (logs, database)")
    parser.add_argument("--timeout", type=float, default=2400, help="stop everything after this many seconds")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    phases = set(args.phases.split(","))
    unknown = phases - {"checks", "faults", "numbers"}
    if unknown:
        raise SystemExit(
            f"unknown phase(s) {', '.join(sorted(unknown))}; choose from checks, faults, numbers"
        )
    scratch = Path(tempfile.mkdtemp(prefix="kenfold-cluster-"))
    counts = [int(c) for c in args.counts.split(",")]
    agents = max([args.clients, *(counts if "numbers" in phases else [])]) + 1
    cluster = Cluster(scratch, embed=args.embed)
    report: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["bench/cluster/run.py", *(argv if argv is not None else sys.argv[1:])]),
        "shape": {
            "web_servers": topology.WEB_SERVERS,
            "job_workers": topology.JOB_WORKERS,
            "pool_mode": topology.POOL_MODE,
        },
        "scratch": str(scratch),
    }

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    # Bounded: past --timeout the main thread is interrupted and everything below is stopped.
    watchdog = threading.Timer(args.timeout, lambda: signal.raise_signal(signal.SIGTERM))
    watchdog.daemon = True
    watchdog.start()
    ok = True
    try:
        began = time.monotonic()
        cluster.start(agents=agents)
        report["startup_s"] = round(time.monotonic() - began, 1)
        print(f"cluster up in {report['startup_s']} s at {cluster.url} ({scratch})", flush=True)
        if "checks" in phases:
            from bench.cluster.checks import run_checks

            report["checks"] = run_checks(cluster)
            print(json.dumps({"checks": report["checks"]}), flush=True)
            ok &= report["checks"]["ok"]
        if "faults" in phases:
            from bench.cluster.faults import fault_run

            report["faults"] = asyncio.run(
                fault_run(cluster, clients=args.clients, seconds=args.fault_seconds)
            )
            print(json.dumps({"faults": report["faults"]}), flush=True)
            ok &= report["faults"]["ok"]
        if "numbers" in phases:
            from bench.cluster.figures import run_numbers

            report["numbers"] = {}
            run_numbers(cluster, args, report["numbers"])
            print(json.dumps({"numbers": report["numbers"]}), flush=True)
    except KeyboardInterrupt as exc:
        report["interrupted"] = str(exc) or "interrupted"
        ok = False
    except Exception:  # reported with what was measured before it, and everything still stopped
        report["error"] = traceback.format_exc()
        ok = False
    finally:
        watchdog.cancel()
        cluster.stop()
        report["restarts"] = {
            name: service.starts() - 1 for name, service in cluster.supervisor.services.items()
        }
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    report["ok"] = ok
    text = json.dumps(report, indent=2)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
