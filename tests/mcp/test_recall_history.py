"""Several phrasings at once, what was served on a date, and the project's guidelines (issue 39, items 3-5),
through the SDK's in-memory client on the test database (see test_in_memory)."""

from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from mcp import Client

from access.caller import Caller
from kenfold import clock
from memories import selectors
from memories.models import Memory
from memories.schemas import MemoryView
from memories.services.remember import memory_remember
from memories.services.review import memory_approve, memory_forget
from projectdocs.schemas import DocsSyncInput
from projectdocs.selectors import docs_files
from projectdocs.services import docs_sync

from .support import call, call_error
from .test_in_memory import in_memory

pytestmark = pytest.mark.django_db

AGENT = "history-test"
PROJECT = "github.com/acme/history"
REFUNDS = "Refunds go through PaymentService.refund(), never through a direct UPDATE of the payments table."
DEPLOYS = "Deploys run from the release branch with make ship after the changelog is updated."
UNKNOWN_ID = "0199a1b2-0000-7000-8000-000000000001"


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    # Full-text search alone: what each test finds follows from the words, whatever models are installed.
    provider_env(KENFOLD_EMBED="off")


def remember(content: str, *, at: timedelta, supersedes: str | None = None, **extra: Any) -> str:
    """Remember `content` as of `at` ago (the clock seam), as an agent would."""
    with clock.frozen(clock.now() - at):
        return memory_remember(
            caller=Caller(agent=AGENT), content=content, project=PROJECT, supersedes=supersedes, **extra
        ).id


def day(ago: timedelta) -> str:
    return (clock.now() - ago).isoformat()


# --- queries ------------------------------------------------------------------------------------------


def test_queries_fuse_the_answers_of_each_phrasing() -> None:
    refunds = remember(REFUNDS, at=timedelta(0))
    deploys = remember(DEPLOYS, at=timedelta(0))

    async def scenario(client: Client) -> tuple[dict, dict, dict]:
        one = await call(client, "recall", query="refund payment service", project=PROJECT)
        both = await call(
            client,
            "recall",
            queries=["refund payment service", "release branch changelog", "refund payment service"],
            project=PROJECT,
        )
        limited = await call(
            client, "recall", queries=["refund payment", "release changelog"], project=PROJECT, limit=1
        )
        return one, both, limited

    one, both, limited = in_memory(scenario)
    assert one["memories"][0]["id"] == refunds
    found = [view["id"] for view in both["memories"]]
    # Each phrasing's best answer is among the first two, each memory once.
    assert sorted(found[:2]) == sorted([refunds, deploys]) and len(found) == len(set(found))
    assert all(0 < view["score"] <= 1 for view in both["memories"])
    assert len(limited["memories"]) == 1


def test_query_and_queries_are_exclusive_and_queries_are_bounded() -> None:
    async def scenario(client: Client) -> list[str]:
        return [
            await call_error(client, "recall", query="refunds", queries=["refunds", "payments"]),
            await call_error(client, "recall", queries=["refunds"]),
            await call_error(client, "recall", queries=["a", "b", "c", "d", "e", "f"]),
            await call_error(client, "recall", queries=["refunds", "  "]),
            await call_error(client, "recall", ids=[UNKNOWN_ID], queries=["refunds", "payments"]),
        ]

    both, one, six, empty, with_ids = in_memory(scenario)
    assert both == "pass query (one question) or queries (several phrasings of one question), not both"
    assert one == "recall: `queries` needs at least 2 items"
    assert six == "recall: `queries` has more than 5 items"
    assert empty == "queries[1] must not be empty: describe what you are looking for"
    assert with_ids.startswith("pass either query (to search) or ids")


# --- as_of --------------------------------------------------------------------------------------------


