"""Write quotas per credential at the service layer and through the owner's commands (issue 38 item 2)."""

import io
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from pytest_django.fixtures import Settings

from access.caller import Caller
from access.keys import api_key_create
from access.models import ApiKey
from kenfold import clock
from kenfold_common.errors import QuotaExceeded
from memories import quotas
from memories.models import Memory, MemoryEvent, QuotaCounter
from memories.schemas import RememberOutput
from memories.services.handoff import handoff_create
from memories.services.remember import memory_remember
from memories.services.review import memory_forget
from projectdocs.schemas import DocsSyncInput
from projectdocs.services import docs_sync

pytestmark = pytest.mark.django_db

REPO = "git@github.com:acme/shop.git"
AT = datetime(2026, 12, 6, 10, 15, 42, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


@pytest.fixture
def key_caller() -> Caller:
    key, _ = api_key_create(agent="claude-code")
    return Caller(agent="claude-code", credential=f"key:{key.id}")


def remember(caller: Caller, text: str) -> RememberOutput:
    return memory_remember(caller=caller, content=text, project=REPO)


def test_over_the_writes_quota_a_remember_is_refused_with_the_limit_and_the_reset(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 3
    with clock.frozen(AT):
        for number in range(3):
            remember(key_caller, f"Deploys go through stage {number} first.")
        with pytest.raises(QuotaExceeded) as refused:
            remember(key_caller, "Deploys go through stage 9 first.")
    message = refused.value.message
    prefix = key_caller.credential and quotas._who(key_caller.credential)[0]
    assert prefix and prefix in message
    assert "wrote 3 times this minute; its limit is 3 writes per minute" in message
    assert "KENFOLD_QUOTA_WRITES_PER_MINUTE" in message
    assert "resets at 10:16:00 UTC, in 18 s" in message
    key_prefix = ApiKey.objects.get().prefix
    assert message.startswith(f"quota reached: this API key ({key_prefix}) wrote 3 times this minute")
    assert message.endswith(f"`manage.py key quota {key_prefix} --writes-per-minute N` (0 = no limit).")
    assert refused.value.retry_after == 18 and refused.value.status_code == 429
    # Nothing of the refused call was written: no memory, no event, no count.
    assert not Memory.objects.filter(content__contains="stage 9").exists()
    assert MemoryEvent.objects.filter(action="created").count() == 3
    assert QuotaCounter.objects.get(kind="writes").count == 3
    # The next minute is a new window.
    with clock.frozen(AT + timedelta(seconds=18)):
        assert remember(key_caller, "Deploys go through stage 9 first.").deduplicated is False


def test_the_memories_per_day_quota_counts_created_memories_and_resets_at_midnight_utc(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_MEMORIES_PER_DAY = 2
    with clock.frozen(AT):
        remember(key_caller, "The shop uses PostgreSQL 17.")
        # A deduplicated remember stores nothing and is not counted.
        assert remember(key_caller, "the shop uses postgresql 17").deduplicated
        handoff_create(caller=key_caller, summary="Half way through the migration.", project=REPO)
        with pytest.raises(QuotaExceeded) as refused:
            remember(key_caller, "The shop's CDN is Fastly.")
    assert "created 2 memories today (UTC); its limit is 2 memories per day" in refused.value.message
    assert "resets at 00:00:00 UTC, in 49458 s" in refused.value.message
    assert refused.value.retry_after == 49458
    assert "--memories-per-day N" in refused.value.message
    assert Memory.objects.count() == 2


def test_callers_without_a_credential_have_no_quota(settings: Settings) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 1
    stdio = Caller(agent="claude-code")
    for number in range(3):
        remember(stdio, f"Local fact number {number}.")
    assert Memory.objects.count() == 3 and not QuotaCounter.objects.exists()


def test_forget_counts_as_a_write_and_an_over_quota_forget_deletes_nothing(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 2
    with clock.frozen(AT):
        first = remember(key_caller, "Old rule one.")
        memory_forget(caller=key_caller, memory_id=first.id)
        second = Memory.objects.create(
            type="project", scope="project:github.com/acme/shop", content="Old rule two.", source_agent="x"
        )
        with pytest.raises(QuotaExceeded):
            memory_forget(caller=key_caller, memory_id=str(second.id))
    assert Memory.objects.get(pk=second.pk).status == "active"
    assert not MemoryEvent.objects.filter(memory_id=second.pk).exists()


def test_a_docs_sync_over_the_daily_quota_stores_none_of_its_sections(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_MEMORIES_PER_DAY = 3
    chunks = [
        {"heading_path": [f"Part {n}"], "content": f"## Part {n}\n\nStep {n} of the runbook."}
        for n in range(4)
    ]
    sync = DocsSyncInput(
        project=REPO, files=[{"path": "docs/runbook.md", "file_hash": "a" * 64, "chunks": chunks}]
    )
    refused = "created 0 memories today \\(UTC\\) and this call would create 4 more; its limit is 3 memories per day"
    with clock.frozen(AT), pytest.raises(QuotaExceeded, match=refused):
        docs_sync(caller=key_caller, sync=sync)
    assert not Memory.objects.exists() and not MemoryEvent.objects.exists()


def test_the_owner_sets_a_keys_own_quota_by_prefix_and_zero_means_none(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 1
    key_id = key_caller.credential.partition(":")[2] if key_caller.credential else ""
    prefix = quotas._who(f"key:{key_id}")[0].split("(")[1].rstrip(")")
    out = io.StringIO()
    call_command("key", "quota", prefix, "--writes-per-minute", "2", stdout=out)
    assert "2 writes per minute (its own), 2000 memories per day (the default)" in out.getvalue()
    with clock.frozen(AT):
        remember(key_caller, "One.")
        remember(key_caller, "Two.")
        with pytest.raises(QuotaExceeded, match=r"its limit is 2 writes per minute \(the key's own limit\)"):
            remember(key_caller, "Three.")
    call_command("key", "quota", prefix, "--writes-per-minute", "0", stdout=io.StringIO())
    with clock.frozen(AT):
        remember(key_caller, "Three.")
    out = io.StringIO()
    call_command("key", "quota", prefix, "--reset", stdout=out)
    assert "1 writes per minute (the default)" in out.getvalue()
    with pytest.raises(CommandError, match="must be 0 \\(no limit\\) or more"):
        call_command("key", "quota", prefix, "--memories-per-day", "-1")


def test_the_dashboard_list_names_credentials_at_80_percent_of_a_limit(
    settings: Settings, key_caller: Caller
) -> None:
    settings.QUOTA_WRITES_PER_MINUTE = 5
    other_key, _ = api_key_create(agent="codex")
    other = Caller(agent="codex", credential=f"key:{other_key.id}")
    with clock.frozen(AT):
        for number in range(4):
            remember(key_caller, f"Fact {number} of claude.")
        remember(other, "Fact of codex.")
        near = quotas.quota_near_limits()
    assert [(u.credential, u.kind, u.count, u.quota, u.percent) for u in near] == [
        (key_caller.credential, "writes", 4, 5, 80)
    ]
    with clock.frozen(AT + timedelta(minutes=1)):
        assert quotas.quota_near_limits() == []


def test_counter_rows_of_ended_windows_are_pruned(settings: Settings, key_caller: Caller) -> None:
    for minutes in range(5):
        with clock.frozen(AT + timedelta(minutes=minutes)):
            remember(key_caller, f"Fact of minute {minutes}.")
    with clock.frozen(AT + timedelta(days=1)):
        remember(key_caller, "Fact of the next day.")
    rows = sorted((row.kind, row.window_start, row.count) for row in QuotaCounter.objects.all())
    next_day = AT + timedelta(days=1)
    assert rows == [
        ("memories", next_day.replace(hour=0, minute=0, second=0), 1),
        ("writes", next_day.replace(second=0), 1),
    ]
