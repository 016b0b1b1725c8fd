"""Writes to memory: remember, handoff, resume, forget, and the owner's review actions.

Every surface (MCP tools, REST, dashboard, commands) calls these functions; the rules of the contract
(seeds/000) and of spec §1.4–§1.5 live here and nowhere else. Each function validates everything before
it writes, so bad input changes nothing, and owns its transaction.
"""

import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import MD5
from django.db.models.lookups import Exact
from psycopg.types.json import Jsonb

from kenfold import clock
from kenfold.caller import Caller
from kenfold.db_functions import ContentKey, server_bound, xact_lock
from kenfold_common.errors import Conflict, InvalidInput, NotFound
from kenfold_common.identity import SESSION_ID_META_KEY, USER_SCOPE, scope_for_project
from kenfold_common.secrets import redact_secrets, reject_secrets
from memories import access, delta, extensions, providers, search, selectors, usage
from memories.audit import audit_record
from memories.classification import classify_enabled, classify_type
from memories.embedding_store import BACKFILL_TIMEOUT, embed_now, store_vectors
from memories.embedding_store import DEFAULT_BATCH as EMBED_BATCH
from memories.history import parse_as_of
from memories.insert import memory_insert
from memories.models import LIVE_STATUSES, Memory, MemoryAction, MemoryType, Status, Trust
from memories.presenters import FLAGS_KEY, GUIDELINES_KIND, HANDOFF_KIND, memory_view
from memories.quotas import quota_charge
from memories.schemas import (
    ForgetOutput,
    GetContextOutput,
    HandoffOutput,
    MemoryItem,
    MemoryView,
    RecallOutput,
    RememberOutput,
    ResumeOutput,
)
from memories.selectors import parse_memory_id

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 8000
MAX_TTL = timedelta(days=365)
HANDOFF_DEFAULT_TTL = timedelta(days=7)
HANDOFF_MAX_TTL = timedelta(days=30)
MAX_NEXT_STEPS = 20
MAX_STEP_CHARS = 1000
MAX_REASON_CHARS = 1000
SIMILAR_LIMIT = 3
SIMILAR_TRIGRAM_THRESHOLD = 0.5
SIMILAR_MAX_DISTANCE = 0.25
SIMILAR_CANDIDATES = 10
# Session summaries and temporary notes are expected to resemble each other; hints there are noise.
NO_SIMILAR_TYPES = frozenset({MemoryType.EPISODIC, MemoryType.TEMPORARY})
CLI_AGENT = "kenfold-cli"


# --- shared checks -----------------------------------------------------------------------------------


def _clean_text(value: str, *, field: str, limit: int, advice: str) -> str:
    text = (value or "").strip()
    if not text:
        raise InvalidInput(f"{field} must not be empty")
    if "\x00" in text:
        # PostgreSQL text cannot hold NUL; refusing here keeps it a clear input error, not a crash.
        raise InvalidInput(f"{field} contains a NUL character (\\x00); remove it and try again")
    if len(text) > limit:
        raise InvalidInput(f"{field} is {len(text)} characters; the limit is {limit}. {advice}")
    return text


def _clean_reason(reason: str | None) -> str:
    """Reasons are free text for the audit trail: cut, NUL-free, and redacted rather than refused."""
    return redact_secrets((reason or "").replace("\x00", "").strip()[:MAX_REASON_CHARS])


def _reject_secret_session_id(session_id: str | None) -> None:
    """The session id is stored with the memory (source_session) and exported with it: a client that
    puts a credential there is refused like content, rather than dropping it and losing the session."""
    if session_id:
        reject_secrets(field=f"the session id (_meta {SESSION_ID_META_KEY})", text=session_id)


def _ttl(
    ttl_seconds: int | None, *, maximum: timedelta, default: timedelta | None = None
) -> timedelta | None:
    if ttl_seconds is None or ttl_seconds == 0:
        return default
    if ttl_seconds < 0:
        raise InvalidInput("ttl_seconds must not be negative")
    if ttl_seconds > maximum.total_seconds():
        raise InvalidInput(
            f"ttl_seconds is {ttl_seconds}; the limit is {maximum.days} days ({int(maximum.total_seconds())} seconds)"
        )
    return timedelta(seconds=ttl_seconds)


