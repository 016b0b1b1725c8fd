"""Writing archives into the database (import, spec §1.18) and cleaning stored secrets (scan, §1.11).

Import reads the whole archive, validating each line, into temporary staging tables with COPY, inside the
one transaction that then moves the rows into the store: a refused archive (a bad line, a secret, a
truncated end) is rolled back before a single stored row changed, and memory stays flat however long the
archive is (the rows wait in PostgreSQL, not in this process).
"""

import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.utils import timezone
from django_q.models import Schedule
from psycopg.types.json import Jsonb

from archive.records import (
    EDGE_FIELDS,
    MAX_LINE_BYTES,
    MEMORY_FIELDS,
    REF_FIELDS,
    EdgeRecord,
    EndRecord,
    MemoryRecord,
    RefRecord,
    parse_header,
    parse_record,
    refused,
)
from kenfold_common.errors import InvalidInput
from kenfold_common.secrets import find_nested_secrets, find_secrets, redact_nested, redact_secrets
from memories import extensions
from memories.audit import audit_record
from memories.insert import memory_insert_staged, screened
from memories.models import Memory, MemoryAction, MemoryEmbedding, MemoryType, Status, Trust
from memories.services.review import CLI_AGENT
from memories.tasks import BACKFILL_TASK

# Rows per COPY batch into the staging tables.
STAGE_BATCH = 5000

_STAGING = {
    "memory": """CREATE TEMP TABLE archive_memory (
        line integer, id uuid, type text, scope text, content text, attrs jsonb, source_agent text,
        source_session text, evidence_uri text, trust text, confidence double precision, status text,
        supersedes uuid, valid_from timestamptz, valid_to timestamptz, expires_at timestamptz,
        created_at timestamptz, updated_at timestamptz, code_state text, active_from timestamptz,
        ended_at timestamptz
    ) ON COMMIT DROP""",
    "edge": """CREATE TEMP TABLE archive_edge (
        src uuid, relation text, dst uuid, weight double precision, source_agent text, created_at timestamptz
    ) ON COMMIT DROP""",
    "ref": """CREATE TEMP TABLE archive_ref (
        line integer, memory_id uuid, scope text, path text, symbol text, state text, resolved_path text, anchor_hash text,
        anchor_commit text, checked_commit text, checked_at timestamptz, created_at timestamptz
    ) ON COMMIT DROP""",
}
_COLUMNS = {"memory": ("line", *MEMORY_FIELDS), "edge": EDGE_FIELDS, "ref": ("line", *REF_FIELDS)}


@dataclass
class ImportReport:
    memories: int = 0
    edges: int = 0
    refs: int = 0
    # Already in this database (same id, same edge, same reference): left untouched.
    memories_already_here: int = 0
    edges_already_here: int = 0
    refs_already_here: int = 0
    # Edges and refs whose memories are in neither the archive nor this database.
    edges_skipped: int = 0
    refs_skipped: int = 0
    # `supersedes` links to a memory in neither the archive nor this database (a scoped export).
    supersedes_unlinked: int = 0
    # Active preferences with trust `user` among the memories imported: get_context serves them to every
    # agent as the owner's own word, so the owner hears of them.
    trust_user_served: int = 0
    dry_run: bool = False
    read: dict[str, int] = field(default_factory=lambda: {"memories": 0, "edges": 0, "refs": 0})


class _Stager:
    """Collects validated rows and COPYs them into the staging tables in batches."""

    def __init__(self) -> None:
        self.pending: dict[str, list[tuple[Any, ...]]] = {kind: [] for kind in _STAGING}
        with connection.cursor() as cursor:
            for kind, statement in _STAGING.items():
                # Left by an earlier import in the same transaction (a caller's atomic block), where
                # ON COMMIT has not dropped it yet.
                cursor.execute(f"DROP TABLE IF EXISTS pg_temp.archive_{kind}")
                cursor.execute(statement)

    def add(self, kind: str, row: tuple[Any, ...]) -> None:
        rows = self.pending[kind]
        rows.append(row)
        if len(rows) >= STAGE_BATCH:
            self.flush(kind)

    def flush(self, kind: str) -> None:
        rows = self.pending[kind]
        if not rows:
            return
        columns = ", ".join(_COLUMNS[kind])
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY archive_{kind} ({columns}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)
        rows.clear()


