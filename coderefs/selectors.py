"""Reads of code references: what clients should check, what views show, which memories went stale."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, F, Min

from access import reach
from access.caller import Caller
from coderefs.models import STALE_REF, CodeRef, RefState
from coderefs.schemas import Target, TargetsOutput
from coderefs.services import project_scope
from kenfold import paging
from kenfold.db_functions import model_rows
from kenfold_common.coderefs import REF_STATES
from memories.models import LIVE_STATUSES
from memories.schemas import CodeRefView, MemoryView

MAX_TARGETS = 500


def refs_targets(*, caller: Caller, project: str | None) -> TargetsOutput:
    """Distinct targets of the project's live memories: never-checked first, then least recently checked."""
    scope = project_scope(project)
    reach.require_scope(caller=caller, scope=scope, write=False)
    rows = (
        CodeRef.objects.filter(scope=scope, memory__status__in=LIVE_STATUSES)
        .values("path", "symbol", "anchor_commit", "anchor_hash")
        .annotate(last_checked=Min("checked_at"))
        .order_by(F("last_checked").asc(nulls_first=True), "path", "symbol")[:MAX_TARGETS]
    )
    return TargetsOutput(
        scope=scope, targets=[Target(**{k: row[k] for k in Target.model_fields}) for row in rows]
    )


def _refs_by_memory(memory_ids: Iterable[str | UUID]) -> dict[str, list[CodeRef]]:
    refs: dict[str, list[CodeRef]] = defaultdict(list)
    # Every view a memories service returns passes here: a prepared statement rather than a queryset.
    found = model_rows(
        CodeRef, "WHERE memory_id = ANY(%s::uuid[]) AND state <> %s", [list(memory_ids), RefState.UNRESOLVED]
    )
    for ref in found:
        refs[str(ref.memory_id)].append(ref)
    return refs


def memory_code_refs(*, memory_id: str | UUID) -> list[CodeRef]:
    """A memory's code references, every state included, by path and symbol (the owner's detail page)."""
    return list(CodeRef.objects.filter(memory_id=memory_id).order_by("path", "symbol"))


def attach_code_refs(views: list[MemoryView]) -> None:
    """Fill `code_refs` of views whose memories mention code (one query for all); registered with
    memories.extensions, so every view a memories service returns carries them. `stale` comes from the
    memory row (its code_state)."""
    refs = _refs_by_memory(view.id for view in views)
    for view in views:
        own = refs.get(view.id)
        if not own:
            continue
        view.code_refs = [
            CodeRefView(
                path=ref.path or None,
                symbol=ref.symbol or None,
                state=ref.state,
                checked_commit=ref.checked_commit[:12] if ref.checked_commit else None,
            )
            for ref in sorted(own, key=lambda r: (r.path, r.symbol))
        ]
        # A view about code says whether it is stale either way; the memory row knows which (code_state).
        view.stale = bool(view.stale)


@dataclass(frozen=True)
class StaleRef:
    memory_id: str
    content: str
    description: str


@dataclass(frozen=True)
class RefsStatus:
    counts: dict[str, int]
    stale: list[StaleRef]


def refs_status(*, scope: str | None = None, limit: int = 50) -> RefsStatus:
    refs = CodeRef.objects.filter(memory__status__in=LIVE_STATUSES)
    if scope:
        refs = refs.filter(scope=scope)
    counts = dict.fromkeys(REF_STATES, 0)
    for row in refs.values("state").annotate(n=Count("*")):
        counts[row["state"]] = row["n"]
    stale_rows = (
        refs.filter(STALE_REF)
        .select_related("memory")
        .order_by("-memory__created_at", "path", "symbol")[paging.window(limit=limit)]
    )
    stale = [
        StaleRef(memory_id=str(ref.memory_id), content=ref.memory.content, description=_describe(ref))
        for ref in stale_rows
    ]
    return RefsStatus(counts=counts, stale=stale)


def _describe(ref: CodeRef) -> str:
    where = ref.resolved_path or ref.path
    target = f"{ref.symbol} in {where}" if ref.symbol and where else (ref.symbol or where)
    commit = f" at {ref.checked_commit[:12]}" if ref.checked_commit else ""
    return f"{target} {ref.state}{commit}"