def same_content(content: str) -> Exact:
    """content_key equal to the key of `content`, computed by the same SQL function as the column.

    The md5 comparison lets PostgreSQL use the memory_dedupe index; the full comparison keeps an md5
    collision from merging two different memories.
    """
    return Q(Exact(MD5(F("content_key")), MD5(ContentKey(Value(content))))) & Q(
        Exact(F("content_key"), ContentKey(Value(content)))
    )


def _find_duplicate(*, scope: str, content: str, type: str | None) -> Memory | None:
    candidates = Memory.objects.unexpired(clock.now()).filter(scope=scope, status__in=LIVE_STATUSES)
    if type is not None:
        candidates = candidates.filter(type=type)
    return (
        candidates.filter(same_content(content))
        .only("id", "type", "status")
        .order_by("-created_at", "-id")
        .first()
    )


def _trigram_threshold(vector_hits: list[search.Ranked]) -> float:
    """The trigram similarity a match needs to change similar[], given the vector matches found first.

    With SIMILAR_LIMIT vector matches in hand, a trigram match less similar than the last of them cannot
    enter the list: each memory's score is the higher of its two similarities, and those matches already
    score at least that much. So only matches at least as similar are looked up (ties included; a memory
    found both ways keeps its higher score, as before). The list is the same; the lookup is what
    changes. In a scope full of near-duplicates (an agent noting the same kind of decision again and
    again) every memory passes the 0.5 threshold, and each one was compared twice, which made the lookup
    the dearest statement under load (27 ms at 4,500 memories, docs/benchmarks.md); past a high
    threshold few rows pass and the trigram index can take the lookup.
    """
    scores = sorted((hit.score for hit in vector_hits), reverse=True)
    if len(scores) < SIMILAR_LIMIT:
        return SIMILAR_TRIGRAM_THRESHOLD
    # A little below the last score: PostgreSQL compares the float4 similarity itself, Python the value
    # read back as text, which may differ in the 8th digit. A match looked up in vain changes nothing.
    # pg_trgm refuses a threshold above 1.
    return min(max(SIMILAR_TRIGRAM_THRESHOLD, scores[SIMILAR_LIMIT - 1] - 1e-6), 1.0)


def _similar(memory: Memory, primary: tuple[str, list[float]] | None) -> list[MemoryView]:
    """Up to three active memories in the same scope that say something close (best effort: a failure is
    logged and gives no hints, since the memory is already stored).

    Candidates come from the vector index (cosine distance <= 0.25, with the primary model's vector of the
    new memory) and from trigram similarity (>= 0.5); a memory found by both keeps the higher similarity.
    """
    now = clock.now()
    best: dict[uuid.UUID, float] = {}
    try:
        hits: list[search.Ranked] = []
        if primary is not None:
            model, vector = primary
            hits = search.vector_similar(
                memory_id=memory.id,
                vector=vector,
                model=model,
                scope=memory.scope,
                now=now,
                max_distance=SIMILAR_MAX_DISTANCE,
                limit=SIMILAR_CANDIDATES,
            )
        hits += search.trigram_similar(
            memory_id=memory.id,
            content=memory.content,
            scope=memory.scope,
            now=now,
            threshold=_trigram_threshold(hits),
            limit=SIMILAR_CANDIDATES,
        )
        for hit in hits:
            best[hit.memory_id] = max(best.get(hit.memory_id, 0.0), hit.score)
        rows = search.memories_by_id(list(best))
        ranked = sorted(rows.values(), key=lambda m: (-best[m.id], -m.created_at.timestamp()))[:SIMILAR_LIMIT]
        return extensions.views_presented(
            [memory_view(m, score=round(min(best[m.id], 1.0), 4)) for m in ranked]
        )
    except Exception:
        log.warning("similar-memory lookup failed", exc_info=True, extra={"memory_id": str(memory.id)})
        return []


# --- remember -----------------------------------------------------------------------------------------