def _memory_row(line: int, record: MemoryRecord) -> tuple[Any, ...]:
    values = record.model_dump()
    # Screened like every write: an imported instruction waits for the owner as a remembered one would.
    values["status"], attrs = screened(
        content=values["content"], attrs=values["attrs"], trust=values["trust"], status=values["status"]
    )
    values["attrs"] = Jsonb(attrs)
    return (line, *(values[name] for name in MEMORY_FIELDS))


def _numbered_lines(lines: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    for number, line in enumerate(lines, start=1):
        if len(line) > MAX_LINE_BYTES:
            raise refused(
                number, f"is longer than {MAX_LINE_BYTES // 1024} KiB, the limit of an archive line"
            )
        stripped = line.rstrip(b"\r\n")
        if not stripped.strip():
            raise refused(number, "is empty (an archive holds one JSON value on every line)")
        yield number, stripped


def _stage(lines: Iterable[bytes], stager: _Stager, progress: Callable[[int], None] | None) -> dict[str, int]:
    """Validate every line and stage it; the counts read. Raises ArchiveError naming the first bad line."""
    numbered = _numbered_lines(lines)
    first = next(numbered, None)
    if first is None:
        raise InvalidInput("the archive is empty; make one with `manage.py export`")
    parse_header(first[1])
    read = {"memories": 0, "edges": 0, "refs": 0}
    seen_ids: dict[uuid.UUID, int] = {}
    end: tuple[int, EndRecord] | None = None
    for number, text in numbered:
        if end is not None:
            raise refused(
                number, f"follows the end record of line {end[0]}; an archive ends with its end record"
            )
        record = parse_record(text, number)
        if isinstance(record, MemoryRecord):
            if record.id in seen_ids:
                raise refused(
                    number, f"memory {record.id} appears twice (first on line {seen_ids[record.id]})"
                )
            seen_ids[record.id] = number
            stager.add("memory", _memory_row(number, record))
            read["memories"] += 1
        elif isinstance(record, EdgeRecord):
            stager.add("edge", tuple(getattr(record, name) for name in EDGE_FIELDS))
            read["edges"] += 1
        elif isinstance(record, RefRecord):
            stager.add("ref", (number, *(getattr(record, name) for name in REF_FIELDS)))
            read["refs"] += 1
        else:
            end = (number, record)
        if progress is not None:
            progress(number)
    if end is None:
        raise InvalidInput(
            "the archive has no end record: it is truncated (an export that did not finish, or a partial "
            "copy). Nothing was imported; export it again"
        )
    expected = end[1].model_dump()
    if expected != read:
        raise refused(
            end[0],
            "the end record counts "
            + ", ".join(f"{expected[k]} {k}" for k in read)
            + " but the archive holds "
            + ", ".join(f"{read[k]} {k}" for k in read)
            + "; it is incomplete or was edited",
        )
    for kind in _STAGING:
        stager.flush(kind)
    return read


# A code reference lives in its memory's scope (the staleness check of one project marks only its own
# memories); its memory is the one already here if there is one, else the archive's.
_REF_SCOPE_MISMATCH = """
SELECT r.line FROM archive_ref r
JOIN LATERAL (
    SELECT coalesce(
        (SELECT m.scope FROM memory m WHERE m.id = r.memory_id),
        (SELECT a.scope FROM archive_memory a WHERE a.id = r.memory_id)
    ) AS scope
) owner ON owner.scope IS NOT NULL
WHERE owner.scope <> r.scope
ORDER BY r.line LIMIT 1
"""
_TRUST_USER_SERVED = f"""
SELECT count(*) FROM archive_memory s
WHERE s.status = '{Status.ACTIVE.value}' AND s.type = '{MemoryType.PREFERENCE.value}' AND s.trust = '{Trust.USER.value}'
  AND NOT EXISTS (SELECT 1 FROM memory m WHERE m.id = s.id)
"""

# Each statement returns what it inserted; what it left out is counted from the staging table.
# What memory_insert_staged inserts (its STAGED_COLUMNS, in order).
_STAGED_MEMORIES = """
SELECT s.id, s.type, s.scope, s.content, s.attrs, s.source_agent, s.source_session, s.evidence_uri, s.trust,
    s.confidence, s.status,
    -- The foreign key is checked at commit, so a link to a later record of the archive is fine.
    CASE WHEN EXISTS (SELECT 1 FROM archive_memory t WHERE t.id = s.supersedes)
          OR EXISTS (SELECT 1 FROM memory m WHERE m.id = s.supersedes) THEN s.supersedes END,
    s.valid_from, s.valid_to, s.expires_at, s.created_at, s.updated_at, s.code_state, s.active_from, s.ended_at
FROM archive_memory s
WHERE NOT EXISTS (SELECT 1 FROM memory m WHERE m.id = s.id)
ORDER BY s.line
"""
_UNLINKED = """
SELECT count(*) FROM archive_memory s
WHERE s.supersedes IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM memory m WHERE m.id = s.id AND m.supersedes_id IS NOT DISTINCT FROM s.supersedes)
  AND NOT EXISTS (SELECT 1 FROM memory m WHERE m.id = s.supersedes)
  AND NOT EXISTS (SELECT 1 FROM archive_memory t WHERE t.id = s.supersedes)
"""
_EDGES_LINKABLE = """
FROM archive_edge s
WHERE EXISTS (SELECT 1 FROM memory m WHERE m.id = s.src) AND EXISTS (SELECT 1 FROM memory m WHERE m.id = s.dst)
"""
_INSERT_EDGES = f"""
INSERT INTO memory_edge (src_id, relation, dst_id, weight, source_agent, created_at)
SELECT s.src, s.relation, s.dst, s.weight, s.source_agent, s.created_at {_EDGES_LINKABLE}
ON CONFLICT DO NOTHING
"""
_REFS_LINKABLE = "FROM archive_ref s WHERE EXISTS (SELECT 1 FROM memory m WHERE m.id = s.memory_id)"
_INSERT_REFS = f"""
INSERT INTO memory_ref (memory_id, scope, path, symbol, state, resolved_path, anchor_hash, anchor_commit,
    checked_commit, checked_at, created_at)
SELECT s.memory_id, s.scope, s.path, s.symbol, s.state, s.resolved_path, s.anchor_hash, s.anchor_commit,
    s.checked_commit, s.checked_at, s.created_at {_REFS_LINKABLE}
ON CONFLICT DO NOTHING
"""


def _count(cursor: Any, sql: str) -> int:
    cursor.execute(sql)
    return int(cursor.fetchone()[0])


def archive_import(
    *,
    lines: Iterable[bytes],
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    actor: str = CLI_AGENT,
) -> ImportReport:
    """Import an archive in one transaction; with ``dry_run`` validate it all and report, writing nothing.

    Memories keep their ids, statuses and timestamps; an id already here is left as it is (so importing
    the same archive twice changes nothing the second time). Edges and code references are inserted when
    both their memories exist; vectors are not in archives, so the embedding backfill is asked to run.
    """
    report = ImportReport(dry_run=dry_run)
    with transaction.atomic():
        report.read = _stage(lines, _Stager(), progress)
        with connection.cursor() as cursor:
            cursor.execute(_REF_SCOPE_MISMATCH)
            mismatch = cursor.fetchone()
            if mismatch is not None:
                raise refused(
                    mismatch[0],
                    "ref.scope differs from the scope of its memory; a code reference lives in its "
                    "memory's scope: give the ref its memory's scope, or remove the line",
                )
            report.supersedes_unlinked = _count(cursor, _UNLINKED)
            report.trust_user_served = _count(cursor, _TRUST_USER_SERVED)
            report.memories_already_here = _count(
                cursor,
                "SELECT count(*) FROM archive_memory s WHERE EXISTS (SELECT 1 FROM memory m WHERE m.id = s.id)",
            )
            report.memories = report.read["memories"] - report.memories_already_here
            if not dry_run:
                memory_insert_staged(select=_STAGED_MEMORIES, actor=actor)
            # Edges and refs are judged against the memories as they stand after the insert (in a dry
            # run, as they would stand: here or in the archive).
            present = (
                "memory m"
                if not dry_run
                else "(SELECT id FROM memory UNION ALL SELECT id FROM archive_memory) m"
            )
            linkable_edges = _count(cursor, "SELECT count(*) " + _EDGES_LINKABLE.replace("memory m", present))
            linkable_refs = _count(cursor, "SELECT count(*) " + _REFS_LINKABLE.replace("memory m", present))
            report.edges_skipped = report.read["edges"] - linkable_edges
            report.refs_skipped = report.read["refs"] - linkable_refs
            report.edges_already_here = _count(
                cursor,
                "SELECT count(*) FROM archive_edge s WHERE EXISTS (SELECT 1 FROM memory_edge e "
                "WHERE e.src_id = s.src AND e.relation = s.relation AND e.dst_id = s.dst)",
            )
            report.refs_already_here = _count(
                cursor,
                "SELECT count(*) FROM archive_ref s WHERE EXISTS (SELECT 1 FROM memory_ref r "
                "WHERE r.memory_id = s.memory_id AND r.path = s.path AND r.symbol = s.symbol)",
            )
            report.edges = linkable_edges - report.edges_already_here
            report.refs = linkable_refs - report.refs_already_here
            if dry_run:
                transaction.set_rollback(True)
                return report
            cursor.execute(_INSERT_EDGES)
            cursor.execute(_INSERT_REFS)
        if report.memories or report.edges:
            extensions.retrieval_changed(extensions.ARCHIVE_IMPORTED)
        if report.memories:
            # The worker's backfill embeds them at its next run instead of in up to five minutes.
            transaction.on_commit(
                lambda: Schedule.objects.filter(func=BACKFILL_TASK).update(next_run=timezone.now())
            )
    return report


# --- scan ---------------------------------------------------------------------------------------------

SCAN_CHUNK = 2000
REDACT_REASON = "secret scan"


@dataclass(frozen=True)
class ScanHit:
    """A memory holding credentials: where (``content``, ``attrs.evidence``) and which rules, never what."""

    id: str
    status: str
    type: str
    fields: list[str]
    rules: list[str]


@dataclass
class ScanReport:
    scanned: int = 0
    hits: list[ScanHit] = field(default_factory=list)
    redacted: int = 0


def _scan_memory(memory: dict[str, Any]) -> ScanHit | None:
    found: list[tuple[str, str]] = [("content", f.rule) for f in find_secrets(memory["content"])]
    found += [(f.path, f.rule) for f in find_nested_secrets(memory["attrs"], path="attrs")]
    if not found:
        return None
    return ScanHit(
        id=str(memory["id"]),
        status=memory["status"],
        type=memory["type"],
        fields=list(dict.fromkeys(where for where, _ in found)),
        rules=list(dict.fromkeys(rule for _, rule in found)),
    )


def memory_scan(*, redact: bool = False, progress: Callable[[int, int], None] | None = None) -> ScanReport:
    """Scan the content and every attrs string of every memory, whatever its status.

    With ``redact``, each memory found is rewritten in place (each credential becomes its
    ``[REDACTED:<rule>]`` marker), its vectors are deleted (they were computed from the secret; the
    backfill embeds the new text), and attrs record ``redacted_at`` and ``redact_reason``.
    """
    report = ScanReport()
    total = Memory.objects.count()
    rows = Memory.objects.order_by("id").values("id", "status", "type", "content", "attrs")
    for memory in rows.iterator(chunk_size=SCAN_CHUNK):
        report.scanned += 1
        hit = _scan_memory(memory)
        if hit is not None:
            report.hits.append(hit)
            if redact and _redact(memory["id"]):
                report.redacted += 1
        if progress is not None and report.scanned % SCAN_CHUNK == 0:
            progress(report.scanned, total)
    if progress is not None:
        progress(report.scanned, total)
    return report


def _redact(memory_id: uuid.UUID) -> bool:
    with transaction.atomic():
        # Read again under a row lock: a writer may have changed it since the scan read it.
        memory = Memory.objects.select_for_update().filter(pk=memory_id).first()
        if memory is None:
            return False
        content = redact_secrets(memory.content)
        attrs = redact_nested(memory.attrs)
        assert isinstance(attrs, dict)
        if content == memory.content and attrs == memory.attrs:
            return False
        attrs["redacted_at"] = timezone.now().isoformat()
        attrs["redact_reason"] = REDACT_REASON
        Memory.objects.filter(pk=memory_id).update(content=content, attrs=attrs)
        audit_record(
            action=MemoryAction.REDACTED,
            memory_ids=[memory_id],
            agent=CLI_AGENT,
            detail={"reason": REDACT_REASON},
        )
        # The backfill writes a vector only for the content it embedded, so it cannot restore these.
        MemoryEmbedding.objects.filter(memory_id=memory_id).delete()
    return True
