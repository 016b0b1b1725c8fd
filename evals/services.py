"""Writes of the golden questions (memory CI): add and remove questions, score them (a run, recorded),
and schedule a run after a change that may change what recall returns.

Every surface (`manage.py eval`, the dashboard, the worker) calls these functions. Scoring asks the same
retrieval as the `recall` tool (memories.search.retrieval.retrieve, over the project's and the user-wide
memories), as the owner would.
"""

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from itertools import groupby

from django.db import transaction
from django_q.models import Schedule

from evals import selectors
from evals.models import MAX_K, EvalResult, EvalRun, GoldenQuestion, Trigger
from kenfold import clock
from kenfold.db_functions import xact_lock
from kenfold_common.errors import InvalidInput, NotFound
from kenfold_common.secrets import reject_secrets
from memories import extensions
from memories.models import Memory, Status
from memories.providers import configured
from memories.search.retrieval import retrieve
from memories.selectors import MAX_QUERY_CHARS, parse_memory_id

log = logging.getLogger(__name__)

DEFAULT_K = 5
MAX_EXPECTED = 20
EVAL_TASK = "evals.tasks.golden_questions_run"
EVAL_SCHEDULE = "golden questions after a change"
# A burst of changes (an import and the consolidations applied after it, a reindex right after a model
# switch) is scored once: the first change schedules a run this long after it, and later ones join it.
DEBOUNCE = timedelta(seconds=60)
_TRIGGERS = {
    extensions.CONSOLIDATION_APPLIED: Trigger.CONSOLIDATION,
    extensions.ARCHIVE_IMPORTED: Trigger.IMPORT,
    extensions.REINDEXED: Trigger.REINDEX,
}


# --- questions -------------------------------------------------------------------------------------------


def question_add(
    *, project: str, query: str, expected: list[str], k: int = DEFAULT_K, actor: str
) -> GoldenQuestion:
    """A golden question of `project`: recall for `query` must return every `expected` memory in its top
    `k`. Expected memories are memories recall reads for the project (its own or user-wide), served now
    or already replaced (scoring follows them to their replacement)."""
    scope = selectors.owner_scope(project)
    if scope is None:
        raise InvalidInput("pass the project the question is about (as agents pass it, or `user`)")
    text = (query or "").strip()
    if not text:
        raise InvalidInput("the question must not be empty: write it as an agent would ask recall")
    if "\x00" in text:
        raise InvalidInput("the question contains a NUL character (\\x00); remove it and try again")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the question is {len(text)} characters; recall reads at most {MAX_QUERY_CHARS}")
    reject_secrets(field="the question", text=text)
    if not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K} (recall returns at most {MAX_K} memories)")
    ids = list(dict.fromkeys(parse_memory_id(value, field="an expected memory") for value in expected))
    if not ids:
        raise InvalidInput("name at least one expected memory id (from recall or `manage.py memory list`)")
    if len(ids) > MAX_EXPECTED:
        raise InvalidInput(f"a question expects at most {MAX_EXPECTED} memories; split it into several")
    memories = {m.pk: m for m in Memory.objects.filter(pk__in=ids).only("id", "scope", "status")}
    readable = selectors.read_scopes(scope)
    for memory_id in ids:
        memory = memories.get(memory_id)
        if memory is None:
            raise NotFound(f"expected memory {memory_id} does not exist; use an id recall returned")
        if memory.scope not in readable:
            raise InvalidInput(
                f"expected memory {memory_id} belongs to another project, so recall for this project never "
                "returns it; pass that memory's project, or expect a memory of this one"
            )
        if memory.status not in (Status.ACTIVE, Status.SUPERSEDED):
            raise InvalidInput(
                f"expected memory {memory_id} is {memory.status}, so recall never returns it; expect a "
                "served memory (approve a proposed one first)"
            )
    return GoldenQuestion.objects.create(
        scope=scope, query=text, expected_ids=ids, k=k, created_by=actor, created_at=clock.now()
    )


def question_remove(*, question_id: str) -> uuid.UUID:
    """Remove a question (its id is returned); its past results keep their text."""
    parsed = selectors.parse_question_id(question_id)
    deleted, _ = GoldenQuestion.objects.filter(pk=parsed).delete()
    if not deleted:
        raise NotFound(f"golden question {parsed} does not exist; use an id shown by `manage.py eval list`")
    return parsed


