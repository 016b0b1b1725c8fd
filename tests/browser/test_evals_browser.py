"""The golden questions' page in Debian's chromium: add a question with the form, run it now, see the run
in the trend and its failure with what came instead, remove a question. A screenshot of the page is saved
in the test's temporary folder.

Not part of `make test` (marked `browser`, deselected there): `make test-browser` runs it.
"""

from pathlib import Path

import pytest

from access.caller import Caller
from evals.models import EvalRun, GoldenQuestion
from memories.services.remember import memory_remember
from tests.browser.test_dashboard_forms_browser import signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REPO = "github.com/acme/shop"
SCOPE = "project:github.com/acme/shop"
AGENT = Caller(agent="claude-code")


def test_add_run_and_remove_golden_questions(live_server, provider_env, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    provider_env(KENFOLD_EMBED="off", KENFOLD_EMBED_URL=None, KENFOLD_RERANK_URL=None)
    deploy = memory_remember(
        caller=AGENT,
        content="Deploys go out through the GitHub Actions workflow deploy.yml on every tag.",
        project=REPO,
    ).id
    database = memory_remember(
        caller=AGENT, content="The shop stores orders in PostgreSQL 16.", project=REPO
    ).id

    with signed_in(live_server.url) as (page, _watch):
        page.click("text=Golden questions")
        expect(page.locator("h1")).to_have_text("Golden questions")
        form = page.locator("form.add-question")
        for query, expected, k in (
            ("how do deploys go out?", deploy, "3"),
            ("how do deploys go out on every tag?", database, "1"),
        ):
            form.locator("input[name=project]").fill(REPO)
            form.locator("input[name=query]").fill(query)
            form.locator("input[name=expected]").fill(expected)
            form.locator("input[name=k]").fill(k)
            form.locator("button[type=submit]").click()
            expect(page.locator(".flash.ok")).to_have_text("Added. Run the questions to score it.")
        expect(page.locator("table.questions tbody tr")).to_have_count(2)

        page.click("button:has-text('Run now')")
        expect(page.locator(".flash.ok")).to_have_text(f"{SCOPE}: 1 of 2 passed, recall@k 0.500, MRR 0.500.")
        expect(page.locator("table.runs tbody tr")).to_have_count(1)
        expect(page.locator("svg.chart polyline")).to_have_count(2)
        failure = page.locator("article.failure")
        expect(failure).to_have_count(1)
        expect(failure.locator("strong")).to_have_text("how do deploys go out on every tag?")
        expect(failure.locator("ol li").first).to_contain_text("Deploys go out through the GitHub Actions")
        page.screenshot(path=str(tmp_path / "golden-questions-1280.png"), full_page=True)

        page.locator("table.questions tbody tr").filter(has_text="on every tag").locator(
            "button:has-text('Remove')"
        ).click()
        expect(page.locator(".flash.ok")).to_have_text("Removed; its past runs keep it.")
        expect(page.locator("table.questions tbody tr")).to_have_count(1)

    assert list(GoldenQuestion.objects.values_list("query", flat=True)) == ["how do deploys go out?"]
    assert list(EvalRun.objects.values_list("trigger", "passed", "questions")) == [("manual", 1, 2)]
    assert (tmp_path / "golden-questions-1280.png").stat().st_size > 10_000
