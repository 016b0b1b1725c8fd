"""The dashboard in a real browser (Debian's chromium driven by Playwright): log in, approve a proposed
memory, search, open a memory, apply a consolidation proposal, revoke a key, log out; a screenshot of each page at 1280 and 400 px wide
goes to artifacts/dashboard/. Any script, any resource from another origin, or a console message about
the content security policy fails the test.

Not part of `make test` (marked `browser`, deselected there): `make test-browser` runs it.
"""

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from access import keys
from access.models import ApiKey
from access.password import password_set
from bench.support.processes import REPO
from consolidation.models import Kind
from consolidation.services import proposal_record
from memories.models import Memory, Status
from tests.browser.support import TIMEOUT_MS, Watch, chromium, origin_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
ARTIFACTS = REPO / "artifacts" / "dashboard"
WIDTHS = (1280, 400)


def shoot(page, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_the_owner_goes_through_the_dashboard(live_server, provider_env) -> None:
    from playwright.sync_api import expect, sync_playwright

    provider_env(KENFOLD_EMBED="off")
    password_set(password=PASSWORD)
    proposal = Memory.objects.create(
        type="preference",
        scope="user",
        content="The user wants answers in English, short, with code first.",
        source_agent="kenfold-extractor",
        status=Status.PROPOSED,
        attrs={"evidence": "please keep it short and show the code first", "extractor_model": "qwen3.5:4b"},
    )
    for text, agent in [
        ("The deploy script is scripts/deploy.sh; it needs the staging key.", "claude-code"),
        ("We deploy on Mondays after the standup.", "codex"),
        ("<b>Never</b> run migrations by hand on production.", "codex"),
    ]:
        Memory.objects.create(
            type="project", scope="project:github.com/kenfold/kenfold", content=text, source_agent=agent
        )
    older = Memory.objects.create(
        type="project", scope="user", content="The API listens on port 7077.", source_agent="codex"
    )
    newer = Memory.objects.create(
        type="project",
        scope="user",
        content="Kenfold's API runs on port 7077 by default.",
        source_agent="claude-code",
    )
    proposal_record(
        kind=Kind.DUPLICATE,
        scope="user",
        member_ids=[older.pk, newer.pk],
        keep_id=newer.pk,
        model="qwen3.5:4b",
        reason="Both give the same port; the newer one says it is the default.",
    )
    key, _raw = keys.api_key_create(agent="old-laptop")
    keys.api_key_create(agent="claude-code")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    base = live_server.url
    watch = Watch(origin_of(base))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTHS[0], "height": 900})
        page.set_default_timeout(TIMEOUT_MS)
        expect.set_options(timeout=TIMEOUT_MS)
        watch.attach(page)

        page.goto(base + "/dashboard/")
        assert urlsplit(page.url).path == "/dashboard/login"
        shoot(page, "1-login")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("h1")).to_have_text("Overview")
        shoot(page, "2-overview")

        page.click("nav >> text=Review")
        expect(page.locator(".item .content")).to_contain_text("answers in English")
        shoot(page, "3-review")
        page.click(".item >> text=Approve")
        expect(page.locator(".flash.ok")).to_have_text("Approved.")
        expect(page.locator(".item")).to_have_count(0)
        shoot(page, "4-review-approved")

        page.click("nav >> text=Memories")
        page.fill("input[name=q]", "deploy")
        page.click("text=Show")
        expect(page.locator("main")).to_contain_text("Ranked as agents see it")
        expect(page.locator("ol.rows li")).to_have_count(2)
        shoot(page, "5-search")
        page.click("ol.rows li >> nth=0 >> a")
        expect(page.locator("h2", has_text="Versions")).to_be_visible()
        shoot(page, "6-memory")

        page.goto(base + "/dashboard/memories?status=all")
        expect(page.locator("main")).to_contain_text("<b>Never</b> run migrations")
        page.click("nav >> text=Proposals")
        expect(page.locator(".item")).to_have_count(1)
        shoot(page, "7-proposals")
        page.click(".item >> text=Apply")
        expect(page.locator(".flash.ok")).to_have_text("Applied: 1 memory retired.")

        page.click("nav >> text=Clients")
        row = page.locator("tr", has_text="old-laptop")
        row.locator("text=Revoke").click()
        expect(page.locator(".flash.ok")).to_contain_text("Revoked the key")
        expect(page.locator("tr", has_text="old-laptop")).to_have_count(0)
        shoot(page, "8-clients")

        page.click("text=Log out")
        assert urlsplit(page.url).path == "/dashboard/login"
        page.goto(base + "/dashboard/clients")
        assert urlsplit(page.url).path == "/dashboard/login"
        shoot(page, "9-logged-out")
        browser.close()

    assert watch.problems == []
    proposal.refresh_from_db()
    assert proposal.status == Status.ACTIVE and proposal.attrs["approved_by"] == "kenfold-dashboard"
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None
    older.refresh_from_db()
    assert older.status == Status.SUPERSEDED
    shots = sorted(p.name for p in Path(ARTIFACTS).glob("*.png"))
    assert len(shots) == 18, shots