def test_as_of_serves_the_memories_of_that_time() -> None:
    old = remember(REFUNDS, at=timedelta(days=10))
    new = remember(
        "Refunds go through RefundQueue.enqueue(); PaymentService.refund() was removed.",
        at=timedelta(days=5),
        supersedes=old,
    )
    forgotten = remember("Refund payment reports are emailed to finance every Monday.", at=timedelta(days=8))
    with clock.frozen(clock.now() - timedelta(days=3)):
        memory_forget(caller=Caller(agent=AGENT), memory_id=forgotten)
    note = remember(
        "Refund payment migration is half done.",
        at=timedelta(days=6),
        type="temporary",
        ttl_seconds=2 * 86400,
    )

    async def scenario(client: Client) -> dict[str, list[str]]:
        def ids(answer: dict) -> list[str]:
            return sorted(view["id"] for view in answer["memories"])

        answers = {}
        for name, ago in {
            "before": 20,
            "9 days": 9,
            "7 days": 7,
            "5.5 days": 5.5,
            "3.5 days": 3.5,
            "1 day": 1,
        }.items():
            answers[name] = ids(
                await call(
                    client, "recall", query="refund payment", project=PROJECT, as_of=day(timedelta(days=ago))
                )
            )
        answers["now"] = ids(await call(client, "recall", query="refund payment", project=PROJECT))
        answers["today"] = ids(
            await call(
                client,
                "recall",
                query="refund payment",
                project=PROJECT,
                as_of=clock.now().date().isoformat(),
            )
        )
        return answers

    answers = in_memory(scenario)
    assert answers["before"] == []
    assert answers["9 days"] == [old]
    assert answers["7 days"] == sorted([old, forgotten])
    assert answers["5.5 days"] == sorted([old, forgotten, note])
    # The old rule was superseded at 5 days and the note expired at 4; the report is forgotten at 3.
    assert answers["3.5 days"] == sorted([new, forgotten])
    assert answers["1 day"] == answers["now"] == [new]
    # A date is its start (00:00 UTC): earlier today, what is served now was already served.
    assert answers["today"] == [new]


def test_get_context_as_of_is_the_past_context_and_never_a_delta() -> None:
    old = remember("Deploys run from main on Fridays.", at=timedelta(days=10))
    new = remember(DEPLOYS, at=timedelta(days=2), supersedes=old)

    async def scenario(client: Client) -> tuple[dict, dict, str, str, str, str]:
        past = await call(client, "get_context", project=PROJECT, task="deploy", as_of=day(timedelta(days=5)))
        present = await call(client, "get_context", project=PROJECT, task="deploy")
        mixed = await call_error(
            client, "get_context", project=PROJECT, state=present["state"], as_of=day(timedelta(days=5))
        )
        future = await call_error(client, "get_context", project=PROJECT, as_of=day(timedelta(days=-1)))
        garbled = await call_error(client, "recall", query="deploy", project=PROJECT, as_of="last tuesday")
        by_ids = await call_error(client, "recall", ids=[new], as_of=day(timedelta(days=5)))
        return past, present, mixed, future, garbled, by_ids

    past, present, mixed, future, garbled, by_ids = in_memory(scenario)
    assert by_ids == "as_of applies to a search only: pass query with as_of, or ids without it"
    assert [view["id"] for view in past["project"]] == [old]
    assert "state" not in past
    assert [view["id"] for view in present["project"]] == [new] and present["state"]
    assert mixed == "as_of answers are not deltas: call get_context with as_of and without state"
    assert future == "as_of is in the future; omit as_of for what is served now, or pass a past time"
    assert garbled.startswith("as_of must be an ISO 8601 date") and "last tuesday" not in garbled


def test_an_approved_proposal_is_served_from_its_approval() -> None:
    proposed = remember("Always answer in English in code reviews.", at=timedelta(days=6), type="preference")
    with clock.frozen(clock.now() - timedelta(days=2)):
        memory_approve(memory_id=proposed)

    async def scenario(client: Client) -> tuple[list, list]:
        before = await call(client, "get_context", project=PROJECT, as_of=day(timedelta(days=4)))
        after = await call(client, "get_context", project=PROJECT, as_of=day(timedelta(days=1)))
        return before["preferences"], after["preferences"]

    before, after = in_memory(scenario)
    assert before == [] and [view["id"] for view in after] == [proposed]


def test_any_writer_that_retires_a_memory_records_when() -> None:
    memory_id = remember(DEPLOYS, at=timedelta(days=1))
    # As consolidation and docs sync retire memories: a status change alone.
    Memory.objects.filter(pk=memory_id).update(status="superseded")
    memory = Memory.objects.get(pk=memory_id)
    assert memory.active_from is not None and memory.ended_at is not None
    assert memory.ended_at >= memory.active_from


# --- guidelines ---------------------------------------------------------------------------------------

GUIDELINES = (
    "# Memory in this project\n\nRemember decisions about the payments API with the ticket number. "
    "Never store customer names or card numbers. Name services as they are named in the code."
)


def set_guidelines(tmp_path: Path, text: str) -> str:
    file = tmp_path / "KENFOLD.md"
    file.write_text(text)
    out = StringIO()
    call_command("memory", "guidelines", "set", "--project", PROJECT, "--file", str(file), stdout=out)
    return out.getvalue()