def memory_remember(
    *,
    caller: Caller,
    content: str,
    type: str | None = None,
    project: str | None = None,
    supersedes: str | None = None,
    ttl_seconds: int | None = None,
    session_id: str | None = None,
) -> RememberOutput:
    """Store one durable memory, or return the existing one that already says the same thing.

    Dedup: same scope, same normalized text (case, whitespace, trailing punctuation), same type or any
    type when the caller gave none, among active and proposed unexpired memories. Concurrent identical
    calls serialize on an advisory lock, so they store one row.
    """
    caller.require_write("remember")
    content = _clean_text(
        content, field="content", limit=MAX_CONTENT_CHARS, advice="Store one self-contained fact per memory"
    )
    scope = scope_for_project(project)
    access.require_scope(caller=caller, scope=scope, write=True)
    if type is not None and type not in MemoryType.values:
        raise InvalidInput(f"type is not one of: {', '.join(MemoryType.values)}")
    ttl = _ttl(ttl_seconds, maximum=MAX_TTL)
    if type == MemoryType.TEMPORARY and ttl is None:
        raise InvalidInput("temporary memories need ttl_seconds (how long to keep them, at most 365 days)")
    reject_secrets(field="content", text=content)
    _reject_secret_session_id(session_id)

    if supersedes is not None and supersedes.strip():
        return _remember_superseding(
            caller=caller,
            content=content,
            type=type,
            scope=scope,
            target_id=parse_memory_id(supersedes, field="supersedes"),
            ttl=ttl,
            session_id=session_id,
        )

    classified = None
    if type is None and classify_enabled():
        # Asked before the transaction, so no lock is held while the model answers (up to 15 s). A
        # duplicate found now returns without asking; the check is repeated under the lock below.
        duplicate = _find_duplicate(scope=scope, content=content, type=None)
        if duplicate is not None:
            return RememberOutput(
                id=str(duplicate.id), type=duplicate.type, status=duplicate.status, deduplicated=True
            )
        classified = classify_type(content=content, scope=scope)

    with transaction.atomic():
        replaces_session_summary = type == MemoryType.EPISODIC and bool(session_id)
        if replaces_session_summary:
            # Summaries of one session differ in content, so the content lock alone would let two of them
            # both see "no previous summary". Taken before the content lock, always in this order.
            xact_lock("session", scope, caller.agent, session_id or "")
        # Keyed without the type on purpose: a typed and an untyped remember of the same text must
        # serialize, or both could miss each other's row and insert twice.
        xact_lock("remember", scope, content=content)
        duplicate = _find_duplicate(scope=scope, content=content, type=type)
        if duplicate is not None:
            return RememberOutput(
                id=str(duplicate.id), type=duplicate.type, status=duplicate.status, deduplicated=True
            )
        if type is None and classified is not None:
            type, type_source = classified, "model"
        elif type is None:
            type, type_source = (MemoryType.SEMANTIC if scope == "user" else MemoryType.PROJECT), "default"
        else:
            type_source = "agent"
        previous_summary = None
        if replaces_session_summary:
            # One current summary per agent and session: a session that ends twice replaces its summary.
            previous_summary = (
                Memory.objects.select_for_update()
                .filter(
                    scope=scope,
                    type=MemoryType.EPISODIC,
                    source_agent=caller.agent,
                    source_session=session_id,
                    status=Status.ACTIVE,
                )
                .order_by("-created_at", "-id")
                .first()
            )
        memory = _insert(
            caller=caller,
            content=content,
            type=type,
            scope=scope,
            ttl=ttl,
            session_id=session_id,
            attrs={"type_source": type_source},
            supersedes=previous_summary,
        )
    return _remember_output(memory)


