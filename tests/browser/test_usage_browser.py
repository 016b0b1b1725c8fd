"""The Usage page in a real browser (issue 39 item 2): the owner opens it from the navigation, sees the
never-reused memories (forgetting candidates) and the most reused ones, narrows the candidates by age and
forgets one from its page. Screenshots at 1280 and 400 px go to artifacts/dashboard-usage/.

Not part of `make test` (marked `browser`, deselected there): `make test-browser` runs it.
"""

from datetime import timedelta
from urllib.parse import urlsplit

import pytest

from access.caller import Caller
from access.password import password_set
from bench.support.processes import REPO
from kenfold import clock
from memories import usage
from memories.models import Memory, Status
from tests.browser.support import TIMEOUT_MS, Watch, chromium, origin_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
ARTIFACTS = REPO / "artifacts" / "dashboard-usage"
SHOP = "project:github.com/kenfold/shop"
CLAUDE = Caller(agent="claude-code", credential="key:1")


def aged(content: str, days: int) -> Memory:
    row = Memory.objects.create(type="project", scope=SHOP, content=content, source_agent="codex")
    Memory.objects.filter(id=row.id).update(created_at=clock.now() - timedelta(days=days))
    return row


def shoot(page, name: str) -> None:
    for width in (1280, 400):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def test_the_owner_finds_and_forgets_a_memory_no_agent_reused(live_server) -> None:
    from playwright.sync_api import expect, sync_playwright

    password_set(password=PASSWORD)
    refund = aged("Refunds go through PaymentService.refund() in app/payments/refund.py.", 90)
    deploy = aged("Deploys run from the release branch after the payments tests pass.", 60)
    staging = aged("The staging database is reset every Sunday night.", 45)
    aged("Feature flags live in config/flags.yaml.", 3)
    now = clock.now()
    for session in ("s-1", "s-2", "s-3"):
        usage.usage_record(
            caller=CLAUDE,
            tool="get_context",
            memory_ids=[str(refund.id), str(deploy.id)],
            session_id=session,
            now=now,
        )
        usage.usage_mark_used(
            caller=CLAUDE, memory_ids=usage.parse_used([str(refund.id)]), session_id=session, now=now
        )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    watch = Watch(origin_of(base))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        watch.attach(page)
        page.goto(base + "/dashboard/login")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("h1")).to_have_text("Overview")

        page.click("nav >> text=Usage")
        expect(page.locator("h1")).to_have_text("Usage")
        expect(page.locator("main")).to_contain_text("3 answers since")
        never = page.locator("h2#never-used + p + ol.rows li")
        expect(never).to_have_count(2)
        expect(never.nth(0)).to_contain_text("The staging database is reset")
        expect(never.nth(0)).to_contain_text("never served")
        expect(never.nth(1)).to_contain_text("served 3×")
        expect(page.locator("h2#most-used + ol.rows li")).to_contain_text("reused 3× of 3 served")
        shoot(page, "usage")

        page.fill("input[name=days]", "1")
        page.click("text=Show")
        expect(never).to_have_count(3)
        # Never served, oldest first: the staging rule, then the one written three days ago.
        expect(never.nth(1)).to_contain_text("Feature flags")

        page.goto(base + "/dashboard/usage")
        never.nth(0).locator("a").click()
        assert urlsplit(page.url).path == f"/dashboard/memories/{staging.id}"
        page.fill("input[name=reason]", "nobody uses it")
        page.click("button:has-text('Forget')")
        expect(page.locator(".flash.ok")).to_be_visible()
        page.goto(base + "/dashboard/usage")
        expect(never).to_have_count(1)
        browser.close()

    assert watch.problems == []
    staging.refresh_from_db()
    assert staging.status == Status.DELETED
    assert sorted(path.name for path in ARTIFACTS.glob("*.png")) == ["usage-1280.png", "usage-400.png"]
