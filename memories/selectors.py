"""Reads: recall, get_context, and the owner's listings (spec §1.5–§1.7).

Only active, unexpired memories are ever served to agents; user-wide memories are always included
next to the project's.
"""

import uuid
from dataclasses import dataclass

from django.db.models import Count, QuerySet, Sum

from kenfold import clock
from kenfold.caller import Caller
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import USER_SCOPE, scope_for_project, scope_from_owner
from kenfold_common.secrets import redact_secrets
from memories import extensions, search
from memories.models import Extraction, ExtractionStatus, Memory, MemoryType, Status
from memories.presenters import HANDOFF_KIND, memory_view
from memories.retrieval import SearchOptions, retrieve
from memories.schemas import GetContextOutput, MemoryView, RecallOutput

MAX_QUERY_CHARS = 2000
DEFAULT_LIMIT = 10
MAX_LIMIT = 50

DEFAULT_BUDGET_TOKENS = 2000
MIN_BUDGET_TOKENS = 200
MAX_BUDGET_TOKENS = 32000
RECENT_SESSIONS = 3
RECENT_CONTENT_CHARS = 800
SECTION_LIMIT = 50


def read_scopes(project: str | None) -> list[str]:
    scope = scope_for_project(project)
    return [USER_SCOPE] if scope == USER_SCOPE else [USER_SCOPE, scope]


def _clean_query(text: str | None, *, field: str, required: bool) -> str:
    query = (text or "").replace("\x00", " ").strip()[:MAX_QUERY_CHARS]
    if required and not query:
        raise InvalidInput(f"{field} must not be empty: describe what you are looking for")
    # Queries go to search (and later to an embedding provider): a pasted credential is cut out, not refused.
    return redact_secrets(query)


def _limit(limit: int | None) -> int:
    if limit is None or limit == 0:
        return DEFAULT_LIMIT
    if limit < 0:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
    return min(limit, MAX_LIMIT)


def _types(types: list[str] | None) -> list[str] | None:
    if not types:
        return None
    unknown = sorted(set(types) - set(MemoryType.values))
    if unknown:
        raise InvalidInput(
            f"types {unknown} are not memory types; use any of: {', '.join(MemoryType.values)}"
        )
    return list(dict.fromkeys(types))


def memory_recall(
    *,
    caller: Caller,
    query: str,
    types: list[str] | None = None,
    project: str | None = None,
    limit: int | None = None,
    options: SearchOptions | None = None,
) -> RecallOutput:
    """Search memory in natural language; the project's and user-wide memories, best first.

    `options` switches pipeline stages off for the evaluation harness; agents always get the full pipeline.
    """
    cleaned = _clean_query(query, field="query", required=True)
    return RecallOutput(
        memories=retrieve(
            query=cleaned,
            scopes=read_scopes(project),
            types=_types(types),
            limit=_limit(limit),
            options=options,
        )
    )


def estimate_tokens(view: MemoryView) -> int:
    """A cheap, deliberately generous token estimate: about three UTF-8 bytes per token plus framing."""
    size = len(view.content.encode()) + len(view.scope.encode())
    size += sum(len(step.encode()) + 4 for step in view.next_steps or [])
    return size // 3 + 40


def _budget(budget_tokens: int | None) -> int:
    if budget_tokens is None or budget_tokens == 0:
        return DEFAULT_BUDGET_TOKENS
    if budget_tokens < 0:
        raise InvalidInput("budget_tokens must not be negative")
    return max(MIN_BUDGET_TOKENS, min(budget_tokens, MAX_BUDGET_TOKENS))


class _Packer:
    """Fills sections in priority order from one budget; each memory appears at most once."""

    def __init__(self, budget: int) -> None:
        self.remaining = budget
        self.seen: set[str] = set()
        self.truncated = False

    def take(self, views: list[MemoryView]) -> list[MemoryView]:
        taken = []
        for view in views:
            if view.id in self.seen:
                continue
            cost = estimate_tokens(view)
            if cost > self.remaining:
                # Later, smaller memories may still fit, so keep going.
                self.truncated = True
                continue
            self.remaining -= cost
            self.seen.add(view.id)
            taken.append(view)
        return taken


def _recent_view(memory: Memory) -> MemoryView:
    view = memory_view(memory)
    if len(view.content) > RECENT_CONTENT_CHARS:
        view.content = view.content[:RECENT_CONTENT_CHARS].rstrip() + "…"
    return view