def _remember_superseding(
    *,
    caller: Caller,
    content: str,
    type: str | None,
    scope: str,
    target_id: uuid.UUID,
    ttl: timedelta | None,
    session_id: str | None,
) -> RememberOutput:
    with transaction.atomic():
        target = (
            Memory.objects.select_for_update()
            .annotate(same_content=Exact(F("content_key"), ContentKey(Value(content))))
            .filter(pk=target_id)
            .first()
        )
        unknown = NotFound(
            f"supersedes: memory {target_id} does not exist (use an id returned by remember, recall, or get_context)"
        )
        if target is None:
            raise unknown
        access.require_memory(caller=caller, scope=target.scope, not_found=unknown, write=True)
        if target.scope != scope:
            raise InvalidInput(
                f"supersedes: memory {target_id} is in scope {target.scope}, but this memory would be in {scope}; "
                "pass the same project as the memory you replace"
            )
        if target.status != Status.ACTIVE:
            raise Conflict(
                f"supersedes: memory {target_id} is no longer active (it is {target.status}); "
                "use recall to find the current version"
            )
        type_source = "agent"
        if type is None:
            type, type_source = target.type, "superseded"
        # A new version of the project's guidelines stays the guidelines once the owner approves it (a
        # replacement of a memory the owner wrote is always proposed: _needs_review).
        kind = {"kind": GUIDELINES_KIND} if (target.attrs or {}).get("kind") == GUIDELINES_KIND else {}
        if type == target.type and target.same_content:
            # Replacing a statement with itself changes nothing.
            return RememberOutput(
                id=str(target.id), type=target.type, status=target.status, deduplicated=True
            )
        memory = _insert(
            caller=caller,
            content=content,
            type=type,
            scope=scope,
            ttl=ttl,
            session_id=session_id,
            attrs={"type_source": type_source} | kind,
            supersedes=target,
        )
    return _remember_output(memory)


def _insert(
    *,
    caller: Caller,
    content: str,
    type: str,
    scope: str,
    ttl: timedelta | None,
    session_id: str | None,
    attrs: dict,
    supersedes: Memory | None,
    retire_superseded: bool = True,
) -> Memory:
    if type == MemoryType.TEMPORARY and ttl is None:
        raise InvalidInput("temporary memories need ttl_seconds (how long to keep them, at most 365 days)")
    # Every other lock of the write is taken by now (the module doc of memories.quotas says why it matters).
    quota_charge(caller=caller, writes=1, memories=1)
    now = clock.now()
    return memory_insert(
        type=type,
        scope=scope,
        content=content,
        attrs=attrs,
        source_agent=caller.agent,
        source_session=session_id,
        trust=Trust.AGENT,
        status=Status.PROPOSED if _needs_review(type=type, supersedes=supersedes) else Status.ACTIVE,
        supersedes=supersedes,
        retire_superseded=retire_superseded,
        expires_at=now + ttl if ttl else None,
        created_at=now,
        credential=caller.credential,
    )


def _needs_review(*, type: str, supersedes: Memory | None) -> bool:
    """Whether an agent's new memory waits for the owner before it is served.

    Preferences shape every future session, so the owner confirms them. A replacement of a memory the
    owner approved (trust `user`) waits too: otherwise any agent could retire the owner's word by
    superseding it, and review would be skipped. The approved memory stays served until then.
    """
    return type == MemoryType.PREFERENCE or (supersedes is not None and supersedes.trust == Trust.USER)


def _remember_output(memory: Memory) -> RememberOutput:
    primary = _embed_committed(memory)
    similar = [] if memory.type in NO_SIMILAR_TYPES else _similar(memory, primary)
    return RememberOutput(
        id=str(memory.id),
        type=memory.type,
        status=memory.status,
        deduplicated=False,
        similar=similar or None,
        flags=list(memory.attrs.get(FLAGS_KEY) or []) or None,
    )


def _embed_committed(memory: Memory) -> tuple[str, list[float]] | None:
    """Embed a memory whose write has committed, with every configured model; the primary model's name
    and vector (for similar[]), or None.

    Before the answer, so the memory is found by meaning at once by every ranking. Nothing goes to the
    job queue: every configuration with more than one model runs them in this process (a few ms each,
    no network wait), and queueing the second local model measured slower (remember p95 +26 % with 4
    clients, +40 % with 1: the worker's embedding competes for the same cores; docs/benchmarks.md), and
    `manage.py mcp` runs no worker at all. After the commit nothing may fail the call: the memory is
    stored, so a failing model is logged with the memory id and the periodic backfill embeds what is
    missing. Run after the commit, so no lock is held while a provider answers and a deduplicated
    remember (returned earlier) is never embedded again.
    """
    try:
        embedders = providers.embedders()
        vectors = embed_now(embedders=embedders, memory=memory)
    except Exception:
        log.warning(
            "embedding a new memory failed; the backfill embeds it",
            exc_info=True,
            extra={"memory_id": str(memory.id)},
        )
        return None
    primary = None
    if embedders and vectors[0] is not None:
        primary = (embedders[0].name, vectors[0])
    return primary


