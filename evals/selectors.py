"""Reads of the golden questions: the questions, their runs and the trend, the current version of an
expected memory, and whether a run is worse than the one before."""

import uuid
from dataclasses import dataclass

from django.db.models import Q, QuerySet

from evals.models import EvalResult, EvalRun, GoldenQuestion
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import USER_SCOPE, scope_from_owner
from memories.models import Memory, MemoryEdge, Status

# Replacements followed from an expected memory to the one that now says it: far more than any chain.
SUCCESSOR_HOPS = 50
TREND_RUNS = 30
PREVIEW_CHARS = 120


def read_scopes(scope: str) -> list[str]:
    """What recall reads for a project: its memories and the user-wide ones (memories.selectors)."""
    return [USER_SCOPE] if scope == USER_SCOPE else [USER_SCOPE, scope]


def owner_scope(project: str | None) -> str | None:
    """The stored scope a project names (as agents pass it, or as listed), or None for every project."""
    if project is None or not project.strip():
        return None
    if "\x00" in project:
        raise InvalidInput("the project contains a NUL character (\\x00); pass the project as agents do")
    return scope_from_owner(project)


def question_list(*, scope: str | None = None) -> QuerySet[GoldenQuestion]:
    questions = GoldenQuestion.objects.order_by("scope", "created_at", "id")
    return questions.filter(scope=scope) if scope else questions


def question_scopes() -> list[str]:
    return list(GoldenQuestion.objects.order_by("scope").values_list("scope", flat=True).distinct())


def parse_question_id(value: str) -> uuid.UUID:
    text = (value or "").strip()
    try:
        return uuid.UUID(text)
    except ValueError:
        raise InvalidInput(
            "that is not a golden question id (a UUID); use an id shown by `manage.py eval list`"
        ) from None


def current_version(memory_id: uuid.UUID) -> uuid.UUID:
    """The memory that says now what `memory_id` said: itself while it is not superseded, else its
    replacement (a newer memory that `supersedes` it, or the result of a consolidation that `replaces`
    it), followed to the end of the chain. A chain that ends in a memory no longer served ends there:
    that memory is scored, and it cannot be found."""
    seen = {memory_id}
    current = memory_id
    for _hop in range(SUCCESSOR_HOPS):
        status = Memory.objects.filter(pk=current).values_list("status", flat=True).first()
        if status != Status.SUPERSEDED:
            return current
        successors = list(
            Memory.objects.filter(
                Q(supersedes_id=current)
                | Q(pk__in=MemoryEdge.objects.filter(dst_id=current, relation="replaces").values("src_id"))
            )
            .exclude(pk__in=seen)
            .order_by("created_at", "id")
            .values_list("id", "status")
        )
        if not successors:
            return current
        # An active replacement first; else the newest, which may itself have been replaced.
        active = [successor for successor, state in successors if state == Status.ACTIVE]
        current = active[0] if active else successors[-1][0]
        seen.add(current)
    return current


def run_latest(*, scope: str, before: EvalRun | None = None) -> EvalRun | None:
    runs = EvalRun.objects.filter(scope=scope)
    if before is not None:
        runs = runs.filter(
            Q(started_at__lt=before.started_at) | Q(started_at=before.started_at, id__lt=before.id)
        )
    return runs.order_by("-started_at", "-id").first()


def run_trend(*, scope: str, limit: int = TREND_RUNS) -> list[EvalRun]:
    """The project's last `limit` runs, oldest first."""
    return list(reversed(EvalRun.objects.filter(scope=scope).order_by("-started_at", "-id")[:limit]))


def configured_models_at_last_run() -> list[str] | None:
    """The embedding models of the newest run of any project (models are server-wide), or None."""
    return EvalRun.objects.order_by("-started_at", "-id").values_list("models", flat=True).first()


@dataclass(frozen=True)
class Came:
    """One memory recall returned for a question, for showing what came instead."""

    id: uuid.UUID
    preview: str
    expected: bool


@dataclass(frozen=True)
class ResultView:
    result: EvalResult
    passed: bool
    came: list[Came]
    # Expected memories no longer served (forgotten, or a chain that ends in one), by id: their status.
    unserved: dict[uuid.UUID, str]


def result_views(run: EvalRun) -> list[ResultView]:
    results = list(run.results.order_by("id"))
    ids = {memory_id for result in results for memory_id in result.top_ids}
    contents = dict(Memory.objects.filter(pk__in=ids).values_list("id", "content"))
    expected_ids = {memory_id for result in results for memory_id in result.expected_ids}
    unserved = dict(
        Memory.objects.filter(pk__in=expected_ids).exclude(status=Status.ACTIVE).values_list("id", "status")
    )
    views = []
    for result in results:
        expected = set(result.expected_ids)
        came = [
            Came(id=memory_id, preview=_preview(contents.get(memory_id, "")), expected=memory_id in expected)
            for memory_id in result.top_ids
        ]
        views.append(
            ResultView(
                result=result,
                passed=result.found == len(result.expected_ids),
                came=came,
                unserved={m: unserved[m] for m in result.expected_ids if m in unserved},
            )
        )
    return views


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


def run_drops(run: EvalRun, previous: EvalRun | None, *, margin: float) -> list[str]:
    """How the run is worse than the previous one by more than `margin` (empty when it is not)."""
    if previous is None:
        return []
    drops = []
    for name, now, before in (
        ("recall@k", run.recall_at_k, previous.recall_at_k),
        ("MRR", run.mrr, previous.mrr),
    ):
        if before - now > margin + 1e-9:
            drops.append(f"{name} fell from {before:.3f} to {now:.3f}")
    return drops
