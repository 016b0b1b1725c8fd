"""`manage.py eval add|list|run|remove`: the owner's golden questions (memory CI)."""

import json

from django.core.management.base import CommandError, CommandParser

from evals import selectors, services
from evals.models import EvalRun, GoldenQuestion, Trigger
from kenfold.management.base import KenfoldCommand
from kenfold.management.progress import ProgressBar
from memories.services.review import CLI_AGENT

DEFAULT_MARGIN = 0.05
SHOWN_INSTEAD = 3


class Command(KenfoldCommand):
    help = (
        "Golden questions: per project, questions whose expected memories recall must return in its top k. "
        "`eval run` scores them (recall@k, MRR), records the run, and exits 1 when a project's run is worse "
        "than its previous one by more than --max-drop. The worker also runs them after a consolidation is "
        "applied, an import, an embedding model switch and a reindex."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        add = sub.add_parser(
            "add",
            help="add a question and the memories recall must return for it",
            description="Add a golden question: recall for QUERY in PROJECT must return every --expect id "
            "in its top k. A memory replaced later is followed to its replacement when scored.",
        )
        add.add_argument("--project", required=True, help="the project, as agents pass it (or `user`)")
        add.add_argument("--query", required=True, help="the question, as an agent would ask recall")
        add.add_argument(
            "--expect", action="append", required=True, metavar="ID", help="an expected memory id (repeat it)"
        )
        add.add_argument("--k", type=int, default=services.DEFAULT_K, help="the top k to look in (default 5)")
        add.add_argument("--json", action="store_true", help="print the question as JSON")
        listing = sub.add_parser(
            "list", help="the questions", description="List the golden questions, by project."
        )
        listing.add_argument("--project", default=None, help="only this project's questions")
        listing.add_argument("--json", action="store_true", help="print them as JSON")
        run = sub.add_parser(
            "run",
            help="score the questions now and record the run",
            description="Score the golden questions (one run per project) with the retrieval recall uses, "
            "record each run, and show which questions failed and what came instead. Exits 1 when "
            "recall@k or MRR fell by more than --max-drop since the project's previous run.",
        )
        run.add_argument("--project", default=None, help="only this project's questions")
        run.add_argument("--json", action="store_true", help="print the runs as JSON")
        run.add_argument(
            "--max-drop",
            type=float,
            default=DEFAULT_MARGIN,
            help=f"the fall of recall@k or MRR tolerated since the previous run (default {DEFAULT_MARGIN})",
        )
        remove = sub.add_parser(
            "remove", help="remove a question", description="Remove a golden question; past runs keep it."
        )
        remove.add_argument("id", help="the question's id (from `eval list`)")

    def handle(self, *args: object, **options: object) -> None:
        action = options["action"]
        if action == "add":
            self._add(options)
        elif action == "list":
            self._list(project=options["project"], as_json=bool(options["json"]))
        elif action == "run":
            self._run(project=options["project"], as_json=bool(options["json"]), margin=options["max_drop"])
        else:
            removed = services.question_remove(question_id=str(options["id"]))
            self.stdout.write(f"Removed golden question {removed}.")

    def _add(self, options: dict) -> None:
        question = services.question_add(
            project=str(options["project"]),
            query=str(options["query"]),
            expected=list(options["expect"]),
            k=int(options["k"]),
            actor=CLI_AGENT,
        )
        if options["json"]:
            self.stdout.write(json.dumps(_question_json(question), ensure_ascii=False))
            return
        self.stdout.write(
            f"Added golden question {question.id} to {question.scope}: "
            f"{len(question.expected_ids)} expected in the top {question.k}. Score it with `manage.py eval run`."
        )

    def _list(self, *, project: object, as_json: bool) -> None:
        scope = selectors.owner_scope(str(project) if project else None)
        questions = list(selectors.question_list(scope=scope))
        if as_json:
            self.stdout.write(json.dumps([_question_json(q) for q in questions], ensure_ascii=False))
            return
        if not questions:
            self.stdout.write(
                "No golden questions. Add one with `manage.py eval add --project P --query Q --expect ID`."
            )
            return
        scope_shown = None
        for question in questions:
            if question.scope != scope_shown:
                scope_shown = question.scope
                self.stdout.write(scope_shown)
            expected = " ".join(str(memory_id) for memory_id in question.expected_ids)
            self.stdout.write(f"  {question.id}  k={question.k}  {question.query}")
            self.stdout.write(f"    expects {expected}")

    def _run(self, *, project: object, as_json: bool, margin: object) -> None:
        margin = float(margin)  # type: ignore[arg-type]
        if not 0 <= margin <= 1:
            raise CommandError("--max-drop must be between 0 and 1 (a share of recall@k or MRR)")
        scope = selectors.owner_scope(str(project) if project else None)
        bar = ProgressBar("scoring")
        try:
            outcomes = services.eval_run(trigger=Trigger.MANUAL, scope=scope, progress=bar.update)
        finally:
            bar.close()
        worse = []
        reports = []
        for outcome in outcomes:
            drops = selectors.run_drops(outcome.run, outcome.previous, margin=margin)
            if drops:
                worse.append(f"{outcome.run.scope}: {', '.join(drops)}")
            views = selectors.result_views(outcome.run)
            if as_json:
                reports.append(_run_json(outcome.run, outcome.previous, views, drops))
            else:
                self._show(outcome.run, outcome.previous, views)
        if as_json:
            self.stdout.write(json.dumps(reports, ensure_ascii=False))
        if worse:
            raise CommandError(
                f"worse than the previous run by more than {margin}: {'; '.join(worse)}. See the failed "
                "questions and what came instead; fix the memories or the change, then run `eval run` again"
            )

    def _show(self, run: EvalRun, previous: EvalRun | None, views: list[selectors.ResultView]) -> None:
        before = (
            f"; previous run {previous.started_at:%Y-%m-%d %H:%M} ({previous.trigger}): "
            f"recall@k {previous.recall_at_k:.3f}, MRR {previous.mrr:.3f}"
            if previous
            else "; no previous run"
        )
        self.stdout.write(
            f"{run.scope}: recall@k {run.recall_at_k:.3f}, MRR {run.mrr:.3f}, "
            f"{run.passed} of {run.questions} questions passed{before}"
        )
        for view in views:
            result = view.result
            if view.passed:
                self.stdout.write(f"  PASS  {result.query}  (rank {result.rank} in the top {result.k})")
                continue
            self.stdout.write(
                f"  FAIL  {result.query}  ({result.found} of {len(result.expected_ids)} expected in the top {result.k})"
            )
            found = {came.id for came in view.came}
            for memory_id in result.expected_ids:
                if memory_id in view.unserved:
                    self.stdout.write(
                        f"        missing  {memory_id}  ({view.unserved[memory_id]}: recall never returns it; "
                        "remove the question or add it again with the memory that says it now)"
                    )
                elif memory_id not in found:
                    self.stdout.write(f"        missing  {memory_id}")
            instead = [came for came in view.came if not came.expected][:SHOWN_INSTEAD]
            for came in instead:
                self.stdout.write(f"        instead  {came.id}  {came.preview}")
            if not view.came:
                self.stdout.write("        instead  nothing: recall returned no memory")


def _question_json(question: GoldenQuestion) -> dict[str, object]:
    return {
        "id": str(question.id),
        "scope": question.scope,
        "query": question.query,
        "expected_ids": [str(memory_id) for memory_id in question.expected_ids],
        "k": question.k,
        "created_by": question.created_by,
        "created_at": question.created_at.isoformat(),
    }


def _run_json(
    run: EvalRun, previous: EvalRun | None, views: list[selectors.ResultView], drops: list[str]
) -> dict[str, object]:
    return {
        "id": str(run.id),
        "scope": run.scope,
        "trigger": run.trigger,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat(),
        "questions": run.questions,
        "passed": run.passed,
        "recall_at_k": run.recall_at_k,
        "mrr": run.mrr,
        "previous": None
        if previous is None
        else {"id": str(previous.id), "recall_at_k": previous.recall_at_k, "mrr": previous.mrr},
        "worse": drops,
        "results": [
            {
                "question_id": str(view.result.question_id) if view.result.question_id else None,
                "query": view.result.query,
                "k": view.result.k,
                "passed": view.passed,
                "rank": view.result.rank,
                "expected_ids": [str(memory_id) for memory_id in view.result.expected_ids],
                "top_ids": [str(came.id) for came in view.came],
            }
            for view in views
        ],
    }