def embed_committed_batch(memories: list[Memory]) -> None:
    """Embed memories whose write has committed (a docs sync's new sections), in batches, with every
    configured model. Best effort, like a remember's embedding: a failing model is logged and the
    periodic backfill embeds what is missing."""
    if not memories:
        return
    try:
        embedders = providers.embedders()
    except Exception:
        log.warning("loading the embedders failed; the backfill embeds the memories", exc_info=True)
        return
    for embedder in embedders:
        for start in range(0, len(memories), EMBED_BATCH):
            batch = memories[start : start + EMBED_BATCH]
            try:
                vectors = embedder.embed([memory.content for memory in batch], timeout=BACKFILL_TIMEOUT)
                with transaction.atomic():
                    store_vectors(
                        model=embedder.name,
                        items=[(m.id, m.content, v) for m, v in zip(batch, vectors, strict=True)],
                    )
            except Exception:
                log.warning(
                    "embedding new memories failed; the backfill embeds them",
                    exc_info=True,
                    extra={"model": embedder.name},
                )
                break


# --- handoff / resume -----------------------------------------------------------------------------------


def _handoffs(memories: QuerySet[Memory], scope: str) -> QuerySet[Memory]:
    return memories.filter(scope=scope, type=MemoryType.TEMPORARY, attrs__kind=HANDOFF_KIND)


def handoff_create(
    *,
    caller: Caller,
    summary: str,
    next_steps: list[str] | None = None,
    project: str | None = None,
    ttl_seconds: int | None = None,
    session_id: str | None = None,
) -> HandoffOutput:
    """Leave the one active handoff of a project; an earlier one is superseded and linked."""
    caller.require_write("handoff")
    summary = _clean_text(
        summary, field="summary", limit=MAX_CONTENT_CHARS, advice="Summarize; details belong in remember"
    )
    steps: list[str] = []
    for index, step in enumerate(next_steps or []):
        step = (step or "").strip()
        if len(step) > MAX_STEP_CHARS:
            raise InvalidInput(
                f"next_steps[{index}] is {len(step)} characters; the limit is {MAX_STEP_CHARS}"
            )
        if "\x00" in step:
            raise InvalidInput(
                f"next_steps[{index}] contains a NUL character (\\x00); remove it and try again"
            )
        reject_secrets(field=f"next_steps[{index}]", text=step)
        if step:
            steps.append(step)
    if len(steps) > MAX_NEXT_STEPS:
        raise InvalidInput(f"next_steps has {len(steps)} steps; the limit is {MAX_NEXT_STEPS}")
    reject_secrets(field="summary", text=summary)
    _reject_secret_session_id(session_id)
    scope = scope_for_project(project)
    access.require_scope(caller=caller, scope=scope, write=True)
    ttl = _ttl(ttl_seconds, maximum=HANDOFF_MAX_TTL, default=HANDOFF_DEFAULT_TTL)

    with transaction.atomic():
        xact_lock("handoff", scope)
        previous = _handoffs(Memory.objects.filter(status=Status.ACTIVE), scope).order_by(
            "-created_at", "-id"
        )
        newest = previous.first()
        memory = _insert(
            caller=caller,
            content=summary,
            type=MemoryType.TEMPORARY,
            scope=scope,
            ttl=ttl,
            session_id=session_id,
            attrs={"kind": HANDOFF_KIND, "next_steps": steps, "type_source": "agent"},
            supersedes=newest,
            retire_superseded=False,
        )
        # A handoff held for review (it reads like an instruction) leaves the current one served.
        if memory.status == Status.ACTIVE:
            retired = list(previous.exclude(pk=memory.pk).values_list("id", flat=True))
            Memory.objects.filter(pk__in=retired).update(status=Status.SUPERSEDED, ended_at=clock.now())
            audit_record(
                action=MemoryAction.SUPERSEDED,
                memory_ids=retired,
                agent=caller.agent,
                credential=caller.credential,
                detail={"reason": "a newer handoff"},
            )
    # Recall searches handoffs too (they are active memories of the scope), by meaning as well as by word.
    _embed_committed(memory)
    return HandoffOutput(
        id=str(memory.id), expires_at=memory.expires_at, flags=list(memory.attrs.get(FLAGS_KEY) or []) or None
    )


