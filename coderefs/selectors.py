"""Reads of code references: what clients should check, what views show, how stale a memory is."""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, F, Min

from coderefs.models import CodeRef, RefState, is_stale
from coderefs.schemas import Target, TargetsOutput
from coderefs.services import project_scope
from memories.models import Status
from memories.schemas import CodeRefView, MemoryView

MAX_TARGETS = 500
# Ranking multipliers (spec §1.7): a memory about code that is gone keeps 5% of its score, one about a
# symbol that changed keeps 60%. A changed file alone says little: files change all the time.
MISSING_FACTOR = 0.05
CHANGED_SYMBOL_FACTOR = 0.6
STATE_ORDER = ["current", "changed", "missing", "pending", "unresolved"]


def refs_targets(*, project: str | None) -> TargetsOutput:
    """Distinct targets of the project's live memories: never-checked first, then least recently checked."""
    scope = project_scope(project)
    rows = (
        CodeRef.objects.filter(scope=scope, memory__status__in=[Status.ACTIVE, Status.PROPOSED])
        .values("path", "symbol", "anchor_commit", "anchor_hash")
        .annotate(last_checked=Min("checked_at"))
        .order_by(F("last_checked").asc(nulls_first=True), "path", "symbol")[:MAX_TARGETS]
    )
    return TargetsOutput(
        scope=scope, targets=[Target(**{k: row[k] for k in Target.model_fields}) for row in rows]
    )


def _refs_by_memory(memory_ids: Iterable[str | UUID]) -> dict[str, list[CodeRef]]:
    refs: dict[str, list[CodeRef]] = defaultdict(list)
    for ref in CodeRef.objects.filter(memory_id__in=list(memory_ids)).exclude(state=RefState.UNRESOLVED):
        refs[str(ref.memory_id)].append(ref)
    return refs


def attach_code_refs(views: list[MemoryView]) -> list[MemoryView]:
    """Fill `code_refs` and `stale` of views whose memories mention code (one query for all)."""
    if not views:
        return views
    refs = _refs_by_memory(view.id for view in views)
    for view in views:
        own = refs.get(view.id)
        if not own:
            continue
        view.code_refs = [
            CodeRefView(
                path=ref.path or None,
                symbol=ref.symbol or None,
                state=ref.state,  # type: ignore[arg-type]
                checked_commit=ref.checked_commit[:12] if ref.checked_commit else None,
            )
            for ref in sorted(own, key=lambda r: (r.path, r.symbol))
        ]
        view.stale = any(ref.stale for ref in own)
    return views


def staleness_factor(view: MemoryView) -> float:
    """The score multiplier for a view with attached refs: the worst of its references wins."""
    factor = 1.0
    for ref in view.code_refs or []:
        if ref.state == RefState.MISSING:
            factor = min(factor, MISSING_FACTOR)
        elif ref.state == RefState.CHANGED and ref.symbol:
            factor = min(factor, CHANGED_SYMBOL_FACTOR)
    return factor


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
    refs = CodeRef.objects.filter(memory__status__in=[Status.ACTIVE, Status.PROPOSED])
    if scope:
        refs = refs.filter(scope=scope)
    counts = dict.fromkeys(STATE_ORDER, 0)
    for row in refs.values("state").annotate(n=Count("*")):
        counts[row["state"]] = row["n"]
    stale_rows = (
        refs.filter(state__in=[RefState.MISSING, RefState.CHANGED])
        .select_related("memory")
        .order_by("-memory__created_at", "path", "symbol")
    )
    stale = [
        StaleRef(
            memory_id=str(ref.memory_id),
            content=ref.memory.content,
            description=_describe(ref),
        )
        for ref in stale_rows
        if is_stale(state=ref.state, symbol=ref.symbol)
    ][: max(1, min(limit, 500))]
    return RefsStatus(counts=counts, stale=stale)


def _describe(ref: CodeRef) -> str:
    where = ref.resolved_path or ref.path
    target = f"{ref.symbol} in {where}" if ref.symbol and where else (ref.symbol or where)
    commit = f" at {ref.checked_commit[:12]}" if ref.checked_commit else ""
    return f"{target} {ref.state}{commit}"


def stale_memory_ids() -> set[str]:
    return {
        str(ref.memory_id)
        for ref in CodeRef.objects.filter(state__in=[RefState.MISSING, RefState.CHANGED])
        if is_stale(state=ref.state, symbol=ref.symbol)
    }
