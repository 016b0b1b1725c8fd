"""Reads of consolidation: the candidate pairs and session groups a run judges (spec §1.14), and the
proposals the owner reviews (the `consolidate` command and the dashboard)."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from uuid import UUID

from django.db import connection, transaction
from django.db.models import Count

from consolidation.models import Consolidation, Kind, ProposalStatus
from kenfold import paging
from kenfold_common.errors import InvalidInput
from memories.models import Memory, served_sql
from memories.search.embedding_store import stored_dimensions
from memories.search.trigram import PG_TRGM_DEFAULT_THRESHOLD

SETTLE = timedelta(hours=1)  # a memory written within the hour may still be superseded by its author
NEIGHBOURS = 3
PAIR_MAX_DISTANCE = 0.25  # cosine similarity >= 0.75
PAIR_TRIGRAM_SIMILARITY = 0.5
DIGEST_MIN_SESSIONS = 6
DIGEST_MIN_AGE = timedelta(days=30)
DIGEST_SESSIONS = 10
SCAN_BATCH = 100


@dataclass(frozen=True)
class Pair:
    """Two memories worth judging, ``older`` first (it is A in the first reading); ``found_by``: the
    scanned memories whose search found the pair."""

    older: Memory
    newer: Memory
    score: float
    found_by: frozenset[UUID]


def _pairable(alias: str) -> str:
    """SQL: memory `alias` may be paired: served, settled, neither a session summary nor temporary."""
    return (
        f"{served_sql(alias)} AND {alias}.type NOT IN ('episodic', 'temporary') "
        f"AND {alias}.created_at <= %(settled)s"
    )


def scan_batch(*, model: str | None, now: datetime, size: int) -> list[UUID]:
    """The oldest pairable memories not yet scanned with ``model``'s vectors (None: without vectors).
    With a model, only memories that have its vector: one still waiting for the backfill is scanned
    once it has one, so its vector neighbours are not missed."""
    with_vector = (
        "AND EXISTS (SELECT 1 FROM memory_embedding e WHERE e.memory_id = c.id AND e.model = %(model)s)"
        if model
        else ""
    )
    sql = f"""
        SELECT c.id FROM memory c
        WHERE {_pairable("c")}
          AND NOT EXISTS (
              SELECT 1 FROM consolidation_scan s WHERE s.memory_id = c.id AND s.model = %(key)s)
          {with_vector}
        ORDER BY c.created_at, c.id
        LIMIT %(size)s
    """
    params = {"now": now, "settled": now - SETTLE, "model": model, "key": model or "", "size": size}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def pair_candidates(*, model: str | None, now: datetime, candidates: list[UUID]) -> list[Pair]:
    """The pairs ``candidates`` (from scan_batch) form with pairable memories of the same scope and type,
    most alike first: each candidate's 3 nearest neighbours by the vectors of ``model`` within cosine
    distance 0.25, and its 3 most trigram-similar memories (similarity >= 0.5).

    Left out: a pair already judged (any row with exactly these members, whatever its status: a rejected
    pair is never proposed again), and a pair touching a memory that a pending proposal already holds.
    """
    if not candidates:
        return []
    parts = [
        f"""
        SELECT least(c.id, n.id) AS a, greatest(c.id, n.id) AS b,
               similarity(c.content, n.content) AS score, c.id AS found_by
        FROM memory c
        CROSS JOIN LATERAL (
            SELECT m.id, m.content FROM memory m
            WHERE {_pairable("m")} AND m.scope = c.scope AND m.type = c.type AND m.id <> c.id
              AND m.content %% c.content
            ORDER BY similarity(m.content, c.content) DESC
            LIMIT {NEIGHBOURS}
        ) AS n
        WHERE c.id = ANY(%(candidates)s) AND {_pairable("c")}
          AND similarity(c.content, n.content) >= %(trigram)s"""
    ]
    params: dict[str, object] = {
        "now": now,
        "settled": now - SETTLE,
        "trigram": PAIR_TRIGRAM_SIMILARITY,
        "max_distance": PAIR_MAX_DISTANCE,
        "candidates": list(candidates),
    }
    dims = stored_dimensions(model) if model else None
    if dims:
        # The cast matches the model's partial HNSW index (memories.search.embedding_store), so each
        # neighbour lookup is an index scan.
        vector = f"embedding::vector({int(dims)})"
        parts.append(f"""
        SELECT least(c.id, n.id), greatest(c.id, n.id), 1 - n.distance, c.id
        FROM memory c
        JOIN memory_embedding ce ON ce.memory_id = c.id AND ce.model = %(model)s
        CROSS JOIN LATERAL (
            SELECT e.memory_id AS id, (e.{vector}) <=> (ce.{vector}) AS distance
            FROM memory_embedding e
            WHERE e.model = %(model)s AND {served_sql("e")} AND e.scope = c.scope AND e.type = c.type
              AND e.memory_id <> c.id
            ORDER BY (e.{vector}) <=> (ce.{vector})
            LIMIT {NEIGHBOURS}
        ) AS n
        JOIN memory nm ON nm.id = n.id AND nm.created_at <= %(settled)s
        WHERE c.id = ANY(%(candidates)s) AND {_pairable("c")} AND n.distance <= %(max_distance)s""")
        params["model"] = model
    sql = f"""
        WITH found AS ({" UNION ALL ".join(parts)}),
        pairs AS (
            SELECT a, b, max(score) AS score, array_agg(DISTINCT found_by) AS found_by
            FROM found GROUP BY a, b)
        SELECT p.a, p.b, p.score, p.found_by FROM pairs p
        WHERE NOT EXISTS (SELECT 1 FROM consolidation x WHERE x.member_ids = ARRAY[p.a, p.b])
          AND NOT EXISTS (
              SELECT 1 FROM consolidation x
              WHERE x.status = 'pending' AND x.member_ids && ARRAY[p.a, p.b])
        ORDER BY p.score DESC, p.a, p.b
    """
    with transaction.atomic(), connection.cursor() as cursor:
        # `%` then matches only at the pair threshold: the trigram index's own check discards the many
        # loosely similar memories (default threshold 0.3) before their rows are read and scored.
        # The setting exists only once pg_trgm's library is loaded in this session, which its first
        # trigram query does: on a new connection (a command, the worker after a restart) it is read
        # with missing_ok and taken as the default.
        cursor.execute(
            "SELECT coalesce(current_setting('pg_trgm.similarity_threshold', true), %s), "
            "set_config('pg_trgm.similarity_threshold', %s, true)",
            [PG_TRGM_DEFAULT_THRESHOLD, str(PAIR_TRIGRAM_SIMILARITY)],
        )
        previous = cursor.fetchone()[0]
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        # Inside a caller's transaction the setting would outlive this query: restore it.
        cursor.execute("SELECT set_config('pg_trgm.similarity_threshold', %s, true)", [previous])
    memories = Memory.objects.in_bulk({memory_id for row in rows for memory_id in row[:2]})
    pairs = []
    for a, b, score, found_by in rows:
        older, newer = sorted((memories[a], memories[b]), key=lambda m: (m.created_at, m.id))
        pairs.append(Pair(older=older, newer=newer, score=float(score), found_by=frozenset(found_by)))
    return pairs


def digest_group(*, now: datetime) -> tuple[str, list[Memory]] | None:
    """The oldest 10 old session summaries of the scope whose oldest one is oldest, among scopes with at
    least 6 of them; or None. Old: served episodic memories older than 30 days that are not themselves
    digests and are not in a pending, rejected or dismissed digest proposal (digests are never
    digested again, and a refused group is not asked for again)."""
    sql = f"""
        WITH old AS (
            SELECT m.id, m.scope, m.created_at FROM memory m
            WHERE {served_sql("m")} AND m.type = 'episodic' AND m.created_at <= %(before)s
              AND coalesce(m.attrs->>'kind', '') <> 'digest'
              AND NOT EXISTS (
                  SELECT 1 FROM consolidation x
                  WHERE x.kind = 'digest' AND x.status IN ('pending', 'rejected', 'dismissed')
                    AND m.id = ANY(x.member_ids))
        ),
        scopes AS (
            SELECT scope, min(created_at) AS oldest FROM old GROUP BY scope HAVING count(*) >= %(min)s
        ),
        first AS (SELECT scope FROM scopes ORDER BY oldest, scope LIMIT 1)
        SELECT old.id FROM old JOIN first ON first.scope = old.scope
        ORDER BY old.created_at, old.id
        LIMIT %(take)s
    """
    params = {"now": now, "before": now - DIGEST_MIN_AGE, "min": DIGEST_MIN_SESSIONS, "take": DIGEST_SESSIONS}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        ids = [row[0] for row in cursor.fetchall()]
    if not ids:
        return None
    found = Memory.objects.in_bulk(ids)
    sessions = [found[memory_id] for memory_id in ids]
    return sessions[0].scope, sessions


# --- the owner's view ------------------------------------------------------------------------------

ACTION_LABELS = {
    Kind.DUPLICATE: "Retire the duplicate",
    Kind.CONFLICT: "Retire the older one",
    Kind.DIGEST: "Replace with the digest",
}


@dataclass(frozen=True)
class ProposalView:
    """A proposal with its memories (oldest first) and, for a pair, the one it keeps."""

    proposal: Consolidation
    members: list[Memory]
    keep: Memory | None

    @property
    def retired(self) -> list[Memory]:
        """The memories applying it retires."""
        return [m for m in self.members if self.keep is None or m.pk != self.keep.pk]

    @property
    def action(self) -> str:
        return ACTION_LABELS.get(self.proposal.kind, "")


def proposal_list(
    *, status: str | None = ProposalStatus.PENDING, scope: str | None = None, limit: int = 50, offset: int = 0
) -> list[ProposalView]:
    """Proposals with ``status`` (None: any) in ``scope`` (None: any), oldest first, with their members."""
    if status is not None and status not in ProposalStatus.values:
        raise InvalidInput(f"status must be one of: {', '.join(ProposalStatus.values)}")
    proposals = Consolidation.objects.order_by("created_at", "id")
    if status is not None:
        proposals = proposals.filter(status=status)
    if scope is not None:
        proposals = proposals.filter(scope=scope)
    rows = list(proposals[paging.window(limit=limit, offset=offset)])
    memories = Memory.objects.in_bulk({memory_id for row in rows for memory_id in row.member_ids})
    views = []
    for row in rows:
        members = sorted(
            (memories[m] for m in row.member_ids if m in memories), key=lambda m: (m.created_at, m.id)
        )
        views.append(ProposalView(proposal=row, members=members, keep=memories.get(row.keep_id)))
    return views


@dataclass(frozen=True)
class ProposalCounts:
    pending: int
    applied: int
    rejected: int
    dismissed: int
    stale: int
    # Model answers refused (recorded as dismissed), by the kind of refusal, most frequent first.
    refused: dict[str, int] = field(default_factory=dict)


def proposal_counts() -> ProposalCounts:
    """Judgements by status; ``pending`` is what waits for the owner; ``refused`` why answers were not."""
    by_status = dict(
        Consolidation.objects.values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    refused = (
        Consolidation.objects.exclude(refused="")
        .values_list("refused")
        .annotate(n=Count("id"))
        .order_by("-n", "refused")
        .values_list("refused", "n")
    )
    return ProposalCounts(
        **{status: by_status.get(status, 0) for status in ProposalStatus.values}, refused=dict(refused)
    )


def parse_proposal_id(value: str) -> UUID:
    """A canonical UUID, or an error saying where proposal ids come from."""
    text = (value or "").strip()
    try:
        parsed = UUID(text)
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != text.lower():
        raise InvalidInput("that is not a proposal id (use an id shown by `manage.py consolidate list`)")
    return parsed
