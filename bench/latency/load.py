"""Bulk load: the corpus's memories and derived vectors COPYed into a migrated KENFOLD_HOME, its indexes
re-created, and what the database looks like afterwards."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import random
import shutil
import struct
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .children import Checkout, run_task
from .corpus import AGENTS, DETAILS, KOREAN_SHARE, PROJECT_WEIGHTS, PROJECTS, SEED, TYPE_WEIGHTS, Base, fill

# The product's default embedder before several models were measured; old reports name it (report.py).
MODEL_NAME = "all-minilm-l6-v2-int8"
DIMS = 384
# Noise per dimension at DIMS dimensions; other dimensions scale it to the same cosine to the base.
NOISE_SIGMA = 0.02
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + struct.pack("!ii", 0, 0)
COPY_TRAILER = struct.pack("!h", -1)
# timestamptz in PostgreSQL's binary COPY format: microseconds since this instant.
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
MEMORY_COLUMNS = (
    "id, type, scope, content, attrs, source_agent, source_session, trust, confidence, status, "
    "supersedes_id, expires_at, created_at, updated_at"
)


def uuid7(ms: int, rng: random.Random) -> uuid.UUID:
    """A UUIDv7 for a given creation time, as PostgreSQL's uuidv7() would have made it then."""
    rand = rng.getrandbits(74)
    value = (
        (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 62) << 64 | 0b10 << 62 | (rand & ((1 << 62) - 1))
    )
    return uuid.UUID(int=value)


