"""Which memories were served and reused (issue 39 item 2): recorded per recall and get_context through the
MCP tools, marked as used by a later call's `used`, bounded in rows and in days, and reported."""

import importlib
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.apps import apps
from django_q.models import Schedule
from mcp import Client

from access.caller import Caller
from edge.mcp.server import build_server
from kenfold import clock
from memories import tasks, usage
from memories.models import Memory, ServedCall
from memories.services.delivery import context_deliver, recall_deliver
from memories.services.remember import memory_remember

pytestmark = pytest.mark.django_db

AGENT = "usage-test"
PROJECT = "github.com/acme/usage"
SESSION = {"kenfold/session_id": "session-usage-1"}
REFUND = "Refunds go through PaymentService.refund(), never through a direct UPDATE of the payments table."
DEPLOY = "Deploys to production run from the release branch after the payments tests pass."
CLAUDE = Caller(agent="claude-code", credential="key:0000")


def in_memory(scenario: Callable[[Client], Awaitable[Any]]) -> Any:
    async def connected() -> Any:
        async with Client(build_server(agent=AGENT)) as client:
            return await scenario(client)

    return async_to_sync(connected)()


async def call(client: Client, tool: str, meta: dict | None = None, **arguments: object) -> dict:
    result = await client.call_tool(tool, arguments, meta=meta)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def remember(content: str, *, caller: Caller = CLAUDE) -> str:
    return memory_remember(caller=caller, content=content, type="project", project=PROJECT).id


def test_recall_and_get_context_record_what_they_served_in_rank_order() -> None:
    refund, deploy = remember(REFUND), remember(DEPLOY)

    async def scenario(client: Client) -> tuple[dict, dict]:
        recalled = await call(client, "recall", meta=SESSION, query="refund a payment", project=PROJECT)
        context = await call(client, "get_context", task="deploy the payments service", project=PROJECT)
        return recalled, context

    recalled, context = in_memory(scenario)
    first, second = ServedCall.objects.order_by("id")
    assert (first.tool, first.agent, first.credential, first.session_id) == (
        "recall",
        AGENT,
        None,
        "session-usage-1",
    )
    assert [str(i) for i in first.memory_ids] == [m["id"] for m in recalled["memories"]]
    assert str(first.memory_ids[0]) == refund and first.used_ids == []
    assert (second.tool, second.session_id) == ("get_context", None)
    sent = [m["id"] for part in ("preferences", "recent", "project", "relevant") for m in context[part]]
    assert [str(i) for i in second.memory_ids] == sent and set(sent) == {refund, deploy}


def test_used_on_a_later_call_marks_the_answer_that_served_the_memory() -> None:
    refund = remember(REFUND)
    never_served = str(Memory.objects.create(type="semantic", scope="user", content="x", source_agent="a").id)

    async def scenario(client: Client) -> Any:
        await call(client, "recall", query="refund a payment", project=PROJECT)
        await call(client, "recall", query="deploys", project=PROJECT, used=[refund, never_served])
        await call(client, "recall", query="deploys", project=PROJECT, used=[refund])  # said twice: no change
        return await client.call_tool("recall", {"query": "deploys", "used": ["not-an-id"]})

    refused = in_memory(scenario)
    rows = list(ServedCall.objects.order_by("id"))
    assert [str(i) for i in rows[0].used_ids] == [refund]
    assert all(row.used_ids == [] for row in rows[1:])
    assert refused.is_error
    assert refused.content[0].text == (
        "used[0] is not a memory id (a UUID); use an id returned by remember, recall, or get_context"
    )


def test_get_context_takes_used_too_and_a_read_only_caller_may_pass_it() -> None:
    refund = remember(REFUND)
    reader = Caller(agent="chatgpt", read_only=True, credential="grant:7")
    context_deliver(caller=reader, task="refunds", project=PROJECT)
    context_deliver(caller=reader, task="refunds", project=PROJECT, used=[refund])
    first, second = ServedCall.objects.order_by("id")
    assert [str(i) for i in first.used_ids] == [refund] and second.used_ids == []
    assert (first.agent, first.credential) == ("chatgpt", "grant:7")


def test_only_the_caller_that_was_served_a_memory_can_mark_it_used() -> None:
    refund = remember(REFUND)
    now = clock.now()
    usage.usage_record(caller=CLAUDE, tool="recall", memory_ids=[refund], session_id=None, now=now)
    other_key = Caller(agent="claude-code", credential="key:1111")
    assert (
        usage.usage_mark_used(
            caller=other_key, memory_ids=[usage.parse_used([refund])[0]], session_id=None, now=now
        )
        == 0
    )
    assert (
        usage.usage_mark_used(caller=CLAUDE, memory_ids=usage.parse_used([refund]), session_id=None, now=now)
        == 1
    )
    assert [str(i) for i in ServedCall.objects.get().used_ids] == [refund]