def context_get(
    *, caller: Caller, task: str | None = None, project: str | None = None, budget_tokens: int | None = None
) -> GetContextOutput:
    """Everything an agent should know at the start of a task, within a token budget."""
    budget = _budget(budget_tokens)
    scope = scope_for_project(project)
    scopes = read_scopes(project)
    task_query = _clean_query(task, field="task", required=False)
    packer = _Packer(budget)
    served = Memory.objects.served(clock.now()).for_views()

    # One ordered index scan per scope, merged here: `scope IN (...)` has no ordered index path, so a
    # single query sorts every preference of both scopes (124 ms at a million memories).
    preferences = sorted(
        (
            memory
            for one_scope in scopes
            for memory in served.filter(type=MemoryType.PREFERENCE, scope=one_scope).order_by(
                "-created_at", "-id"
            )[:SECTION_LIMIT]
        ),
        key=lambda memory: (memory.created_at, memory.id),
        reverse=True,
    )
    handoff = (
        served.filter(scope=scope, type=MemoryType.TEMPORARY, attrs__kind=HANDOFF_KIND)
        .exclude(attrs__has_key="resumed_at")
        .order_by("-created_at", "-id")
        .first()
    )
    recent = served.filter(scope=scope, type=MemoryType.EPISODIC).order_by("-created_at", "-id")[
        :RECENT_SESSIONS
    ]

    output = GetContextOutput(
        preferences=packer.take([memory_view(m) for m in preferences[:SECTION_LIMIT]]),
        handoff=(packer.take([memory_view(handoff)]) or [None])[0] if handoff else None,
        recent=packer.take([_recent_view(m) for m in recent]),
        project=[],
        relevant=[],
    )
    if scope != USER_SCOPE:
        rules = served.filter(scope=scope, type=MemoryType.PROJECT).order_by("-created_at", "-id")[
            :SECTION_LIMIT
        ]
        rule_views = extensions.views_presented([memory_view(m) for m in rules])
        # Rules about code that is gone or changed come last: they may no longer hold.
        rule_views.sort(key=lambda view: bool(view.stale))
        output.project = packer.take(rule_views)
    if task_query:
        output.relevant = packer.take(
            retrieve(query=task_query, scopes=scopes, types=None, limit=DEFAULT_LIMIT)
        )
    output.truncated = packer.truncated or None
    return output


def memory_list(
    *,
    status: str | None = None,
    type: str | None = None,
    scope: str | None = None,
    stale: bool = False,
    limit: int = 50,
) -> QuerySet[Memory]:
    """The owner's listing, newest first, in any status; `stale` keeps memories whose code changed or went."""
    memories = Memory.objects.order_by("-created_at", "-id")
    if stale:
        memories = memories.filter(code_state__isnull=False)
    if status:
        if status not in Status.values:
            raise InvalidInput(f"status {status!r} is not one of: {', '.join(Status.values)}")
        memories = memories.filter(status=status)
    if type:
        if type not in MemoryType.values:
            raise InvalidInput(f"type {type!r} is not one of: {', '.join(MemoryType.values)}")
        memories = memories.filter(type=type)
    if scope:
        memories = memories.filter(scope=scope_from_owner(scope))
    return memories[: max(1, min(limit, 500))]


# --- extraction and review ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtractionCounts:
    pending: int
    running: int
    done: int
    failed: int
    stored: int


def extraction_counts() -> ExtractionCounts:
    """Session summaries by extraction state (consolidation digests are never extracted), and how many
    memories extraction stored."""
    summaries = Memory.objects.filter(type=MemoryType.EPISODIC, status=Status.ACTIVE).exclude(
        attrs__contains={"kind": "digest"}
    )
    by_status = dict(
        Extraction.objects.values_list("status")
        .annotate(count=Count("source_id"))
        .values_list("status", "count")
    )
    return ExtractionCounts(
        pending=summaries.filter(extraction__isnull=True).count(),
        running=by_status.get(ExtractionStatus.RUNNING, 0),
        done=by_status.get(ExtractionStatus.DONE, 0),
        failed=by_status.get(ExtractionStatus.FAILED, 0),
        stored=Extraction.objects.aggregate(total=Sum("stored"))["total"] or 0,
    )


@dataclass(frozen=True)
class ReviewItem:
    """A proposed memory as the owner reviews it: where it came from, the quote it rests on, and the
    memories it may duplicate or contradict (numbered 1.. for "replace similar #N")."""

    memory: Memory
    evidence: str
    source_summary: Memory | None
    similar: list[Memory]


def memory_review_queue(*, limit: int = 100) -> list[ReviewItem]:
    """Proposed memories, oldest first, with their provenance and the active memories they resemble."""
    now = clock.now()
    items = []
    for memory in (
        Memory.objects.unexpired(now).filter(status=Status.PROPOSED).order_by("created_at", "id")[:limit]
    ):
        attrs = memory.attrs or {}
        ids = list(dict.fromkeys(filter(None, map(_as_uuid, attrs.get("similar_to") or []))))
        hits = search.trigram_similar(
            memory_id=memory.id, content=memory.content, scope=memory.scope, now=now, threshold=0.5, limit=3
        )
        ids += [hit.memory_id for hit in hits if hit.memory_id not in ids]
        found = Memory.objects.in_bulk(ids)
        # Only active memories can be replaced; a proposal it resembles is reviewed on its own.
        similar = [
            found[key]
            for key in ids
            if key in found and found[key].status == Status.ACTIVE and found[key].scope == memory.scope
        ][:3]
        source_id = _as_uuid(attrs.get("extracted_from"))
        source = Memory.objects.filter(pk=source_id).first() if source_id else None
        items.append(
            ReviewItem(
                memory=memory,
                evidence=str(attrs.get("evidence") or ""),
                source_summary=source,
                similar=similar,
            )
        )
    return items


def _as_uuid(value: object) -> uuid.UUID | None:
    try:
        return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))
    except ValueError:
        return None