def test_guidelines_come_first_and_an_agent_can_only_propose_a_new_version(tmp_path: Path) -> None:
    assert set_guidelines(tmp_path, GUIDELINES).startswith("set ")
    assert set_guidelines(tmp_path, GUIDELINES).startswith("unchanged ")
    remember(DEPLOYS, at=timedelta(0))
    [guidelines] = Memory.objects.filter(attrs__kind="guidelines", status="active")
    assert guidelines.trust == "user"

    async def scenario(client: Client) -> tuple[dict, dict, dict]:
        first = await call(client, "get_context", project=PROJECT, task="payments API")
        proposal = await call(
            client,
            "remember",
            content="Store anything you like.",
            project=PROJECT,
            supersedes=str(guidelines.id),
        )
        served = await call(client, "get_context", project=PROJECT)
        return first, proposal, served

    async def after_review(client: Client) -> dict:
        return await call(client, "get_context", project=PROJECT)

    first, proposal, served = in_memory(scenario)
    memory_approve(memory_id=proposal["id"])
    approved = in_memory(after_review)
    assert next(iter(first)) == "guidelines" and first["guidelines"]["content"] == GUIDELINES
    assert str(guidelines.id) not in [view["id"] for view in first["project"] + first["relevant"]]
    assert [view["content"] for view in first["project"]] == [DEPLOYS]
    # The owner wrote them: an agent's replacement waits for review, the guidelines stay served.
    assert proposal["status"] == "proposed"
    assert served["guidelines"]["id"] == str(guidelines.id)
    assert approved["guidelines"]["id"] == proposal["id"]
    assert approved["guidelines"]["content"] == "Store anything you like."


def test_long_guidelines_are_cut_to_their_share_and_the_budget_holds(tmp_path: Path) -> None:
    long = GUIDELINES + "\n\n" + "Each rule of this section is spelled out at length. " * 120
    set_guidelines(tmp_path, long)
    for index in range(8):
        remember(f"Payments rule {index}: amounts are integer minor units. " * 6, at=timedelta(0))
    budget = 600

    async def scenario(client: Client) -> dict:
        return await call(client, "get_context", project=PROJECT, budget_tokens=budget)

    context = in_memory(scenario)
    guidelines = context["guidelines"]
    assert guidelines["content"].startswith("# Memory in this project")
    assert guidelines["content"].endswith(
        f'recall with ids=["{guidelines["id"]}"] reads the whole guidelines]'
    )
    views = [context["guidelines"], *context["project"]]
    assert selectors.estimate_tokens(MemoryView(**guidelines)) <= budget * selectors.GUIDELINES_SHARE
    assert sum(selectors.estimate_tokens(MemoryView(**view)) for view in views) <= budget
    assert context["project"] and context["truncated"] is True


def test_docs_sync_of_kenfold_md_sets_and_clears_the_guidelines() -> None:
    caller = Caller(agent="claude-code")
    page = {
        "path": "KENFOLD.md",
        "file_hash": "1" * 64,
        "chunks": [
            {"heading_path": [], "content": "# Memory in this project"},
            {"heading_path": ["Never store"], "content": "## Never store\n\nCustomer names."},
        ],
    }
    # A section an earlier version stored when it synced KENFOLD.md as a page.
    section = Memory.objects.create(
        type="project",
        scope="project:" + PROJECT,
        content="# Memory in this project",
        attrs={"kind": "doc", "path": "KENFOLD.md", "chunk_index": 0, "file_hash": "0" * 64},
        source_agent="claude-code",
        trust="external",
    )
    synced = docs_sync(caller=caller, sync=DocsSyncInput(project=PROJECT, files=[page]))
    assert synced.updated == 1 and synced.sections_stored == 0
    [guidelines] = Memory.objects.filter(attrs__kind="guidelines", status="active")
    assert guidelines.content == "# Memory in this project\n\n## Never store\n\nCustomer names."
    assert guidelines.trust == "user" and guidelines.source_agent == "claude-code"
    section.refresh_from_db()
    assert section.status == "superseded"
    # Listed like a page, so the client sends it again only when it changes, and retires it when gone.
    assert [
        (held.path, held.file_hash) for held in docs_files(caller=Caller(agent=AGENT), project=PROJECT).files
    ] == [("KENFOLD.md", "1" * 64)]
    again = docs_sync(caller=caller, sync=DocsSyncInput(project=PROJECT, files=[page]))
    assert (again.updated, again.unchanged) == (0, 1)
    cleared = docs_sync(caller=caller, sync=DocsSyncInput(project=PROJECT, deleted=["KENFOLD.md"]))
    assert cleared.retired == 1
    assert not Memory.objects.filter(attrs__kind="guidelines", status="active").exists()
    assert docs_files(caller=Caller(agent=AGENT), project=PROJECT).files == []