def handoff_resume(*, caller: Caller, project: str | None = None) -> ResumeOutput:
    """The latest unexpired handoff of the project; the first caller is recorded as the one who resumed it."""
    caller.require_write("resume")
    scope = scope_for_project(project)
    access.require_scope(caller=caller, scope=scope, write=True)
    handoff = (
        _handoffs(Memory.objects.served(clock.now()).for_views(), scope)
        .order_by("-created_at", "-id")
        .first()
    )
    if handoff is None:
        return ResumeOutput()
    try:
        # Conditional on the key being absent, so concurrent resumers cannot overwrite the first one.
        with connection.cursor() as cursor:
            cursor.execute(
                """UPDATE memory SET attrs = attrs || jsonb_build_object('resumed_at', %s::text, 'resumed_by', %s::text)
                   WHERE id = %s AND NOT attrs ? 'resumed_at'""",
                [clock.now().isoformat(), caller.agent, handoff.id],
            )
            if cursor.rowcount:
                audit_record(
                    action=MemoryAction.RESUMED,
                    memory_ids=[handoff.id],
                    agent=caller.agent,
                    credential=caller.credential,
                )
        handoff.refresh_from_db(fields=["attrs"])
    except Exception:
        log.warning(
            "recording who resumed a handoff failed", exc_info=True, extra={"memory_id": str(handoff.id)}
        )
    return ResumeOutput(handoff=memory_view(handoff))


# --- forget and the owner's review ----------------------------------------------------------------------


def _deletion_record(*, by: str, reason: str | None) -> dict[str, str]:
    """Who deleted a memory, and why when they said: kept in its attrs."""
    return {"forgotten_by": by} | ({"forget_reason": reason} if reason else {})


def _mark_deleted(*, memory_id: uuid.UUID, record: dict[str, str]) -> bool:
    """Soft-delete a memory not yet deleted, adding `record` to its attrs; whether a row changed."""
    changed = server_bound(
        f"UPDATE memory SET status = '{Status.DELETED}', attrs = coalesce(attrs, '{{}}'::jsonb) || %(record)s::jsonb, "
        f"ended_at = %(now)s WHERE id = %(id)s AND status <> '{Status.DELETED}' RETURNING id",
        {"id": memory_id, "record": Jsonb(record), "now": clock.now()},
        prepare=True,
    )
    return bool(changed)


def memory_forget(*, caller: Caller, memory_id: str, reason: str | None = None) -> ForgetOutput:
    """Soft-delete: the row stays for audit; the first deletion's who and why are kept."""
    caller.require_write("forget")
    target_id = parse_memory_id(memory_id)
    reason = _clean_reason(reason)
    record = _deletion_record(by=caller.agent, reason=reason)
    unknown = NotFound(
        f"memory {target_id} does not exist (use an id returned by remember, recall, or get_context)"
    )
    if caller.projects is not None or not caller.user_memories:
        # A memory's scope never changes, so reading it first leaves no window for the check to go stale.
        scope = Memory.objects.filter(pk=target_id).values_list("scope", flat=True).first()
        access.require_memory(caller=caller, scope=scope, not_found=unknown, write=True)
    with transaction.atomic():
        # One statement: a memory already deleted keeps its first deletion's who and why.
        if _mark_deleted(memory_id=target_id, record=record):
            audit_record(
                action=MemoryAction.FORGOTTEN,
                memory_ids=[target_id],
                agent=caller.agent,
                credential=caller.credential,
                detail={"reason": reason},
            )
        elif not Memory.objects.filter(pk=target_id).exists():
            raise unknown
        # After the memory row's lock, like every write (memories.quotas).
        quota_charge(caller=caller, writes=1)
    return ForgetOutput(id=str(target_id), status=Status.DELETED)