def embed_bases(
    bases: list[Base], checkout: Checkout, embed: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every configured model's vectors for the base sentences.

    Returns {model name: numpy array, one row per base}, primary model first, and each model's name,
    dimensions (of the vectors it really returned) and embedding time. The models run in a child
    process with the server's environment (`checkout`'s code, KENFOLD_EMBED=`embed`), so these are the
    embedders the server will search with.
    """
    import numpy as np

    work = Path(tempfile.mkdtemp(prefix="kenfold-latency-embed-"))
    try:
        # A file, not the payload variable: a few thousand sentences exceed one environment string's limit.
        texts = work / "texts.json"
        texts.write_text(json.dumps([base.text for base in bases], ensure_ascii=False))
        out = work / "vectors.npz"
        result = run_task(
            "embed",
            {"texts": str(texts), "out": str(out)},
            home=work,
            checkout=checkout,
            embed=embed,
            # Only this one-off process uses every core; the server keeps the default thread count.
            extra={"KENFOLD_EMBED_THREADS": str(min(64, os.cpu_count() or 1))},
        )
        with np.load(out) as saved:
            vectors = {model["name"]: saved[f"m{i}"] for i, model in enumerate(result["models"])}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return vectors, result["models"]


def noise_sigma(dimensions: int) -> float:
    """Noise per dimension for a model: NOISE_SIGMA at DIMS dimensions, and the same expected cosine
    between a memory's vector and its base's (~0.93) at any other dimension count."""
    return NOISE_SIGMA * math.sqrt(DIMS / dimensions)


def connect(home: Path) -> Any:
    import psycopg

    from kenfold.embedded_db import EmbeddedCluster

    conninfo = EmbeddedCluster(home=home, durable=False).superuser_conninfo("kenfold")
    return psycopg.connect(**conninfo, autocommit=True)


def bulk_load(
    home: Path,
    size: int,
    bases: list[Base],
    base_vectors: dict[str, Any],
    now: datetime,
    *,
    connect_to: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """COPY `size` memories and one vector per memory and model of `base_vectors`; returns timings and
    the corpus mix. `connect_to` opens a superuser connection (autocommit) to another server than the
    embedded one of `home` (bench/cluster's)."""
    open_connection = connect_to or (lambda: connect(home))
    import numpy as np

    rng = random.Random(SEED + size)
    nrng = np.random.default_rng(SEED + size)
    timings: dict[str, float] = {}

    with open_connection() as conn:
        indexes = conn.execute(
            """
            SELECT c.relname, pg_get_indexdef(i.indexrelid)
            FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
            WHERE i.indrelid IN ('memory'::regclass, 'memory_embedding'::regclass)
              AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
            ORDER BY c.relname
            """
        ).fetchall()
        # Built once at the end instead of updated row by row: the usual bulk-load practice.
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')

    by_kind: dict[tuple[str, bool], list[int]] = {}
    for index, base in enumerate(bases):
        by_kind.setdefault((base.type, base.korean), []).append(index)
    type_names = list(TYPE_WEIGHTS)
    span_ms = 365 * 24 * 3600 * 1000
    now_ms = int(now.timestamp() * 1000)
    created = np.sort(nrng.integers(now_ms - span_ms, now_ms - 60_000, size=size))
    types = nrng.choice(len(type_names), size=size, p=list(TYPE_WEIGHTS.values()))
    korean = nrng.random(size) < KOREAN_SHARE
    weights = np.array(PROJECT_WEIGHTS) / sum(PROJECT_WEIGHTS)
    projects = nrng.choice(len(PROJECTS), size=size, p=weights)
    rolls = nrng.random((size, 4))
    pending: dict[str, list[uuid.UUID]] = {}
    counts: dict[str, int] = {}
    models = list(base_vectors)
    # The primary model's noise comes from the corpus generator, as when the benchmark knew one model
    # (its corpus is unchanged); every other model's from a generator of its own, seeded by size and name.
    noise_rngs = [nrng] + [
        np.random.default_rng([SEED + size, zlib.crc32(name.encode())]) for name in models[1:]
    ]
    # Per model, the middle of each binary tuple: the model name and the vector's header.
    middles = [
        struct.pack("!i", len(name.encode()))
        + name.encode()
        + struct.pack("!ihh", 4 + 4 * base_vectors[name].shape[1], base_vectors[name].shape[1], 0)
        for name in models
    ]

    started = time.monotonic()
    chunk = 20_000
    with contextlib.ExitStack() as stack:
        mem_conn = stack.enter_context(open_connection())
        emb_conns = [stack.enter_context(open_connection()) for _ in models]
        for conn in (mem_conn, *emb_conns):
            # Foreign-key triggers off for the load: every reference points at a row of this load.
            conn.execute("SET session_replication_role = replica")
        # A connection for the memory rows and one per model, so the server parses them in parallel.
        mem_copy = stack.enter_context(
            stack.enter_context(mem_conn.cursor()).copy(f"COPY memory ({MEMORY_COLUMNS}) FROM STDIN")
        )
        emb_copies = [
            stack.enter_context(
                stack.enter_context(conn.cursor()).copy(
                    "COPY memory_embedding (memory_id, model, embedding, content_md5, scope, status, type, "
                    "expires_at) FROM STDIN (FORMAT BINARY)"
                )
            )
            for conn in emb_conns
        ]
        for emb_copy in emb_copies:
            emb_copy.write(COPY_HEADER)
        for start in range(0, size, chunk):
            stop = min(size, start + chunk)
            picks = [0] * (stop - start)
            # Each binary tuple is head + model + vector + tail; vectors are made for the chunk at once.
            heads: list[bytes] = []
            tails: list[bytes] = []
            for offset, row in enumerate(range(start, stop)):
                memory_type = type_names[types[row]]
                pool = by_kind[(memory_type, bool(korean[row]))]
                base_index = pool[rng.randrange(len(pool))]
                picks[offset] = base_index
                base = bases[base_index]
                ms = int(created[row])
                memory_id = uuid7(ms, rng)
                created_at = datetime.fromtimestamp(ms / 1000, UTC)
                content = base.text
                if rolls[row, 0] < 0.7:
                    content += fill(rng.choice(DETAILS), rng)
                scope = _scope_for(memory_type, rolls[row, 1], int(projects[row]))
                status = _status_for(memory_type, rolls[row, 2])
                attrs: dict[str, Any] = {"type_source": "agent"}
                expires_at = None
                if memory_type == "temporary":
                    if base.handoff:
                        attrs = {
                            "kind": "handoff",
                            "next_steps": [fill("{followup}", rng), fill("{followup}", rng)],
                            "type_source": "agent",
                        }
                        if rolls[row, 3] < 0.5:
                            attrs |= {"resumed_at": created_at.isoformat(), "resumed_by": "codex"}
                        expires_at = created_at + timedelta(days=7)
                    else:
                        expires_at = created_at + timedelta(seconds=rng.randint(3600, 30 * 86400))
                supersedes = None
                if status == "superseded":
                    pending.setdefault(scope, []).append(memory_id)
                elif status == "active" and pending.get(scope) and rolls[row, 3] < 0.8:
                    supersedes = pending[scope].pop()
                session = f"sess-{row:08d}" if memory_type == "episodic" else None
                trust = "user" if memory_type == "preference" and rolls[row, 3] < 0.5 else "agent"
                served = status == "active" and (expires_at is None or expires_at > now)
                key = f"{status}{'' if served or status != 'active' else ' (expired)'}"
                counts[key] = counts.get(key, 0) + 1
                mem_copy.write_row(
                    (
                        memory_id,
                        memory_type,
                        scope,
                        content,
                        json.dumps(attrs, ensure_ascii=False),
                        AGENTS[row % len(AGENTS)],
                        session,
                        trust,
                        0.5,
                        status,
                        supersedes,
                        expires_at,
                        created_at,
                        created_at,
                    )
                )
                digest = hashlib.md5(content.encode()).hexdigest().encode()
                heads.append(struct.pack("!hi", 8, 16) + memory_id.bytes)
                # The memory's filters, copied onto its vector rows (migration 0008; the copy trigger is
                # off during the load, like the foreign keys).
                tails.append(
                    struct.pack("!i", 32)
                    + digest
                    + b"".join(
                        struct.pack("!i", len(text)) + text
                        for text in (scope.encode(), status.encode(), memory_type.encode())
                    )
                    + (
                        struct.pack("!iq", 8, (expires_at - PG_EPOCH) // timedelta(microseconds=1))
                        if expires_at is not None
                        else struct.pack("!i", -1)
                    )
                )
            for name, middle, noise_rng, emb_copy in zip(
                models, middles, noise_rngs, emb_copies, strict=True
            ):
                # The model's base vector plus noise, re-normalized; pgvector's binary form is
                # big-endian float4.
                vectors = base_vectors[name]
                dims = vectors.shape[1]
                noise = noise_rng.normal(0.0, noise_sigma(dims), (len(picks), dims)).astype(np.float32)
                noisy = vectors[picks] + noise
                noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
                big_endian = noisy.astype(">f4")
                emb_copy.write(
                    b"".join(
                        head + middle + vector.tobytes() + tail
                        for head, vector, tail in zip(heads, big_endian, tails, strict=True)
                    )
                )
            elapsed = time.monotonic() - started
            print(f"  loaded {stop:>9,}/{size:,} rows ({elapsed:5.0f} s)", end="\r", flush=True)
        for emb_copy in emb_copies:
            emb_copy.write(COPY_TRAILER)
    print()
    timings["copy_s"] = time.monotonic() - started

    index_times: dict[str, float] = {}
    with open_connection() as conn:
        for name, definition in indexes:
            t0 = time.monotonic()
            conn.execute(definition)
            index_times[name] = round(time.monotonic() - t0, 2)
    timings["secondary_indexes_s"] = sum(index_times.values())
    return {
        "timings": timings,
        "index_build_s": index_times,
        "status_mix": counts,
        "recreated_indexes": [name for name, _ in indexes],
        "embedding_rows": {name: size for name in models},
    }


def _scope_for(memory_type: str, roll: float, project: int) -> str:
    user_share = {"preference": 0.9, "semantic": 0.6}.get(memory_type, 0.03)
    return "user" if roll < user_share else f"project:github.com/acme/{PROJECTS[project]}"


def _status_for(memory_type: str, roll: float) -> str:
    if memory_type == "preference":
        table = [("active", 0.70), ("proposed", 0.18), ("superseded", 0.08), ("deleted", 0.04)]
    else:
        table = [("active", 0.86), ("superseded", 0.09), ("deleted", 0.05)]
    for status, share in table:
        if roll < share:
            return status
        roll -= share
    return table[-1][0]


def database_facts(home: Path) -> dict[str, Any]:
    with connect(home) as conn:
        sizes = dict(
            conn.execute(
                """
                SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
                WHERE c.relname IN ('memory', 'memory_embedding')
                UNION ALL
                SELECT c.relname, pg_relation_size(c.oid) FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid
                WHERE i.indrelid IN ('memory'::regclass, 'memory_embedding'::regclass)
                """
            ).fetchall()
        )
        served = conn.execute(
            "SELECT count(*) FROM memory WHERE status = 'active' AND (expires_at IS NULL OR expires_at > now())"
        ).fetchone()[0]
        scopes = conn.execute(
            "SELECT scope, count(*) FROM memory GROUP BY scope ORDER BY 2 DESC LIMIT 3"
        ).fetchall()
        settings = dict(
            conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name IN "
                "('shared_buffers', 'work_mem', 'maintenance_work_mem', 'effective_cache_size', "
                "'max_parallel_maintenance_workers', 'hnsw.ef_search', 'hnsw.iterative_scan', "
                "'hnsw.max_scan_tuples', 'jit', 'random_page_cost')"
            ).fetchall()
        )
        return {
            "database_bytes": conn.execute("SELECT pg_database_size('kenfold')").fetchone()[0],
            "relation_bytes": sizes,
            "served_memories": served,
            "largest_scopes": [[scope, count] for scope, count in scopes],
            "postgres": conn.execute("SHOW server_version").fetchone()[0],
            "pgvector": conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()[0],
            "settings": settings,
        }


def vacuum_analyze(home: Path) -> float:
    t0 = time.monotonic()
    with connect(home) as conn:
        conn.execute("VACUUM (ANALYZE) memory")
        conn.execute("VACUUM (ANALYZE) memory_embedding")
    return time.monotonic() - t0


def unembedded(home: Path, models: list[str], since: datetime) -> int:
    """Served memories created since `since` that lack a vector of one of `models`: what the server's
    queue still has to embed."""
    with connect(home) as conn:
        return conn.execute(
            """
            SELECT count(*) FROM memory m
            WHERE m.created_at >= %s AND m.status = 'active'
              AND (SELECT count(DISTINCT e.model) FROM memory_embedding e
                   WHERE e.memory_id = m.id AND e.model = ANY(%s)) < %s
            """,
            (since, models, len(models)),
        ).fetchone()[0]
