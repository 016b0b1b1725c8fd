"""The golden questions' page: the questions of a project, a form to add one, the trend of its runs
(recall@k and MRR, drawn on the server as SVG) and the last run's failures, and "Run now". Thin views
over evals.services and evals.selectors, like `manage.py eval`."""

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse

from dashboard.guard import PREFIX
from dashboard.views import ACTOR, Outcome, _page, action, shown
from evals import selectors, services
from evals.models import MAX_K, EvalRun, Trigger
from kenfold_common.errors import KenfoldError

PAGE = PREFIX + "evals"
WIDTH = 600
HEIGHT = 120
PAD = 6


@dataclass(frozen=True)
class Trend:
    recall: str  # SVG polyline points
    mrr: str
    dots: list[tuple[float, float, str]]  # x, y, title of each run's recall@k
    width: int = WIDTH
    height: int = HEIGHT


def trend_chart(runs: list[EvalRun]) -> Trend | None:
    """recall@k and MRR of the runs, oldest at the left, 0 at the bottom and 1 at the top."""
    if not runs:
        return None
    step = (WIDTH - 2 * PAD) / max(len(runs) - 1, 1)

    def point(index: int, value: float) -> tuple[float, float]:
        return round(PAD + index * step, 1), round(HEIGHT - PAD - value * (HEIGHT - 2 * PAD), 1)

    recall = [point(n, run.recall_at_k) for n, run in enumerate(runs)]
    mrr = [point(n, run.mrr) for n, run in enumerate(runs)]
    return Trend(
        recall=" ".join(f"{x},{y}" for x, y in recall),
        mrr=" ".join(f"{x},{y}" for x, y in mrr),
        dots=[
            (
                x,
                y,
                f"{run.started_at:%Y-%m-%d %H:%M} {run.trigger}: recall@k {run.recall_at_k:.3f}, MRR {run.mrr:.3f}",
            )
            for (x, y), run in zip(recall, runs, strict=True)
        ],
    )


@shown()
def evals(request: HttpRequest) -> HttpResponse:
    scopes = selectors.question_scopes()
    scope = selectors.owner_scope(request.GET.get("scope")) or (scopes[0] if scopes else None)
    runs = selectors.run_trend(scope=scope) if scope else []
    last = runs[-1] if runs else None
    return _page(
        request,
        "evals.html",
        {
            "scopes": scopes,
            "scope": scope or "",
            "questions": list(selectors.question_list(scope=scope)) if scope else [],
            "runs": list(reversed(runs)),
            "trend": trend_chart(runs),
            "last": last,
            "failures": [view for view in selectors.result_views(last) if not view.passed] if last else [],
            "max_k": MAX_K,
            "default_k": services.DEFAULT_K,
        },
    )


def _here(scope: str | None) -> str:
    return PAGE + ("?" + urlencode({"scope": scope}) if scope else "")


def _sentence(exc: KenfoldError, end: str = ".") -> str:
    return exc.message[:1].upper() + exc.message[1:] + end


@action(back=lambda: PAGE, wording=lambda exc: _sentence(exc, "; nothing was added."))
def question_add(request: HttpRequest) -> Outcome:
    raw_k = (request.POST.get("k") or "").strip()
    # A k that is not a whole number is out of range too: the service's range check says so.
    k = (int(raw_k) if raw_k.isascii() and raw_k.isdigit() else 0) if raw_k else services.DEFAULT_K
    question = services.question_add(
        project=(request.POST.get("project") or "").strip(),
        query=request.POST.get("query") or "",
        expected=[part for part in re.split(r"[\s,]+", request.POST.get("expected") or "") if part],
        k=k,
        actor=ACTOR,
    )
    return Outcome(flashes=(("ok", "Added. Run the questions to score it."),), back=_here(question.scope))


@action(
    back=lambda question_id: PAGE, wording=lambda exc: "That question no longer exists; nothing was changed."
)
def question_remove(request: HttpRequest, question_id: str) -> str:
    services.question_remove(question_id=question_id)
    return "Removed; its past runs keep it."


@action(back=lambda: PAGE, wording=_sentence)
def run_now(request: HttpRequest) -> Outcome:
    scope = selectors.owner_scope(request.POST.get("scope"))
    flashes = []
    for outcome in services.eval_run(trigger=Trigger.MANUAL, scope=scope):
        run = outcome.run
        drops = selectors.run_drops(run, outcome.previous, margin=0.0)
        flashes.append(
            (
                "error" if drops else "ok",
                f"{run.scope}: {run.passed} of {run.questions} passed, recall@k {run.recall_at_k:.3f}, "
                f"MRR {run.mrr:.3f}" + (f" ({'; '.join(drops)})." if drops else "."),
            )
        )
    return Outcome(flashes=tuple(flashes), back=_here(scope))
