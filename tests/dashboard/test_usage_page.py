"""The Usage page (issue 39 item 2): never-reused memories as forgetting candidates, and the most reused."""

import re
from datetime import timedelta

from access.caller import Caller
from kenfold import clock
from memories import usage
from memories.models import Memory
from tests.dashboard.conftest import Owner, memory

CLAUDE = Caller(agent="claude-code", credential="key:1")


def section_ids(html: str, section: str) -> list[str]:
    part = html.split(f'id="{section}"', 1)[1].split("<h2", 1)[0]
    return re.findall(r"/dashboard/memories/([0-9a-f-]{36})", part)


def aged(content: str, days: int) -> Memory:
    row = memory(content=content)
    Memory.objects.filter(id=row.id).update(created_at=clock.now() - timedelta(days=days))
    return row


def test_the_usage_page_lists_never_used_and_most_used_memories(owner: Owner) -> None:
    reused, served_only, never_served = (
        aged("Refunds go through PaymentService.refund().", 90),
        aged("Deploys run from the release branch.", 60),
        aged("The staging database is reset every Sunday night.", 45),
    )
    recent = aged("Feature flags live in config/flags.yaml.", 2)
    now = clock.now()
    ids = [str(reused.id), str(served_only.id), str(recent.id)]
    usage.usage_record(caller=CLAUDE, tool="get_context", memory_ids=ids, session_id="s", now=now)
    usage.usage_mark_used(
        caller=CLAUDE, memory_ids=usage.parse_used([str(reused.id)]), session_id="s", now=now
    )

    html = owner.page("/dashboard/usage")
    assert '<a href="/dashboard/usage">Usage</a>' in html
    assert "1 answer since" in html and "3 memories served, 1 reused." in html
    assert section_ids(html, "never-used") == [str(never_served.id), str(served_only.id)]
    assert "never served" in html and "served 1×" in html
    assert section_ids(html, "most-used") == [str(reused.id)]
    assert "reused 1× of 1 served" in html
    # A shorter idle time makes the memory written two days ago a candidate too.
    assert str(recent.id) in section_ids(owner.page("/dashboard/usage?days=1"), "never-used")


def test_the_usage_page_explains_a_bad_days_value_and_recording_turned_off(owner: Owner, settings) -> None:
    response = owner.get("/dashboard/usage?days=soon")
    assert response.status_code == 400
    assert "days must be a whole number from 0 to 3650" in response.content.decode()
    settings.USAGE_DAYS = 0
    assert "Usage is not recorded: KENFOLD_USAGE_DAYS is 0." in owner.page("/dashboard/usage")
