"""The worker's job: score the golden questions after a change (scheduled by services.eval_schedule)."""

from evals.selectors import question_list
from evals.services import eval_run


def golden_questions_run(trigger: str) -> str:
    """Score every project's golden questions, recording one run each with `trigger`."""
    if not question_list().exists():
        return "no golden questions"
    outcomes = eval_run(trigger=trigger)
    return "; ".join(
        f"{o.run.scope}: recall@k {o.run.recall_at_k:.3f}, MRR {o.run.mrr:.3f}, {o.run.passed}/{o.run.questions} passed"
        for o in outcomes
    )
