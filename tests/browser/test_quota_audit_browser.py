"""Write quotas and the audit trail in a real browser (Debian's chromium driven by Playwright): the
overview names the key near its quota, a memory's page shows its history with the key that wrote it, and
the audit page lists the changes per credential and filters by one. Screenshots at 1280 and 400 px go to
artifacts/quota-audit/. Any script, any resource from another origin, or a console error fails the test.

Not part of `make test` (marked `browser`): `make test-browser` runs it.
"""

import re
from pathlib import Path

import pytest

from access import keys
from access.caller import Caller
from access.password import password_set
from bench.support.processes import REPO
from kenfold import clock
from memories.services.remember import memory_remember
from tests.browser.support import TIMEOUT_MS, Watch, chromium, origin_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
ARTIFACTS = REPO / "artifacts" / "quota-audit"
WIDTHS = (1280, 400)


def shoot(page, name: str) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(ARTIFACTS / f"{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": WIDTHS[0], "height": 900})


def test_the_owner_sees_quotas_and_the_audit_trail(live_server, provider_env, settings) -> None:
    provider_env(KENFOLD_EMBED="off")
    # The limit is read at each write: a small one here, so a few writes bring the key near it. A window
    # is one UTC minute and chromium takes seconds to start, so the clock stands still for the whole test
    # (the live server runs in this process and reads the same clock).
    settings.QUOTA_WRITES_PER_MINUTE = 10
    with clock.frozen(clock.now()):
        _walk_through(live_server)


def _walk_through(live_server) -> None:
    from playwright.sync_api import expect, sync_playwright

    password_set(password=PASSWORD)
    busy, _ = keys.api_key_create(agent="claude-code", label="laptop")
    calm, _ = keys.api_key_create(agent="codex")
    claude = Caller(agent="claude-code", credential=f"key:{busy.id}")
    codex = Caller(agent="codex", credential=f"key:{calm.id}")
    project = "git@github.com:kenfold/kenfold.git"
    first = memory_remember(caller=claude, content="Deploys run on Fridays.", project=project)
    memory_remember(
        caller=codex, content="Deploys run on Tuesdays now.", project=project, supersedes=first.id
    )
    for number in range(8):
        memory_remember(caller=claude, content=f"Build step {number} caches the wheels.", project=project)
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
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        near = page.locator("h2", has_text="Near a write quota")
        expect(near).to_be_visible()
        row = page.locator("tr", has_text=busy.prefix)
        expect(row).to_contain_text("10 writes per minute")
        expect(row).to_contain_text("9 (90 %)")
        expect(page.locator("tr", has_text=calm.prefix)).to_have_count(0)
        shoot(page, "1-overview-near-quota")

        page.goto(base + f"/dashboard/memories/{first.id}")
        history = page.locator("h2", has_text="History").locator("xpath=following-sibling::div[1]")
        expect(history.locator("tbody tr")).to_have_count(2)
        when = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$")
        expect(history.locator("tbody tr").nth(0).locator("td")).to_have_text(
            [when, "created", "claude-code", f"key {busy.prefix}", "type: project; status: active"]
        )
        expect(history.locator("tbody tr").nth(1).locator("td")).to_have_text(
            [when, "superseded", "codex", f"key {calm.prefix}", re.compile(r"^by: [0-9a-f-]{36}$")]
        )
        shoot(page, "2-memory-history")

        page.click("nav >> text=Audit")
        expect(page.locator("h1")).to_have_text("Audit trail")
        expect(page.locator("tr", has_text=f"key {busy.prefix}").first).to_contain_text("9 created")
        expect(page.locator("tr", has_text=f"key {calm.prefix}").first).to_contain_text(
            "1 created, 1 superseded"
        )
        shoot(page, "3-audit")
        page.fill("input[name=credential]", calm.prefix)
        page.click("text=Show")
        expect(page.locator("h2", has_text="Events of")).to_contain_text(f"key:{calm.id}")
        events = page.locator("h2", has_text="Events of").locator("xpath=following-sibling::div[1]")
        expect(events.locator("tbody tr")).to_have_count(2)
        shoot(page, "4-audit-one-key")
        browser.close()

    assert watch.problems == []
    shots = sorted(p.name for p in Path(ARTIFACTS).glob("*.png"))
    assert len(shots) == 8, shots