def test_the_session_answer_is_marked_before_a_later_one(settings) -> None:
    refund = remember(REFUND)
    now = clock.now()
    for session in ("s-1", "s-2"):
        usage.usage_record(
            caller=CLAUDE, tool="get_context", memory_ids=[refund], session_id=session, now=now
        )
    usage.usage_mark_used(caller=CLAUDE, memory_ids=usage.parse_used([refund]), session_id="s-1", now=now)
    assert {row.session_id: len(row.used_ids) for row in ServedCall.objects.all()} == {"s-1": 1, "s-2": 0}


def test_the_store_never_grows_past_its_row_limit(settings) -> None:
    settings.USAGE_MAX_ROWS = 100
    refund = remember(REFUND)
    now = clock.now()
    for _ in range(250):
        usage.usage_record(caller=CLAUDE, tool="recall", memory_ids=[refund], session_id=None, now=now)
        assert ServedCall.objects.count() <= 100
    ids = list(ServedCall.objects.order_by("id").values_list("id", flat=True))
    assert len(ids) == 100 and ids == list(range(ids[-1] - 99, ids[-1] + 1))  # the newest hundred


def test_answers_older_than_the_kept_days_are_pruned_by_the_scheduled_task(settings) -> None:
    settings.USAGE_DAYS = 30
    refund = remember(REFUND)
    now = clock.now()
    for age in (31, 29, 0):
        usage.usage_record(
            caller=CLAUDE, tool="recall", memory_ids=[refund], session_id=None, now=now - timedelta(days=age)
        )
    with clock.frozen(now):
        assert tasks.usage_prune_old() == "deleted 1 usage records"
    assert ServedCall.objects.count() == 2
    # What the migration schedules, written again here: a transactional test that ran earlier on this
    # worker flushes the tables, schedules included (the idle-worker test in tests/kenfold/test_quiet.py
    # sees the job run from a fresh migrate).
    importlib.import_module("memories.migrations.0020_served_call").schedule(apps, None)
    schedule = Schedule.objects.get(name="usage prune")
    assert (schedule.func, schedule.schedule_type) == ("memories.tasks.usage_prune_old", "H")


def test_zero_days_records_nothing_and_the_prune_empties_the_store(settings) -> None:
    refund = remember(REFUND)
    usage.usage_record(caller=CLAUDE, tool="recall", memory_ids=[refund], session_id=None, now=clock.now())
    settings.USAGE_DAYS = 0
    recall_deliver(caller=CLAUDE, query="refund", project=PROJECT)
    assert ServedCall.objects.count() == 1
    tasks.usage_prune_old()
    assert not ServedCall.objects.exists()


def test_the_report_lists_the_most_used_and_the_never_used_memories() -> None:
    now = clock.now()
    with clock.frozen(now - timedelta(days=60)):
        refund, deploy = remember(REFUND), remember(DEPLOY)
        idle = remember("The staging database is reset every Sunday night.")
    Memory.objects.filter(id__in=[refund, deploy, idle]).update(created_at=now - timedelta(days=60))
    fresh = remember("Feature flags live in config/flags.yaml.")
    for _ in range(2):
        usage.usage_record(
            caller=CLAUDE, tool="recall", memory_ids=[refund, deploy], session_id=None, now=now
        )
    usage.usage_mark_used(caller=CLAUDE, memory_ids=usage.parse_used([refund]), session_id=None, now=now)
    report = usage.usage_report(now=now, idle_days=30)
    assert [(str(row.memory.id), row.served, row.used) for row in report.most_used] == [(refund, 2, 1)]
    # Never served first, then served but never reused; the memory written yesterday is not a candidate.
    assert [(str(row.memory.id), row.served) for row in report.never_used] == [(idle, 0), (deploy, 2)]
    assert fresh not in {str(row.memory.id) for row in report.never_used}
    assert (report.answers, report.memories_served, report.memories_used, report.never_used_total) == (
        2,
        2,
        1,
        2,
    )


def test_a_session_id_holding_a_credential_does_not_fail_the_read_and_is_not_stored() -> None:
    remember(REFUND)
    token = "ghp_" + "Zq8xV2nR4tL6pW9sK3mB7cD1fH5jY0aE2gU4"

    async def scenario(client: Client) -> dict:
        return await call(
            client, "recall", meta={"kenfold/session_id": f"s-{token}"}, query="refunds", project=PROJECT
        )

    assert in_memory(scenario)["memories"]
    assert ServedCall.objects.get().session_id is None
