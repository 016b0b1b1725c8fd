"""Reporting: the printed tables, the "Latency and scale" section of docs/benchmarks.md, EXPLAIN digests."""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

from .children import Checkout
from .load import DIMS, MODEL_NAME, NOISE_SIGMA, noise_sigma

DOCS_HEADING = "## Latency and scale"
TARGETS_MS = {100_000: 30.0, 1_000_000: 60.0}


def machine(checkout: Checkout) -> dict[str, Any]:
    """The machine, and the (first) measured checkout's commit, as the docs section names them."""
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_kib = 0
    with contextlib.suppress(OSError, IndexError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gib": round(mem_kib / 2**20, 1),
        "python": platform.python_version(),
        "commit": checkout.commit,
        "modified": list(checkout.modified),
        "date": subprocess.run(["date", "-u"], capture_output=True, text=True, check=False).stdout.strip(),
    }


def _code_column(several: bool) -> tuple[str, str]:
    """The header and rule cells of the column naming each row's checkout, when a run measured several."""
    return ("| code ", "|---") if several else ("", "")


def _code_cell(result: dict[str, Any], several: bool) -> str:
    return f" {result['code']} |" if several else ""


def table(results: list[dict[str, Any]], *, several: bool = False) -> str:
    """The MCP phases, one row per size (and checkout) and phase."""
    code_head, code_rule = _code_column(several)
    head = (
        f"| memories {code_head}| call | clients | p50 ms | p95 ms | p99 ms | calls/s | server p50 / p95 ms "
        "| calls | errors | p95 of each repeat |"
    )
    rows = [head, f"|---:{code_rule}|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for result in results:
        if "drive" not in result:
            continue
        for phase in result["drive"]["phases"].values():
            rows.append(
                f"| {result['size']:,} |{_code_cell(result, several)} {phase['tool']} | {phase['clients']} | "
                f"{phase['p50_ms']:.1f} | {phase['p95_ms']:.1f} | {phase['p99_ms']:.1f} | {phase['throughput']:.1f} | "
                f"{phase['server_p50_ms']:.1f} / {phase['server_p95_ms']:.1f} | {phase['calls']} | "
                f"{phase['errors']} | {', '.join(f'{v:.1f}' for v in phase['p95_ms_each'])} |"
            )
    return "\n".join(rows)


def load_table(results: list[dict[str, Any]], *, several: bool = False) -> str:
    code_head, code_rule = _code_column(several)
    rows = [
        f"| memories {code_head}| served | COPY s | other indexes s | HNSW build s | VACUUM ANALYZE s "
        "| database MiB | HNSW MiB |",
        f"|---:{code_rule}|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        load, db = result["load"], result["database"]
        # Reports written before several models were measured have no hnsw_models.
        per_model = load.get("hnsw_models") or {}
        if len(per_model) > 1:
            # One figure per model, in the order of the embedders (docs: the corpus paragraph).
            build = " + ".join(
                f"{'' if m['finished'] else '> '}{m['seconds']:.0f}" if m["started"] else "-"
                for m in per_model.values()
            )
            size_mib = " + ".join(f"{_index_bytes(db, m) / 2**20:,.0f}" for m in per_model.values())
        else:
            build = f"{'' if load['hnsw_finished'] else '> '}{load['hnsw_build_s']:.0f}"
            size_mib = f"{_index_bytes(db, load) / 2**20:,.0f}"
        rows.append(
            f"| {result['size']:,} |{_code_cell(result, several)} {db['served_memories']:,} | {load['timings']['copy_s']:.0f} | "
            f"{load['timings']['secondary_indexes_s']:.0f} | {build} | "
            f"{load['vacuum_analyze_s']:.0f} | {db['database_bytes'] / 2**20:,.0f} | {size_mib} |"
        )
    return "\n".join(rows)


def _index_bytes(db: dict[str, Any], built: dict[str, Any]) -> int:
    """The size of a model's HNSW indexes: a list of names, or, in reports written before, the one
    index's name (`index` per model, `hnsw_index` for the load)."""
    names = (
        built.get("indexes") or built.get("hnsw_indexes") or [built.get("index") or built.get("hnsw_index")]
    )
    return sum(db["relation_bytes"].get(name, 0) for name in names)


def stage_table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| memories | query embedding | lexical SQL | vector SQL | recall | get_context | remember "
        "| connection after close() | recall after close() | lexical hits (of 50) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    names = (
        "embed",
        "lexical_sql",
        "vector_sql",
        "recall_total",
        "get_context_total",
        "remember_total",
        "connect",
        "recall_fresh_connection",
    )
    for result in results:
        if "stages" not in result:
            continue
        med, p95 = result["stages"]["median_ms"], result["stages"]["p95_ms"]
        # Reports written before a column existed show a dash there.
        cells = [f"{med[k]:.1f} / {p95[k]:.1f}" if k in med else "-" for k in names]
        rows.append(
            f"| {result['size']:,} | {' | '.join(cells)} | {result['stages']['lexical_hits_median']:.0f} |"
        )
    return "\n".join(rows)


def target_lines(results: list[dict[str, Any]]) -> list[str]:
    lines = []
    for result in results:
        if "skipped" in result:
            lines.append(f"- {result['size']:,} memories: not measured: {result['skipped']}.")
            continue
        target = TARGETS_MS.get(result["size"])
        recall = result.get("drive", {}).get("phases", {}).get("recall/1")
        if target is None or recall is None:
            continue  # a size without a target, or a run whose phases left out the one-client reads
        single = recall["p95_ms"]
        verdict = "met" if single <= target else "MISSED"
        lines.append(
            f"- {result['size']:,} memories: recall p95 (1 client) {single:.1f} ms against the ≤ {target:.0f} ms "
            f"target: **{verdict}**."
        )
    return lines


def embed_summary(report: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    """How the docs name the measured embedders: the KENFOLD_EMBED setting, the models' names, the models.
    Reports written before --embed existed measured MiniLM alone with the variable unset."""
    embed = report.get("embed") or {}
    mode = embed.get("mode")
    models = embed.get("models") or [{"name": MODEL_NAME, "dimensions": DIMS}]
    setting = f"KENFOLD_EMBED={mode}" if mode else "KENFOLD_EMBED unset, the product default"
    names = " + ".join(f"{model['name']} ({model['dimensions']} dims)" for model in models)
    return setting, names, models


def docs_section(report: dict[str, Any]) -> str:
    m = report["machine"]
    results = report["results"]
    sizes = ", ".join(f"{r['size']:,}" for r in results)
    a = report["args"]
    first = results[0]["database"] if results else {}
    setting, names, models = embed_summary(report)
    model_count = len(models)
    several = model_count > 1
    lines = [
        DOCS_HEADING,
        "",
        f"Measured by `python -m bench.latency` on {m['date']}; code: {report['commit']}"
        + (f" with uncommitted changes to {', '.join(m['modified'])}." if m["modified"] else "."),
        "",
        f"    {report['command']}",
        "",
        f"Machine: {m['nproc']} cores ({m['cpu']}), {m['ram_gib']} GiB RAM, shared with other engineers' test "
        "runs while measuring (figures are medians of the repeats; compare sizes within one run). "
        f"PostgreSQL {first.get('postgres', '?')} (embedded), pgvector {first.get('pgvector', '?')}, "
        "default settings of the embedded cluster "
        f"(shared_buffers {first.get('settings', {}).get('shared_buffers', '?')}, maintenance_work_mem "
        f"{first.get('settings', {}).get('maintenance_work_mem', '?')}), KENFOLD_EMBEDDED_DURABLE=false "
        "(fsync off: it speeds up the load and the remember phase, not reads).",
        "",
        f"Sizes: {sizes} memories. Server: `manage.py serve` (gunicorn -k asgi, {a['workers']} workers), "
        f"with {setting}: embedder{'s' if several else ''} {names}, no reranker. "
        "`tools/list` (uncached) is the floor under every call: HTTP, "
        "the API-key check and the MCP layer, no tool. Client: the MCP SDK's `Client` over HTTP (mode auto), one "
        f"session per simulated agent, on the same machine. Each read phase ran {a['duration']} s or "
        f"{a['max_calls']} calls, {a['repeats']} times, interleaved; remember wrote {a['remember_count']} "
        f"distinct memories per repeat with {a['clients']} clients. Latency is per call, client-side "
        "(HTTP + MCP + query embedding" + (" of every model" if several else "") + " + SQL).",
        "",
        "Corpus: synthetic, bulk-loaded with COPY (see the docstring of bench/latency): 20 projects of Zipf-like "
        "sizes plus the user scope, all six types, ~85% active (others superseded, deleted, proposed, or "
        "temporary and mostly expired), ~20% Korean, created over a year. "
        + (
            f"With {setting}, each memory has one vector per model ({model_count}: {names}). Vectors "
            "are derived: each real model embeds a few thousand template sentences and each memory gets, "
            "per model, its template's "
            f"vector plus Gaussian noise (sigma {NOISE_SIGMA}/dimension at {DIMS} dimensions, scaled by "
            f"sqrt({DIMS}/dimensions) for the others: the same ~0.93 cosine to the template), re-normalized. "
            if several
            else f"Vectors are derived: the real model, {names}, embeds a few thousand "
            "template sentences and each memory gets its template's vector plus Gaussian noise "
            f"(sigma {noise_sigma(models[0]['dimensions']):.3g}/dimension), re-normalized. "
        )
        + "Queries are template questions over the same vocabulary, 20% Korean, always with a project.",
        "",
        "### Targets",
        "",
        *(target_lines(results) or ["- No measured size has a target (targets are for 100k and 1M)."]),
        "",
        "### Latency through the MCP endpoint",
        "",
        table(results),
        "",
        "### Where the time goes (in process, no HTTP; median / p95 ms)",
        "",
        *(
            [
                f"Query embedding and vector SQL are sums over the {model_count} models, one after another "
                "(recall runs them side by side); each model's own figures are in the JSON report "
                "(`embed[<model>]`, `vector_sql[<model>]`).",
                "",
            ]
            if several
            else []
        ),
        stage_table(results),
        "",
        "### Load and index build",
        "",
        *([f"HNSW build time and size are per model, in the order {names}.", ""] if several else []),
        load_table(results),
        "",
    ]
    notices = [
        f"- {r['size']:,}: {notice}"
        for r in results
        for notice in r.get("load", {}).get("hnsw_notices", [])
        if notice
    ]
    if notices:
        lines += ["PostgreSQL notices while building the HNSW index:", "", *notices, ""]
    if report.get("notes"):
        lines += ["### Notes", "", *[f"- {note}" for note in report["notes"]], ""]
    return "\n".join(lines)


def update_docs(path: Path, section: str) -> None:
    """Replace (or append) the latency section; every other section stays as it is."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == DOCS_HEADING), None)
    if start is None:
        new = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        before = "\n".join(lines[:start]).rstrip("\n")
        after = "\n".join(lines[end:])
        new = (
            (before + "\n\n" if before else "")
            + section.rstrip("\n")
            + "\n"
            + ("\n" + after if after else "")
        )
        new = new.rstrip("\n") + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new)


def explain_digest(explain: dict[str, Any]) -> list[str]:
    """The lines that matter in each plan: scans, index names, row counts, and the timing."""
    keep = re.compile(r"Scan|Execution Time|Planning Time|Buffers: shared|Rows Removed|Sort Method|Limit")
    out = []
    for statement in explain["statements"]:
        sql, plan = statement["sql"], statement["plan"]
        kind = (
            "vector"
            if "<=>" in sql
            else "lexical"
            if "ts_rank" in sql
            else "trigram"
            if "similarity(" in sql
            else "other"
        )
        out.append(f"-- {statement['call']} [{kind}]")
        if kind == "other":
            # ORM reads (sections, in_bulk, code refs): the top node and the time are enough.
            out += [f"   {plan[0].strip()}", *(f"   {line}" for line in plan if "Execution Time" in line)]
        else:
            out += [f"   {line.strip()}" for line in plan if keep.search(line)][:24]
    return out
