"""The worker's job: score the golden questions after a change (scheduled by services.eval_schedule)."""

from evals.selectors import question_list
from evals.services import EVAL_TASK, eval_run, eval_schedule
from kenfold.db_functions import one_at_a_time


def golden_questions_run(trigger: str) -> str:
    """Score every project's golden questions, recording one run each with `trigger`."""
    if not question_list().exists():
        return "no golden questions"
    # One run at a time across every worker. The run in progress may have started before the change that
    # queued this one, so this one is scheduled again rather than dropped.
    with one_at_a_time(EVAL_TASK) as alone:
        if not alone:
            eval_schedule(trigger=trigger)
            return "another worker is scoring the golden questions; scheduled again"
        outcomes = eval_run(trigger=trigger)
    return "; ".join(
        f"{o.run.scope}: recall@k {o.run.recall_at_k:.3f}, MRR {o.run.mrr:.3f}, {o.run.passed}/{o.run.questions} passed"
        for o in outcomes
    )
