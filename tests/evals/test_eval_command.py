"""`manage.py eval add|list|run|remove`: golden questions scored with recall's retrieval, runs recorded,
regressions gated by the exit status."""

import io
import json
import re

import pytest
from django.core.management import CommandError, call_command

from evals.models import EvalResult, EvalRun, GoldenQuestion
from memories.services.remember import memory_remember
from memories.services.review import memory_forget
from tests.evals.conftest import AGENT, REPO, SCOPE

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("eval", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def add(query: str, *expected: str, k: int = 3) -> dict:
    expects = [arg for memory_id in expected for arg in ("--expect", memory_id)]
    return json.loads(run("add", "--project", REPO, "--query", query, *expects, "--k", str(k), "--json"))


def test_add_list_run_and_remove(shop: dict[str, str]) -> None:
    deploy = add("how do deploys go out?", shop["deploy"])
    database = add("which database stores the orders?", shop["database"])
    assert (deploy["scope"], deploy["k"], deploy["expected_ids"]) == (SCOPE, 3, [shop["deploy"]])

    listed = json.loads(run("list", "--project", REPO, "--json"))
    assert [q["id"] for q in listed] == [deploy["id"], database["id"]]
    assert "how do deploys go out?" in run("list") and f"expects {shop['database']}" in run("list")

    text = run("run")
    assert f"{SCOPE}: recall@k 1.000, MRR 1.000, 2 of 2 questions passed; no previous run" in text
    assert "PASS  how do deploys go out?  (rank 1 in the top 3)" in text
    recorded = EvalRun.objects.get()
    assert (recorded.trigger, recorded.questions, recorded.passed) == ("manual", 2, 2)
    assert EvalResult.objects.filter(run=recorded).count() == 2

    assert run("remove", deploy["id"]) == f"Removed golden question {deploy['id']}.\n"
    assert [q.query for q in GoldenQuestion.objects.all()] == ["which database stores the orders?"]
    assert EvalResult.objects.filter(query="how do deploys go out?").count() == 1, "its history is kept"
    with pytest.raises(
        CommandError, match=re.escape("does not exist; use an id shown by `manage.py eval list`")
    ):
        run("remove", deploy["id"])


def test_a_failed_question_shows_what_came_instead_and_the_json_says_the_same(shop: dict[str, str]) -> None:
    # Expected: the style memory; the question's words find the deploy memory instead.
    add("how do deploys go out on every tag?", shop["style"], k=1)
    text = run("run")
    assert "recall@k 0.000, MRR 0.000, 0 of 1 questions passed" in text
    assert "FAIL  how do deploys go out on every tag?  (0 of 1 expected in the top 1)" in text
    assert f"missing  {shop['style']}" in text
    assert f"instead  {shop['deploy']}  Deploys go out through the GitHub Actions workflow" in text

    [report] = json.loads(run("run", "--json"))
    assert report["previous"]["recall_at_k"] == 0.0 and report["worse"] == []
    [result] = report["results"]
    assert (result["passed"], result["rank"], result["top_ids"]) == (False, None, [shop["deploy"]])


def test_run_exits_1_when_recall_falls_by_more_than_the_margin(shop: dict[str, str]) -> None:
    add("how do deploys go out?", shop["deploy"])
    add("which database stores the orders?", shop["database"])
    run("run")
    memory_forget(caller=AGENT, memory_id=shop["database"])
    out = io.StringIO()
    with pytest.raises(CommandError) as failed:
        call_command("eval", "run", "--json", stdout=out, stderr=io.StringIO())
    assert str(failed.value) == (
        f"worse than the previous run by more than 0.05: {SCOPE}: recall@k fell from 1.000 to 0.500, "
        "MRR fell from 1.000 to 0.500. See the failed questions and what came instead; fix the memories "
        "or the change, then run `eval run` again"
    )
    assert f"missing  {shop['database']}  (deleted: recall never returns it; remove the question" in run(
        "run", "--max-drop", "1"
    )
    EvalRun.objects.order_by("-started_at").first().delete()
    [report] = json.loads(out.getvalue())
    assert report["worse"] == ["recall@k fell from 1.000 to 0.500", "MRR fell from 1.000 to 0.500"]
    assert EvalRun.objects.count() == 2, "the worse run is recorded too"
    # Measured against that run now, nothing fell; a margin of a half tolerates the fall.
    assert "1 of 2 questions passed" in run("run", "--max-drop", "0.5")


def test_a_superseded_expected_memory_is_followed_to_its_replacement(shop: dict[str, str]) -> None:
    add("which database stores the orders?", shop["database"])
    newer = memory_remember(
        caller=AGENT,
        content="The shop stores orders in PostgreSQL 17 since the upgrade; Redis only caches sessions.",
        project=REPO,
        supersedes=shop["database"],
    )
    newest = memory_remember(
        caller=AGENT,
        content="The shop stores orders in PostgreSQL 18 since the second upgrade; Redis caches sessions.",
        project=REPO,
        supersedes=newer.id,
    )
    [report] = json.loads(run("run", "--json"))
    [result] = report["results"]
    assert result["expected_ids"] == [newest.id] and result["passed"] and result["rank"] == 1


def test_refusals_say_what_to_do(shop: dict[str, str]) -> None:
    other = memory_remember(caller=AGENT, content="The blog runs on Hugo.", project="github.com/acme/blog")
    with pytest.raises(CommandError, match="belongs to another project, so recall for this project never"):
        add("what runs the blog?", other.id)
    with pytest.raises(CommandError, match="an expected memory is not a memory id"):
        add("what runs the blog?", "not-an-id")
    with pytest.raises(CommandError, match="k must be between 1 and 50"):
        add("how do deploys go out?", shop["deploy"], k=51)
    memory_forget(caller=AGENT, memory_id=shop["style"])
    with pytest.raises(CommandError, match="is deleted, so recall never returns it"):
        add("how is code formatted?", shop["style"])
    with pytest.raises(
        CommandError, match=re.escape("there are no golden questions; add one with `manage.py eval add`")
    ):
        run("run")
    assert GoldenQuestion.objects.count() == 0
    with pytest.raises(CommandError, match="--max-drop must be between 0 and 1"):
        run("run", "--max-drop", "2")


def test_every_action_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for action, says in (
        ("add", "--expect ID"),
        ("list", "List the golden questions"),
        ("run", "--max-drop"),
        ("remove", "past runs keep it"),
    ):
        with pytest.raises(SystemExit):
            call_command("eval", action, "--help")
        assert says in capsys.readouterr().out
