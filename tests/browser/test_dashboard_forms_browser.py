"""The dashboard's other forms in a real browser (issue 35): each form that test_dashboard_browser.py and
test_consent_browser.py do not submit is submitted here in Debian's chromium, and the test asserts what
it changed. The review queue's scope filter, rejecting with a reason and approving in place of a similar
memory; the memory list's filters and forgetting a memory; creating an API key (and a refused name); the
proposals' status filter and rejecting one with a reason.

Not part of `make test` (marked `browser`, deselected there): `make test-browser` runs it.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import parse_qs, urlsplit

import pytest

from access import keys
from access.password import password_set
from consolidation.models import Consolidation, Kind, ProposalStatus
from consolidation.services import proposal_record
from memories.models import Memory, Status
from tests.browser.support import TIMEOUT_MS, Watch, chromium, origin_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
SHOP = "project:github.com/kenfold/shop"


@contextmanager
def signed_in(base: str) -> Iterator:
    """A chromium page logged in to the dashboard at `base`, and its watch: no problem may be seen."""
    from playwright.sync_api import expect, sync_playwright

    password_set(password=PASSWORD)
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
        yield page, watch
        browser.close()
    assert watch.problems == []


def query(page) -> dict[str, list[str]]:
    return parse_qs(urlsplit(page.url).query)


def test_review_filter_reject_with_a_reason_and_approve_in_place_of_a_similar_memory(
    live_server, provider_env
) -> None:
    from playwright.sync_api import expect

    provider_env(KENFOLD_EMBED="off")
    guess = Memory.objects.create(
        type="project",
        scope=SHOP,
        content="Checkout probably uses Stripe's payment intents.",
        source_agent="kenfold-extractor",
        status=Status.PROPOSED,
    )
    old = Memory.objects.create(
        type="preference", scope="user", content="The user indents with spaces.", source_agent="codex"
    )
    newer = Memory.objects.create(
        type="preference",
        scope="user",
        content="The user indents with tabs, also in Python files.",
        source_agent="kenfold-extractor",
        status=Status.PROPOSED,
        attrs={"similar_to": [str(old.pk)]},
    )

    with signed_in(live_server.url) as (page, _watch):
        page.click("nav >> text=Review")
        expect(page.locator(".item")).to_have_count(2)
        page.fill("input[name=scope]", SHOP)
        page.click("text=Filter")
        expect(page.locator(".item")).to_have_count(1)
        expect(page.locator("main")).to_contain_text(f"1 waiting in {SHOP}")
        page.fill(".item input[name=reason]", "A guess from one log line, not a fact.")
        page.click(".item >> text=Reject")
        expect(page.locator(".flash.ok")).to_have_text("Rejected.")
        expect(page.locator("main")).to_contain_text("Nothing to review.")
        assert query(page)["scope"] == [SHOP]  # back to the filtered queue it was posted from

        page.fill("input[name=scope]", "")
        page.click("text=Filter")
        item = page.locator(".item")
        expect(item).to_have_count(1)
        expect(item.locator(".similar")).to_contain_text("The user indents with spaces.")
        item.locator("text=Approve, replacing this").click()
        expect(page.locator(".flash.ok")).to_have_text("Approved, replacing the similar memory.")
        expect(page.locator(".item")).to_have_count(0)

    guess.refresh_from_db()
    assert guess.status == Status.DELETED
    assert guess.attrs["forgotten_by"] == "kenfold-dashboard"
    assert guess.attrs["forget_reason"] == "A guess from one log line, not a fact."
    newer.refresh_from_db()
    old.refresh_from_db()
    assert newer.status == Status.ACTIVE and newer.supersedes_id == old.pk
    assert old.status == Status.SUPERSEDED


def test_memory_filters_and_forgetting_a_memory_with_a_reason(live_server, provider_env) -> None:
    from playwright.sync_api import expect

    provider_env(KENFOLD_EMBED="off")
    deploys = Memory.objects.create(
        type="project", scope=SHOP, content="Deploys run from GitHub Actions.", source_agent="codex"
    )
    Memory.objects.create(
        type="project",
        scope=SHOP,
        content="Deploys were copied over FTP.",
        source_agent="codex",
        status=Status.DELETED,
    )
    Memory.objects.create(
        type="codebase", scope=SHOP, content="Prices are stored in cents.", source_agent="codex"
    )
    Memory.objects.create(
        type="project", scope="user", content="The user deploys on Mondays.", source_agent="codex"
    )

    with signed_in(live_server.url) as (page, _watch):
        page.click("nav >> text=Memories")
        rows = page.locator("ol.rows li")
        expect(rows).to_have_count(3)
        page.fill("input[name=scope]", SHOP)
        page.select_option("select[name=type]", "project")
        page.select_option("select[name=status]", "all")
        page.click("text=Show")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("FTP")  # newest first
        expect(rows.nth(1)).to_contain_text("GitHub Actions")
        assert query(page) | {"q": [""]} == {
            "q": [""],
            "scope": [SHOP],
            "type": ["project"],
            "status": ["all"],
        }
        page.select_option("select[name=status]", "deleted")
        page.click("text=Show")
        expect(rows).to_have_count(1)
        expect(rows).to_contain_text("FTP")

        page.select_option("select[name=status]", "active")
        page.click("text=Show")
        page.click("ol.rows >> text=GitHub Actions")
        page.fill("input[name=reason]", "Moved to Buildkite in November.")
        page.click("text=Forget this memory")
        expect(page.locator(".flash.ok")).to_have_text("Forgotten: agents no longer see this memory.")
        expect(page.locator("p.meta .tag.deleted")).to_have_text("deleted")
        expect(page.locator("text=Forget this memory")).to_have_count(0)

    deploys.refresh_from_db()
    assert deploys.status == Status.DELETED
    assert deploys.attrs["forgotten_by"] == "kenfold-dashboard"
    assert deploys.attrs["forget_reason"] == "Moved to Buildkite in November."


def test_creating_a_key_and_rejecting_a_proposal_with_a_reason(live_server, provider_env) -> None:
    from playwright.sync_api import expect

    provider_env(KENFOLD_EMBED="off")
    first = Memory.objects.create(
        type="project", scope="user", content="The API listens on 7077.", source_agent="codex"
    )
    second = Memory.objects.create(
        type="project", scope="user", content="The admin UI listens on 7078.", source_agent="claude-code"
    )
    assert proposal_record(
        kind=Kind.DUPLICATE,
        scope="user",
        member_ids=[first.pk, second.pk],
        keep_id=second.pk,
        model="qwen3.5:4b",
        reason="Both give a port.",
    )

    with signed_in(live_server.url) as (page, watch):
        page.click("nav >> text=Clients")
        watch.expected.append("status of 400 (Bad Request)")
        page.fill("input[name=agent]", "Build Bot")
        page.click("text=Create key")
        expect(page.locator(".flash.error")).to_contain_text("is not a valid agent name")
        expect(page.locator("input[name=agent]")).to_have_value("Build Bot")
        page.fill("input[name=agent]", "build-bot")
        page.check("input[name=access][value=write]")
        page.click("text=Create key")
        expect(page.locator(".newkey")).to_contain_text("New read and write key for build-bot")
        raw = page.locator(".newkey code.wrap").inner_text()
        # The lines that connect the agent on its machine, with the key file holding this key.
        expect(page.locator(".newkey pre.connect")).to_contain_text(raw)
        expect(page.locator(".newkey pre.connect")).to_contain_text("kenfold connect")
        expect(page.locator("tr", has_text="build-bot")).to_contain_text("read+write")

        page.click("nav >> text=Proposals")
        expect(page.locator(".item")).to_have_count(1)
        page.fill(".item input[name=reason]", "Two different ports.")
        page.click(".item >> text=Reject")
        expect(page.locator(".flash.ok")).to_have_text(
            "Rejected: these memories will not be proposed together again."
        )
        expect(page.locator("main")).to_contain_text("No pending proposals.")
        page.select_option("select[name=status]", "rejected")
        page.click("text=Show")
        expect(page.locator(".item")).to_have_count(1)
        expect(page.locator(".item > p.meta")).to_contain_text("decided by kenfold-dashboard")

    key = keys.api_key_authenticate(token=raw)
    assert key.agent == "build-bot" and not key.read_only
    assert keys.api_key_list().count() == 1  # the refused name created nothing
    proposal = Consolidation.objects.get()
    assert proposal.status == ProposalStatus.REJECTED
    assert proposal.decided_by == "kenfold-dashboard"
    assert proposal.decision_note == "Two different ports."
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == Status.ACTIVE and second.status == Status.ACTIVE
