"""The owner sees who is near a write quota (overview), a memory's history, and the audit page."""

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from html import unescape

import pytest
from pytest_django.fixtures import Settings

from access import keys
from access.caller import Caller
from kenfold import clock
from memories.services.remember import memory_remember
from tests.dashboard.conftest import Owner

AT = datetime(2026, 12, 6, 10, 15, 42, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


def key_caller(agent: str) -> tuple[Caller, str]:
    key, _ = keys.api_key_create(agent=agent)
    return Caller(agent=agent, credential=f"key:{key.id}"), key.prefix


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_overview_lists_credentials_near_a_quota_only(owner: Owner, settings: Settings) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 10
    busy, busy_prefix = key_caller("claude-code")
    calm, calm_prefix = key_caller("codex")
    # One instant for the writes and the page, so that they share a minute's window.
    now = clock.now()
    with clock.frozen(now):
        assert "Near a write quota" not in owner.page("/dashboard/")
        for number in range(8):
            memory_remember(caller=busy, content=f"Busy fact {number}.")
        memory_remember(caller=calm, content="Calm fact.")
        page = text(owner.page("/dashboard/"))
    resets = (now.replace(second=0, microsecond=0) + timedelta(minutes=1)).strftime("%H:%M:%S")
    assert (
        f"Near a write quota credential quota used resets key {busy_prefix} 10 writes per minute 8 (80 %) "
        f"{resets} UTC"
    ) in page
    assert calm_prefix not in page


def test_a_memorys_page_shows_its_history_and_the_audit_page_lists_it_per_credential(owner: Owner) -> None:
    agent, prefix = key_caller("claude-code")
    with clock.frozen(clock.now() - timedelta(days=3)):
        old = memory_remember(caller=Caller(agent="codex"), content="An old fact.")
    first = memory_remember(caller=agent, content="Deploys run on Fridays.")
    assert owner.post(f"/dashboard/memories/{first.id}/forget", {"reason": "obsolete"}).status_code == 303
    page = text(owner.page(f"/dashboard/memories/{first.id}"))
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.search(
        rf"History when \(UTC\) what agent credential detail {when} created claude-code key {prefix} "
        rf"type: semantic; status: active {when} forgotten kenfold-dashboard none reason: obsolete",
        page,
    ), page
    audit = text(owner.page("/dashboard/audit?days=1"))
    assert f"key {prefix} claude-code 1 created" in audit
    assert "no credential (owner, stdio, worker) kenfold-dashboard 1 forgotten" in audit
    assert str(old.id)[:13] not in owner.page("/dashboard/audit?days=1")
    assert str(old.id)[:13] in owner.page("/dashboard/audit?days=7")
    only_key = owner.page(f"/dashboard/audit?days=7&credential={prefix}")
    assert re.findall(r"<td>(created|forgotten)</td>", only_key) == ["created"]
