"""The golden questions' page: the questions of a project, a form to add one, the trend of its runs
(recall@k and MRR, drawn on the server as SVG) and the last run's failures, and "Run now". Thin views
over evals.services and evals.selectors, like `manage.py eval`."""

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse

from dashboard.guard import PREFIX
from dashboard.views import ACTOR, _back, _flash, _page
from evals import selectors, services
from evals.models import MAX_K, EvalRun, Trigger
from kenfold_common.errors import InvalidInput, KenfoldError

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


def evals(request: HttpRequest) -> HttpResponse:
    scopes = selectors.question_scopes()
    try:
        scope = selectors.owner_scope(request.GET.get("scope")) or (scopes[0] if scopes else None)
    except InvalidInput as exc:
        return _page(request, "error.html", {"problem": exc.message}, status=400)
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


def question_add(request: HttpRequest) -> HttpResponse:
    project = (request.POST.get("project") or "").strip()
    try:
        k = int(request.POST.get("k") or services.DEFAULT_K)
    except ValueError:
        _flash(request, "error", f"k must be a number from 1 to {MAX_K}; nothing was added.")
        return _back(request, PAGE)
    try:
        question = services.question_add(
            project=project,
            query=request.POST.get("query") or "",
            expected=[part for part in re.split(r"[\s,]+", request.POST.get("expected") or "") if part],
            k=k,
            actor=ACTOR,
        )
    except KenfoldError as exc:
        _flash(request, "error", exc.message[:1].upper() + exc.message[1:] + "; nothing was added.")
        return _back(request, PAGE)
    _flash(request, "ok", "Added. Run the questions to score it.")
    return _back(request, _here(question.scope))


def question_remove(request: HttpRequest, question_id: str) -> HttpResponse:
    try:
        services.question_remove(question_id=question_id)
    except KenfoldError:
        _flash(request, "error", "That question no longer exists; nothing was changed.")
    else:
        _flash(request, "ok", "Removed; its past runs keep it.")
    return _back(request, PAGE)


def run_now(request: HttpRequest) -> HttpResponse:
    try:
        scope = selectors.owner_scope(request.POST.get("scope"))
        outcomes = services.eval_run(trigger=Trigger.MANUAL, scope=scope)
    except KenfoldError as exc:
        _flash(request, "error", exc.message[:1].upper() + exc.message[1:] + ".")
        return _back(request, PAGE)
    for outcome in outcomes:
        run = outcome.run
        drops = selectors.run_drops(run, outcome.previous, margin=0.0)
        _flash(
            request,
            "error" if drops else "ok",
            f"{run.scope}: {run.passed} of {run.questions} passed, recall@k {run.recall_at_k:.3f}, "
            f"MRR {run.mrr:.3f}" + (f" ({'; '.join(drops)})." if drops else "."),
        )
    return _back(request, _here(scope))
