"""The command line: `python -m bench.latency …` (the options are in the package's docstring)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shlex
import shutil
import signal
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.support.processes import REPO, stop_cluster

from . import __doc__ as PACKAGE_DOC
from .children import Checkout, bench_manage, run_task, serve
from .corpus import SEED, Base, is_korean, make_bases, make_queries, make_tasks, make_writes
from .load import bulk_load, database_facts, embed_bases, noise_sigma, vacuum_analyze
from .phases import Target, drive
from .report import (
    DOCS_HEADING,
    docs_section,
    embed_summary,
    explain_digest,
    load_table,
    machine,
    stage_table,
    table,
    target_lines,
    update_docs,
)
from .tasks import AGENT

# --embed values: the local models (the benchmark strips every other KENFOLD_* variable, so `http`
# could not reach a provider, and `off` has no vectors to measure).
EMBED_MODES = ("local", "local-english", "local-multilingual")
# --phases: `stages` is the in-process breakdown, `reads` the tools/list, recall and get_context phases,
# `explain` the plans at the largest size; the docs section is only rewritten by a run of all of them.
PHASES = ("stages", "reads", "remember", "explain")


def prepare(
    size: int,
    checkout: Checkout,
    home: Path,
    args: argparse.Namespace,
    bases: list[Base],
    base_vectors: dict[str, Any],
) -> tuple[dict[str, Any], str]:
    """Migrate `home` with `checkout`'s code, create the API key, bulk-load the corpus and build the
    indexes; returns the result so far (with "skipped" if the HNSW build ran out of time) and the key."""
    result: dict[str, Any] = {"size": size, "code": checkout.label, "repo": str(checkout.path)}
    # The loaded models, primary first; the child tasks check that they are the configured embedders.
    models = [{"name": name, "dimensions": int(vectors.shape[1])} for name, vectors in base_vectors.items()]
    t0 = time.monotonic()
    bench_manage(home, checkout, args.embed, "migrate", "--verbosity", "0")
    key = bench_manage(home, checkout, args.embed, "key", "create", AGENT).strip()
    result["migrate_s"] = round(time.monotonic() - t0, 1)

    now = datetime.now(UTC)
    load = bulk_load(home, size, bases, base_vectors, now)
    print(
        f"  COPY {load['timings']['copy_s']:.0f} s, secondary indexes "
        f"{load['timings']['secondary_indexes_s']:.0f} s"
    )
    build_limit = max(60.0, args.build_minutes * 60 - (time.monotonic() - t0))
    hnsw = run_task(
        "index",
        {"timeout_s": build_limit, "models": models},
        home=home,
        checkout=checkout,
        embed=args.embed,
    )
    for name, built in hnsw["models"].items():
        state = (
            f"{built['seconds']:.0f} s"
            if built["finished"]
            else f"stopped after {built['seconds']:.0f} s"
            if built["started"]
            else "not started"
        )
        print(f"  HNSW index {name} ({built['dimensions']} dims, ensure_model_index) {state}")
    for notice in hnsw["notices"]:
        print(f"    NOTICE {notice}")
    if hnsw.get("scope_indexes_built"):
        print(
            f"  per-scope HNSW indexes: {hnsw['scope_indexes_built']} built in {hnsw['scope_index_seconds']:.0f} s "
            "(memories.search.scope_indexes, as the worker builds them)"
        )
    result["load"] = load | {
        "scope_index_s": round(hnsw.get("scope_index_seconds", 0.0), 1),
        "scope_indexes_built": hnsw.get("scope_indexes_built", 0),
        "hnsw_build_s": round(hnsw["seconds"], 1),
        "hnsw_finished": hnsw["finished"],
        # The primary model's HNSW indexes; every model's are in hnsw_models.
        "hnsw_indexes": hnsw["indexes"],
        "hnsw_notices": hnsw["notices"],
        "hnsw_models": {
            name: built | {"seconds": round(built["seconds"], 1)} for name, built in hnsw["models"].items()
        },
        "vacuum_analyze_s": 0.0,
    }
    if not hnsw["finished"]:
        result["skipped"] = (
            f"the HNSW build did not finish within the {args.build_minutes:.0f}-minute load budget "
            f"(stopped after {hnsw['seconds']:.0f} s); nothing was measured at this size"
        )
        result["database"] = database_facts(home)
        print(f"  {result['skipped']}")
        return result, key
    result["load"]["vacuum_analyze_s"] = round(vacuum_analyze(home), 1)
    result["database"] = database_facts(home)
    print(f"  database {result['database']['database_bytes'] / 2**20:,.0f} MiB")

    return result, key


def bench_size(
    size: int,
    checkouts: list[Checkout],
    args: argparse.Namespace,
    phases: set[str],
    bases: list[Base],
    base_vectors: dict[str, Any],
    explain: bool,
) -> list[dict[str, Any]]:
    """One size: a home per checkout, loaded alike, then the phases; one result per checkout."""
    models = [{"name": name, "dimensions": int(vectors.shape[1])} for name, vectors in base_vectors.items()]
    results: list[dict[str, Any]] = []
    with contextlib.ExitStack() as homes:
        prepared: list[tuple[Checkout, Path, dict[str, Any], str]] = []
        for checkout in checkouts:
            home = Path(tempfile.mkdtemp(prefix=f"kenfold-latency-{size}-"))
            homes.callback(_discard, home, keep=args.keep)
            print(f"\n== {size:,} memories, code {checkout.label} (KENFOLD_HOME={home})")
            result, key = prepare(size, checkout, home, args, bases, base_vectors)
            results.append(result)
            prepared.append((checkout, home, result, key))
        if any("skipped" in result for result in results):
            return results

        rng = random.Random(SEED * 3 + size)
        profile_queries = make_queries(60, rng)
        profile = {
            "queries": profile_queries,
            "tasks": make_tasks(45, rng),
            "writes": make_writes(45, rng, tag=f"profile-{size}"),
            "models": models,
        }
        if "stages" in phases:
            for checkout, home, result, _ in prepared:
                result["stages"] = run_task(
                    "profile", profile, home=home, checkout=checkout, embed=args.embed
                )
                print(f"  {checkout.label} in-process stages (median ms): {result['stages']['median_ms']}")

        if phases & {"reads", "remember"}:
            with contextlib.ExitStack() as servers:
                targets = [
                    Target(
                        checkout=checkout,
                        home=home,
                        key=key,
                        server=servers.enter_context(
                            serve(
                                home,
                                checkout,
                                embed=args.embed,
                                workers=args.workers,
                                with_worker=args.with_worker,
                            )
                        ),
                        models=[model["name"] for model in models],
                    )
                    for checkout, home, _, key in prepared
                ]
                driven = asyncio.run(drive(targets, args, size, phases))
            for checkout, _, result, _ in prepared:
                result["drive"] = driven[str(checkout.path)]

        if explain and "explain" in phases:
            english = [q for q in profile_queries if not is_korean(q["query"])][:2]
            korean = [q for q in profile_queries if is_korean(q["query"])][:1]
            payload = {
                "queries": english + korean,
                "tasks": make_tasks(1, random.Random(SEED)),
                # A project rule: episodic and temporary writes skip the similar[] lookups.
                "writes": [
                    w | {"type": "project"}
                    for w in make_writes(1, random.Random(SEED), tag=f"explain-{size}")
                ],
            }
            for checkout, home, result, _ in prepared:
                result["explain"] = run_task(
                    "explain", payload, home=home, checkout=checkout, embed=args.embed
                )
    return results


def _discard(home: Path, *, keep: bool) -> None:
    # Cleanup must not hide the error that ended the run: a cluster that will not stop is reported only.
    try:
        stop_cluster(home)
    except Exception as exc:
        print(f"  could not stop the cluster of {home}: {exc}")
    if keep:
        print(f"  kept {home}")
    else:
        shutil.rmtree(home, ignore_errors=True)


# --- main -----------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.latency", description=PACKAGE_DOC.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--clients", type=int, default=4, help="concurrent MCP clients (K)")
    parser.add_argument("--duration", type=float, default=30.0, help="seconds per read phase")
    parser.add_argument("--max-calls", type=int, default=5000, help="calls per read phase at most")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of every phase")
    parser.add_argument("--remember-count", type=int, default=300, help="remember calls per repeat")
    parser.add_argument("--bases", type=int, default=4000, help="distinct template sentences embedded")
    parser.add_argument("--workers", type=int, default=2, help="KENFOLD_WORKERS (the default is 2)")
    parser.add_argument(
        "--embed",
        metavar="MODE",
        default=os.environ.get("KENFOLD_EMBED", "").strip(),
        help=(
            f"KENFOLD_EMBED for every process started here: {', '.join(EMBED_MODES)}, or '' for unset "
            "(the product's default, both local models); default: this environment's KENFOLD_EMBED"
        ),
    )
    parser.add_argument(
        "--repo",
        metavar="DIR",
        type=Path,
        action="append",
        help=(
            "a checkout whose server and manage commands are measured (default: this one); repeat it to "
            "measure several, loaded alike and interleaved in every repeat"
        ),
    )
    parser.add_argument(
        "--paired",
        action="store_true",
        help=(
            "with several --repo: run the one-client read phases paired, each call sent to every checkout's "
            "server in turn (the first changing from call to call), and report the median per-call "
            "difference against the first --repo; on a shared machine whose speed drifts, the way to "
            "compare changes of a few ms"
        ),
    )
    parser.add_argument(
        "--phases",
        default=",".join(PHASES),
        help=f"comma-separated subset of {', '.join(PHASES)} (default: all)",
    )
    parser.add_argument(
        "--with-worker",
        action="store_true",
        help="serve with the job worker (manage.py serve --with-worker), and after each remember phase wait "
        "until it has embedded every new memory with every model",
    )
    parser.add_argument(
        "--build-minutes",
        type=float,
        default=40.0,
        help="time budget for load + index build per size; a size whose HNSW build exceeds it is skipped",
    )
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--docs", type=Path, default=REPO / "docs" / "benchmarks.md")
    parser.add_argument("--no-docs", action="store_true", help="do not touch docs/benchmarks.md")
    parser.add_argument(
        "--explain-out", type=Path, help="EXPLAIN output of the largest size (default: beside --json)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the KENFOLD_HOMEs (stopped) for inspection")
    parser.add_argument(
        "--note", action="append", default=[], help="a bullet for the Notes of the docs section"
    )
    parser.add_argument(
        "--render", type=Path, help="only rewrite the docs section from a saved --json report (with --note)"
    )
    parser.add_argument(
        "--commit", help="how the docs name the measured code (default: the checkout's commit)"
    )
    return parser.parse_args(argv)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> None:
    args = parse_args()
    if args.render:
        saved = json.loads(args.render.read_text())
        saved["notes"] = args.note or saved.get("notes", [])
        print(
            "\n".join(
                [table(saved["results"]), "", stage_table(saved["results"]), "", load_table(saved["results"])]
            )
        )
        update_docs(args.docs, docs_section(saved))
        print(f"\nupdated the '{DOCS_HEADING[3:]}' section of {args.docs}")
        return
    args.embed = args.embed.strip()
    if args.embed and args.embed not in EMBED_MODES:
        # Checked here, not by argparse's choices: the default comes from the environment.
        raise SystemExit(
            f"--embed (or KENFOLD_EMBED) is {args.embed!r}: use one of {', '.join(EMBED_MODES)}, or '' for the "
            "product's default; the benchmark needs the local models' vectors"
        )
    phases = {phase.strip() for phase in args.phases.split(",") if phase.strip()}
    if not phases or not phases <= set(PHASES):
        raise SystemExit(f"--phases {args.phases!r}: use a comma-separated subset of {', '.join(PHASES)}")
    checkouts = [Checkout.at(path) for path in args.repo or [REPO]]
    if len({checkout.path for checkout in checkouts}) < len(checkouts):
        raise SystemExit("--repo: each checkout once (run the same code twice with a second worktree)")
    # The docs section records full runs of one checkout; a comparison or a partial run is printed only.
    write_docs = not args.no_docs and len(checkouts) == 1 and phases == set(PHASES)
    # SIGTERM unwinds like Ctrl-C, so the finally blocks stop servers and clusters.
    signal.signal(signal.SIGTERM, _interrupt)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    command = " ".join(
        shlex.quote(part) for part in [".venv/bin/python", "-m", "bench.latency", *sys.argv[1:]]
    )
    if args.embed and not any(part == "--embed" or part.startswith("--embed=") for part in sys.argv[1:]):
        # Taken from the environment: the command shown must say so to be repeatable.
        command = f"KENFOLD_EMBED={args.embed} {command}"
    host = machine(checkouts[0])
    report: dict[str, Any] = {
        "command": command,
        "machine": host,
        "commit": args.commit or f"commit {host['commit']}",
        "checkouts": [
            {"path": str(c.path), "commit": c.commit, "modified": list(c.modified), "label": c.label}
            for c in checkouts
        ],
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "notes": args.note,
        "results": [],
    }
    print(f"{command}\n{report['machine']}")

    t0 = time.monotonic()
    bases = make_bases(args.bases, random.Random(SEED))
    # The first checkout's models embed the bases; every checkout's index task checks it has the same ones.
    base_vectors, models = embed_bases(bases, checkouts[0], args.embed)
    report["bases"] = {"count": len(bases), "embed_s": round(time.monotonic() - t0, 1)}
    report["embed"] = {
        "mode": args.embed or None,
        "models": [model | {"noise_sigma": round(noise_sigma(model["dimensions"]), 5)} for model in models],
    }
    setting, names, _ = embed_summary(report)
    print(
        f"{setting}: embedded {len(bases)} base sentences with {names} in {report['bases']['embed_s']} s "
        f"({', '.join(f'{model["name"]} {model["embed_s"]} s' for model in models)})"
    )

    for size in sizes:
        results = bench_size(size, checkouts, args, phases, bases, base_vectors, explain=size == max(sizes))
        report["results"] += results
        for result in results:
            if "explain" in result:
                _write_explain(result, args, several=len(checkouts) > 1)
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(report, indent=2, default=str, ensure_ascii=False))

    several = len(checkouts) > 1
    print("\n" + table(report["results"], several=several))
    if "stages" in phases:
        print("\n" + stage_table(report["results"]))
    print("\n" + load_table(report["results"], several=several))
    for line in target_lines(report["results"]):
        print(line)
    if write_docs:
        update_docs(args.docs, docs_section(report))
        print(f"\nupdated the '{DOCS_HEADING[3:]}' section of {args.docs}")
    elif not args.no_docs:
        print(f"\n{args.docs} not updated: its section records a run of all phases on one checkout")


def _write_explain(result: dict[str, Any], args: argparse.Namespace, *, several: bool) -> None:
    out = args.explain_out or (
        args.json.with_suffix(".explain.txt") if args.json else REPO / "bench" / "out" / "latency.explain.txt"
    )
    if several:
        out = out.with_name(f"{out.stem}.{Path(result['repo']).name}{out.suffix}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        "\n\n".join(
            f"-- {s['call']}\n{s['sql']}\n\n" + "\n".join(s["plan"]) for s in result["explain"]["statements"]
        )
        + "\n"
    )
    print(f"\nEXPLAIN (ANALYZE, BUFFERS) at {result['size']:,}, code {result['code']} (full plans in {out}):")
    print("\n".join(explain_digest(result["explain"])))
