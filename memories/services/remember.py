"""remember (spec §1.4): a new memory, deduplicated, or one that supersedes another; with similar[] hints."""

import logging
import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q, Value
from django.db.models.functions import MD5
from django.db.models.lookups import Exact

from access import reach
from access.caller import Caller
from kenfold import clock
from kenfold.db_functions import ContentKey, xact_lock
from kenfold_common.errors import Conflict, InvalidInput, NotFound
from kenfold_common.identity import scope_for_project
from kenfold_common.secrets import reject_secrets
from memories import extensions
from memories.models import LIVE_STATUSES, Memory, MemoryType, Status
from memories.presenters import FLAGS_KEY, GUIDELINES_KIND, memory_view
from memories.schemas import MemoryView, RememberOutput
from memories.search.hits import Ranked, memories_by_id
from memories.search.trigram import trigram_similar
from memories.search.vector import vector_similar
from memories.selectors import parse_memory_id
from memories.services.classification import classify_enabled, classify_type
from memories.services.writes import (
    agent_insert,
    clean_text,
    embed_committed,
    parse_ttl,
    reject_secret_session_id,
)

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 8000
MAX_TTL = timedelta(days=365)
SIMILAR_LIMIT = 3
SIMILAR_TRIGRAM_THRESHOLD = 0.5
SIMILAR_MAX_DISTANCE = 0.25
SIMILAR_CANDIDATES = 10

# Session summaries and temporary notes are expected to resemble each other; hints there are noise.
NO_SIMILAR_TYPES = frozenset({MemoryType.EPISODIC, MemoryType.TEMPORARY})


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


def _trigram_threshold(vector_hits: list[Ranked]) -> float:
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
        hits: list[Ranked] = []
        if primary is not None:
            model, vector = primary
            hits = vector_similar(
                memory_id=memory.id,
                vector=vector,
                model=model,
                scope=memory.scope,
                now=now,
                max_distance=SIMILAR_MAX_DISTANCE,
                limit=SIMILAR_CANDIDATES,
            )
        hits += trigram_similar(
            memory_id=memory.id,
            content=memory.content,
            scope=memory.scope,
            now=now,
            threshold=_trigram_threshold(hits),
            limit=SIMILAR_CANDIDATES,
        )
        for hit in hits:
            best[hit.memory_id] = max(best.get(hit.memory_id, 0.0), hit.score)
        rows = memories_by_id(list(best))
        ranked = sorted(rows.values(), key=lambda m: (-best[m.id], -m.created_at.timestamp()))[:SIMILAR_LIMIT]
        return extensions.views_presented(
            [memory_view(m, score=round(min(best[m.id], 1.0), 4)) for m in ranked]
        )
    except Exception:
        log.warning("similar-memory lookup failed", exc_info=True, extra={"memory_id": str(memory.id)})
        return []


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
    content = clean_text(
        content, field="content", limit=MAX_CONTENT_CHARS, advice="Store one self-contained fact per memory"
    )
    scope = scope_for_project(project)
    reach.require_scope(caller=caller, scope=scope, write=True)
    if type is not None and type not in MemoryType.values:
        raise InvalidInput(f"type is not one of: {', '.join(MemoryType.values)}")
    ttl = parse_ttl(ttl_seconds, maximum=MAX_TTL)
    if type == MemoryType.TEMPORARY and ttl is None:
        raise InvalidInput("temporary memories need ttl_seconds (how long to keep them, at most 365 days)")
    reject_secrets(field="content", text=content)
    reject_secret_session_id(session_id)

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
        memory = agent_insert(
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
        reach.require_memory(caller=caller, scope=target.scope, not_found=unknown, write=True)
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
        memory = agent_insert(
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


def _remember_output(memory: Memory) -> RememberOutput:
    primary = embed_committed(memory)
    similar = [] if memory.type in NO_SIMILAR_TYPES else _similar(memory, primary)
    return RememberOutput(
        id=str(memory.id),
        type=memory.type,
        status=memory.status,
        deduplicated=False,
        similar=similar or None,
        flags=list(memory.attrs.get(FLAGS_KEY) or []) or None,
    )