class NotProposed(InvalidInput):
    """Approve or reject on a memory that is no longer proposed: someone decided first (another page, the
    CLI). ``status`` is what it is now, for an adapter that words it its own way."""

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status


def memory_approve(*, memory_id: str, replaces: str | None = None, actor: str = CLI_AGENT) -> Memory:
    """Serve a proposed memory, confirmed by the user (trust = user); optionally retiring another one."""
    target_id = parse_memory_id(memory_id)
    replaced_id = parse_memory_id(replaces, field="replaces") if replaces else None
    with transaction.atomic():
        memory = Memory.objects.select_for_update().filter(pk=target_id).first()
        if memory is None:
            raise NotFound(f"memory {target_id} does not exist")
        if replaced_id is None and memory.status == Status.ACTIVE:
            return memory
        if memory.status != Status.PROPOSED:
            raise NotProposed(
                f"memory {target_id} is {memory.status}, not proposed; only proposed memories are approved",
                status=memory.status,
            )
        retire_id = replaced_id or memory.supersedes_id
        if retire_id is not None:
            old = Memory.objects.select_for_update().filter(pk=retire_id).first()
            if replaced_id is not None:
                if old is None:
                    raise NotFound(f"replaces: memory {replaced_id} does not exist")
                if old.scope != memory.scope or old.status != Status.ACTIVE or old.pk == memory.pk:
                    raise InvalidInput(
                        f"replaces: memory {replaced_id} must be a different active memory in {memory.scope}"
                    )
                memory.supersedes = old
            if old is not None and old.status == Status.ACTIVE:
                Memory.objects.filter(pk=old.pk).update(status=Status.SUPERSEDED, ended_at=clock.now())
                audit_record(
                    action=MemoryAction.SUPERSEDED,
                    memory_ids=[old.pk],
                    agent=actor,
                    detail={"by": str(memory.pk)},
                )
        memory.status = Status.ACTIVE
        memory.trust = Trust.USER
        memory.active_from = clock.now()
        memory.attrs = (memory.attrs or {}) | {"approved_by": actor}
        memory.save(update_fields=["status", "trust", "supersedes", "attrs", "active_from"])
        audit_record(action=MemoryAction.APPROVED, memory_ids=[memory.pk], agent=actor)
    return memory


def memory_reject(*, memory_id: str, reason: str | None = None, actor: str = CLI_AGENT) -> Memory:
    """Refuse a proposed memory: it is deleted, with who and why, and never proposed again."""
    target_id = parse_memory_id(memory_id)
    reason = _clean_reason(reason)
    with transaction.atomic():
        memory = Memory.objects.select_for_update().filter(pk=target_id).first()
        if memory is None:
            raise NotFound(f"memory {target_id} does not exist")
        if memory.status != Status.PROPOSED:
            raise NotProposed(
                f"memory {target_id} is {memory.status}, not proposed; use forget to remove it",
                status=memory.status,
            )
        memory.status = Status.DELETED
        memory.attrs = (memory.attrs or {}) | _deletion_record(by=actor, reason=reason)
        memory.save(update_fields=["status", "attrs"])
        audit_record(
            action=MemoryAction.REJECTED, memory_ids=[memory.pk], agent=actor, detail={"reason": reason}
        )
    return memory


# --- get_context with delta state ----------------------------------------------------------------------

# How many memories a snapshot remembers the agent holding: about ten full get_context answers, a few
# tens of kilobytes per row.
MAX_HELD_MEMORIES = 1000


