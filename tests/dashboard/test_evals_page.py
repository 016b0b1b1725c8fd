"""The golden questions' page: add and remove questions, run them now, and see the trend and the last
run's failures."""

import re
from collections.abc import Callable

import pytest

from access.caller import Caller
from evals.models import EvalRun, GoldenQuestion
from memories.services.remember import memory_remember
from tests.dashboard.conftest import Owner

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/shop"
SCOPE = "project:github.com/acme/shop"
HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def facts(provider_env: Callable[..., None]) -> dict[str, str]:
    provider_env(KENFOLD_EMBED="off", KENFOLD_EMBED_URL=None, KENFOLD_RERANK_URL=None)
    texts = {
        "deploy": "Deploys go out through the GitHub Actions workflow deploy.yml on every tag.",
        "database": "The shop stores orders in PostgreSQL 16; Redis only caches sessions.",
    }
    return {
        name: memory_remember(caller=AGENT, content=text, project=REPO).id for name, text in texts.items()
    }


def test_add_run_see_failures_and_remove(owner: Owner, facts: dict[str, str]) -> None:
    assert "No golden questions yet." in owner.page("/dashboard/evals")
    added = owner.post(
        "/dashboard/evals/questions",
        {"project": REPO, "query": "how do deploys go out?", "expected": f"{facts['deploy']}", "k": "3"},
    )
    assert (
        added.status_code == 303
        and added["Location"] == f"/dashboard/evals?scope={SCOPE.replace(':', '%3A').replace('/', '%2F')}"
    )
    owner.post(
        "/dashboard/evals/questions",
        {
            "project": REPO,
            "query": "how do deploys go out " + HOSTILE,
            "expected": facts["database"],
            "k": "1",
        },
    )
    assert GoldenQuestion.objects.count() == 2

    ran = owner.post("/dashboard/evals/run", {"scope": SCOPE})
    assert ran.status_code == 303
    assert EvalRun.objects.get().trigger == "manual"
    html = owner.page(f"/dashboard/evals?scope={SCOPE}")
    assert f"{SCOPE}: 1 of 2 passed, recall@k 0.500, MRR 0.500." in html
    assert "<polyline" in html and "<td>manual</td><td>1 of 2</td><td>0.500</td>" in html
    failure = re.search(r'<article class="item failure">(.*?)</article>', html, re.DOTALL).group(1)
    assert "how do deploys go out &lt;script&gt;" in failure and "<script>" not in html
    assert f'/dashboard/memories/{facts["deploy"]}" class="content">Deploys go out' in failure, "came instead"

    question = GoldenQuestion.objects.get(k=1)
    owner.post(f"/dashboard/evals/questions/{question.id}/remove", {"back": "/dashboard/evals"})
    assert "Removed; its past runs keep it." in owner.flash("/dashboard/evals")
    assert GoldenQuestion.objects.count() == 1


def test_refused_input_is_flashed_and_adds_nothing(owner: Owner, facts: dict[str, str]) -> None:
    owner.post("/dashboard/evals/questions", {"project": REPO, "query": "x", "expected": "nope", "k": "3"})
    assert (
        "An expected memory is not a memory id (a UUID); use an id returned by remember, recall, or "
        "get_context; nothing was added." in owner.flash("/dashboard/evals")
    )
    owner.post(
        "/dashboard/evals/questions", {"project": REPO, "query": "x", "expected": facts["deploy"], "k": "x"}
    )
    assert (
        "K must be between 1 and 50 (recall returns at most 50 memories); nothing was added."
        in owner.flash("/dashboard/evals")
    )
    owner.post("/dashboard/evals/run", {"scope": ""})
    assert "There are no golden questions; add one with `manage.py eval add`." in owner.flash(
        "/dashboard/evals"
    )
    assert GoldenQuestion.objects.count() == 0 and EvalRun.objects.count() == 0
