"""The one way a memory row is created: every write (remember, handoff, extraction, docs sync, a
consolidation digest, an archive import) goes through `memory_insert` or, for an archive's rows,
`memory_insert_staged`, so the rules of a new row are stated once: timestamps, the poisoning screen and
what it holds for review, the retirement of what a served memory supersedes, the audit trail's events
and the insert hooks.

tests/memories/test_one_insert_path.py fails when another module creates a Memory row.
"""

from datetime import datetime
from typing import Any

from django.db import connection

from kenfold import clock
from kenfold_common.poisoning import screen
from memories import extensions
from memories.audit import audit_record
from memories.models import Memory, MemoryAction, Status, Trust
from memories.presenters import FLAGS_KEY

# Trust levels whose flagged writes wait for the owner. The owner's own word (trust `user`: approved
# memories, digests the owner applied, archives of them) is flagged but served.
HELD_TRUSTS = frozenset({Trust.AGENT, Trust.EXTERNAL})


def screened(*, content: str, attrs: dict[str, Any], trust: str, status: str) -> tuple[str, dict[str, Any]]:
    """The status and attrs a new memory is stored with once screened for instruction-like content.

    A flagged memory keeps the reasons in attrs (shown in review and served as `flags`); one written by
    an agent or an outside source is held `proposed` for the owner instead of served at once.
    """
    served_text = "\n".join([content, *(str(step) for step in attrs.get("next_steps") or [])])
    reasons = screen(served_text)
    if not reasons:
        return status, attrs
    if trust in HELD_TRUSTS and status == Status.ACTIVE:
        status = Status.PROPOSED
    return status, attrs | {FLAGS_KEY: reasons}


def memory_insert(
    *,
    type: str,
    scope: str,
    content: str,
    source_agent: str,
    trust: str,
    status: str,
    attrs: dict[str, Any] | None = None,
    source_session: str | None = None,
    confidence: float = 0.5,
    supersedes: Memory | None = None,
    retire_superseded: bool = True,
    expires_at: datetime | None = None,
    created_at: datetime | None = None,
    actor: str | None = None,
    credential: str | None = None,
    audit_detail: dict[str, Any] | None = None,
    screen_content: bool = True,
) -> Memory:
    """Create one memory inside the caller's transaction; the caller has validated it.

    `status` is what the caller would store; the screen may hold it `proposed`. A served memory retires
    the one it supersedes (unless `retire_superseded` is off: a docs sync retires a page's old sections
    itself, all at once); a proposed one leaves it serving until the owner approves (memory_approve
    retires it then). `created_at` defaults to now (a digest is dated like its last session). The
    `created` event names `actor` (the source agent unless someone else decided, as the owner applying
    a digest) and `credential`, with the type, the status, what it supersedes, the screen's flags and
    `audit_detail`. Only the project's guidelines skip the screen (`screen_content`): they are the
    owner's instructions to agents by design.
    """
    now = clock.now()
    actor = actor or source_agent
    attrs = attrs or {}
    if screen_content:
        status, attrs = screened(content=content, attrs=attrs, trust=trust, status=status)
    memory = Memory.objects.create(
        type=type,
        scope=scope,
        content=content,
        attrs=attrs,
        source_agent=source_agent,
        source_session=source_session,
        trust=trust,
        confidence=confidence,
        status=status,
        supersedes=supersedes,
        expires_at=expires_at,
        created_at=created_at or now,
        updated_at=now,
    )
    if retire_superseded and supersedes is not None and memory.status == Status.ACTIVE:
        retired = Memory.objects.filter(pk=supersedes.pk, status=Status.ACTIVE).update(
            status=Status.SUPERSEDED, ended_at=now
        )
        # Recorded only if it was still served: a concurrent write may have retired it first.
        if retired:
            audit_record(
                action=MemoryAction.SUPERSEDED,
                memory_ids=[supersedes.pk],
                agent=actor,
                credential=credential,
                detail={"by": str(memory.pk)},
            )
    audit_record(
        action=MemoryAction.CREATED,
        memory_ids=[memory.pk],
        agent=actor,
        credential=credential,
        detail={
            "type": type,
            "status": memory.status,
            "supersedes": str(supersedes.pk) if supersedes else None,
            "flags": attrs.get(FLAGS_KEY),
        }
        | (audit_detail or {}),
    )
    extensions.memory_inserted(memory)
    return memory


# The columns an archive restores, in this order (archive.records.MEMORY_FIELDS names them the same).
STAGED_COLUMNS = (
    "id, type, scope, content, attrs, source_agent, source_session, evidence_uri, trust, confidence, "
    "status, supersedes_id, valid_from, valid_to, expires_at, created_at, updated_at, code_state, "
    "active_from, ended_at"
)
# Imported memories per `imported` event statement.
EVENT_BATCH = 5000


def memory_insert_staged(*, select: str, actor: str) -> None:
    """Create the memories an archive restores, in one statement: `select` yields STAGED_COLUMNS.

    The rows keep their ids, statuses and timestamps; each row's status and attrs must already be
    `screened` (the archive screens each record as it reads it, while the rows wait in PostgreSQL, so
    the import stays one statement however long the archive is). The insert hooks do not run: an
    archive carries each memory's code references with their anchors, which the hook would record
    afresh and unanchored. Each memory gets an `imported` event naming `actor`.
    """
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO memory ({STAGED_COLUMNS})\n{select}\nRETURNING id")
        # The ids are read in batches from the result already fetched; one event per memory.
        while batch := cursor.fetchmany(EVENT_BATCH):
            audit_record(action=MemoryAction.IMPORTED, memory_ids=[row[0] for row in batch], agent=actor)