def context_deliver(
    *,
    caller: Caller,
    task: str | None = None,
    project: str | None = None,
    budget_tokens: int | None = None,
    state: str | None = None,
    as_of: str | None = None,
    session_id: str | None = None,
    used: list[str] | None = None,
) -> GetContextOutput:
    """get_context as agents call it: the context (selectors.context_get) and a `state` for the next call.

    With `as_of`, the context as it was served at that past time, without a state: an agent holding a
    past answer does not hold what is served now, so it must never become the base of a delta.

    With `state`, memories the agent already holds unchanged come as references, and `removed` names
    those it holds that were retired since. The new state stands for everything the agent then holds:
    what it held before (minus removed), plus what this answer sent. A memory merely irrelevant to this
    task stays held. A bad or stale state is an error (memories.delta), never an empty start.

    The snapshot row is bookkeeping about the caller, not memory: get_context stays a read of memory
    (read-only grants may call it) and nothing in the store changes.
    """
    now = clock.now()
    reused = usage.parse_used(used)
    scope = scope_for_project(project)
    if scope != USER_SCOPE:
        # Before the state is read: a state must not tell a limited caller anything of another project.
        access.require_scope(caller=caller, scope=scope, write=False)
    moment = parse_as_of(as_of, now=now)
    if moment is not None and state is not None:
        raise InvalidInput("as_of answers are not deltas: call get_context with as_of and without state")
    if moment is not None:
        output = selectors.context_get(
            caller=caller, task=task, project=project, budget_tokens=budget_tokens, as_of=moment
        )
    else:
        output = _context_with_state(
            caller=caller,
            task=task,
            project=project,
            scope=scope,
            budget_tokens=budget_tokens,
            state=state,
            now=now,
        )
    # Served, so recorded like any answer (memories.usage), a past one too: the owner sees what agents read.
    _record_usage(
        caller=caller,
        tool="get_context",
        served=output.sent_items(),
        session_id=session_id,
        used=reused,
        now=now,
    )
    return output


def _context_with_state(
    *,
    caller: Caller,
    task: str | None,
    project: str | None,
    scope: str,
    budget_tokens: int | None,
    state: str | None,
    now: datetime,
) -> GetContextOutput:
    """get_context now (`scope` is `project`'s), as a delta against `state` when given, with the new
    state for the next call."""
    held = delta.held_for_state(state=state, scope=scope, now=now) if state is not None else None
    output = selectors.context_get(
        caller=caller, task=task, project=project, budget_tokens=budget_tokens, held=held
    )
    removed = set(output.removed or [])
    holding = {key: value for key, value in (held or {}).items() if key not in removed}
    for item in output.sent_items():
        # Moved to the end: the memories of this answer are the newest the agent holds.
        holding.pop(item.id, None)
        # Every item the packer sent carries its hash (a full view gets it there, a reference has it).
        holding[item.id] = item.content_hash or ""
    if len(holding) > MAX_HELD_MEMORIES:
        # Forgetting that the agent holds a memory only makes a later answer send it in full again, so
        # the oldest entries go first (this answer's items were added last).
        holding = dict(list(holding.items())[-MAX_HELD_MEMORIES:])
    output.state = delta.save_state(scope=scope, held=holding, now=now)
    return output


def recall_deliver(
    *, caller: Caller, session_id: str | None = None, used: list[str] | None = None, **arguments: Any
) -> RecallOutput:
    """recall as agents call it: selectors.memory_recall with these `arguments`, recorded as
    served (memories.usage); `used` marks memories that earlier answers served and the agent reused.

    Like get_context's state, the record is bookkeeping about the caller, so read-only grants may call it.
    """
    now = clock.now()
    reused = usage.parse_used(used)
    output = selectors.memory_recall(caller=caller, **arguments)
    _record_usage(
        caller=caller, tool="recall", served=output.memories, session_id=session_id, used=reused, now=now
    )
    return output


def _record_usage(
    *,
    caller: Caller,
    tool: str,
    served: list[MemoryItem],
    session_id: str | None,
    used: list[uuid.UUID],
    now: datetime,
) -> None:
    # Reuse first: it refers to earlier answers, never to the one being recorded.
    usage.usage_mark_used(caller=caller, memory_ids=used, session_id=session_id, now=now)
    usage.usage_record(
        caller=caller, tool=tool, memory_ids=[item.id for item in served], session_id=session_id, now=now
    )