# --- runs --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunOutcome:
    run: EvalRun
    previous: EvalRun | None


def eval_run(
    *,
    trigger: str,
    scope: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[RunOutcome]:
    """Score the golden questions, one recorded run per project (only `scope`'s when given), in project
    order. `progress` is told after each question (done, total)."""
    questions = list(selectors.question_list(scope=scope))
    if not questions:
        where = f" in {scope}" if scope else ""
        raise NotFound(f"there are no golden questions{where}; add one with `manage.py eval add`")
    models = [embedder.name for embedder in configured.embedders()]
    outcomes = []
    done = 0
    for question_scope, group in groupby(questions, key=lambda question: question.scope):
        started = clock.now()
        results = []
        for question in group:
            results.append(_score(question))
            done += 1
            if progress is not None:
                progress(done, len(questions))
        outcomes.append(
            _record(scope=question_scope, trigger=trigger, started=started, results=results, models=models)
        )
    return outcomes


def _score(question: GoldenQuestion) -> EvalResult:
    expected = list(
        dict.fromkeys(selectors.current_version(memory_id) for memory_id in question.expected_ids)
    )
    views = retrieve(
        query=question.query, scopes=selectors.read_scopes(question.scope), types=None, limit=question.k
    )
    top = [uuid.UUID(view.id) for view in views]
    ranks = [rank for rank, memory_id in enumerate(top, start=1) if memory_id in set(expected)]
    return EvalResult(
        question=question,
        query=question.query,
        k=question.k,
        expected_ids=expected,
        found=len(ranks),
        rank=ranks[0] if ranks else None,
        top_ids=top,
    )


def _record(*, scope: str, trigger: str, started, results: list[EvalResult], models: list[str]) -> RunOutcome:
    count = len(results)
    with transaction.atomic():
        previous = selectors.run_latest(scope=scope)
        run = EvalRun.objects.create(
            scope=scope,
            trigger=trigger,
            started_at=started,
            finished_at=clock.now(),
            questions=count,
            passed=sum(result.found == len(result.expected_ids) for result in results),
            recall_at_k=round(sum(r.found / len(r.expected_ids) for r in results) / count, 6),
            mrr=round(sum(1 / r.rank if r.rank else 0.0 for r in results) / count, 6),
            models=models,
        )
        for result in results:
            result.run = run
        EvalResult.objects.bulk_create(results)
    return RunOutcome(run=run, previous=previous)


# --- after a change ------------------------------------------------------------------------------------


def eval_after_change(change: str) -> None:
    """memories.extensions hook: schedule a run after a change that may change what recall returns. The
    vectors of the configured models becoming complete is a change only when those models differ from
    the ones of the last run (a switch of embedding model)."""
    if change == extensions.VECTORS_CURRENT:
        before = selectors.configured_models_at_last_run()
        if before is None or before == [embedder.name for embedder in configured.embedders()]:
            return
        trigger = Trigger.MODEL_SWITCH
    elif change in _TRIGGERS:
        trigger = _TRIGGERS[change]
    else:
        return
    eval_schedule(trigger=trigger)


def eval_schedule(*, trigger: str) -> bool:
    """Schedule a run of every project's questions DEBOUNCE from now for the worker; False when there is
    nothing to score or a run is already scheduled (this change joins it: it has not run yet, so it will
    see this change too)."""
    if not GoldenQuestion.objects.exists():
        return False
    with transaction.atomic():
        # Two changes at once must not both find no schedule and both add one.
        xact_lock(EVAL_SCHEDULE)
        if Schedule.objects.filter(name=EVAL_SCHEDULE).exists():
            return False
        Schedule.objects.create(
            name=EVAL_SCHEDULE,
            func=EVAL_TASK,
            kwargs=repr({"trigger": str(trigger)}),
            schedule_type=Schedule.ONCE,
            repeats=-1,  # a ONCE schedule with negative repeats is deleted when its task is queued
            next_run=clock.now() + DEBOUNCE,
        )
    log.info("golden questions scheduled", extra={"trigger": str(trigger)})
    return True
