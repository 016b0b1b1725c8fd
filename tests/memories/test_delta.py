"""Delta context and exact load (issue 17, items 4 and 5) at the service layer: what a `state` stands
for, what a second get_context sends, and recall by ids with known hashes."""

from datetime import timedelta

import pytest

from access.caller import Caller
from coderefs.models import CodeRef
from kenfold import clock
from kenfold_common.errors import InvalidInput
from memories import delta, selectors
from memories.models import ContextSnapshot, Memory
from memories.schemas import GetContextOutput, MemoryRef, MemoryView
from memories.services import delivery
from memories.services.delivery import context_deliver
from memories.services.remember import memory_remember
from memories.services.review import memory_forget

pytestmark = pytest.mark.django_db

CLAUDE = Caller(agent="claude-code")
CODEX = Caller(agent="codex")
REPO = "https://github.com/kenfold/delta.git"
OTHER_REPO = "https://github.com/kenfold/elsewhere.git"


def remember(content: str, **kwargs: object) -> str:
    kwargs.setdefault("caller", CLAUDE)
    kwargs.setdefault("project", REPO)
    return memory_remember(content=content, **kwargs).id


def context(**kwargs: object) -> GetContextOutput:
    kwargs.setdefault("caller", CODEX)
    kwargs.setdefault("project", REPO)
    return context_deliver(**kwargs)


def full_ids(output: GetContextOutput) -> set[str]:
    return {item.id for item in output.sent_items() if isinstance(item, MemoryView)}


def ref_ids(output: GetContextOutput) -> set[str]:
    return {item.id for item in output.sent_items() if isinstance(item, MemoryRef)}


def store_project() -> dict[str, str]:
    ids = {
        f"rule{n}": remember(f"Rule {n}: the billing module keeps invoices immutable, case {n}.")
        for n in range(4)
    }
    ids["summary"] = remember("Session summary: wired the invoice exporter. " * 30, type="episodic")
    ids["fact"] = remember("Invoices are exported as PDF by the exporter worker.", type="semantic")
    return ids


# --- delta get_context -----------------------------------------------------------------------------


def test_second_call_with_state_sends_references_and_a_short_opaque_state() -> None:
    ids = store_project()
    first = context(task="export invoices as PDF")
    assert first.state and first.removed is None, "no state given: everything in full, nothing removed"
    assert full_ids(first) == set(ids.values()) and ref_ids(first) == set()
    assert all(isinstance(item, MemoryView) and item.content_hash for item in first.sent_items())

    second = context(task="export invoices as PDF", state=first.state)
    assert full_ids(second) == set() and ref_ids(second) == set(ids.values())
    assert second.removed == [] and second.state != first.state
    sent_hashes = {item.id: item.content_hash for item in first.sent_items()}
    assert {item.id: item.content_hash for item in second.sent_items()} == sent_hashes
    # The state names a server-side row: short, and it says nothing about any memory.
    assert len(first.state) < 50 and not any(key in first.state for key in ids.values())
    assert len(second.model_dump_json(exclude_none=True)) * 3 < len(first.model_dump_json(exclude_none=True))


def test_new_changed_and_retired_memories_since_the_state() -> None:
    ids = store_project()
    first = context(task="export invoices as PDF")
    forgotten, superseded, stale = ids["rule0"], ids["rule1"], ids["rule2"]
    memory_forget(caller=CLAUDE, memory_id=forgotten, reason="wrong")
    replacement = remember("Rule 1 now: invoices may be corrected by a credit note.", supersedes=superseded)
    added = remember("Rule 9: invoice numbers never repeat.")
    # The code it names went away (coderefs records this on the row): the view now says `stale`.
    Memory.objects.filter(pk=stale).update(code_state="missing")

    second = context(task="export invoices as PDF", state=first.state)
    assert second.removed == sorted([forgotten, superseded])
    assert full_ids(second) == {replacement, added, stale}
    assert ref_ids(second) == {ids["rule3"], ids["summary"], ids["fact"]}
    [stale_view] = [item for item in second.project if item.id == stale]
    assert stale_view.stale is True and stale_view.content_hash != first_hash(first, stale)

    third = context(task="export invoices as PDF", state=second.state)
    assert third.removed == [] and full_ids(third) == set(), "removed ones are reported once"


def first_hash(output: GetContextOutput, memory_id: str) -> str | None:
    return next(item.content_hash for item in output.sent_items() if item.id == memory_id)


def test_a_code_check_changes_the_hash_only_when_the_code_state_changes() -> None:
    rule = remember("Postings lock the account: `post_entry()` in ledger/services.py takes an advisory lock.")
    CodeRef.objects.filter(memory_id=rule).update(state="current", checked_commit="a" * 40)
    first = context()
    [view] = first.project
    assert isinstance(view, MemoryView) and view.code_refs, "the rule's code references are shown"
    # A `refs sync` at a new commit that finds the code unchanged: the agent's copy still holds.
    CodeRef.objects.filter(memory_id=rule).update(checked_commit="b" * 40)
    second = context(state=first.state)
    assert ref_ids(second) == {rule}
    # The symbol changed: the view says so, so it is sent again in full.
    CodeRef.objects.filter(memory_id=rule, symbol="post_entry").update(
        state="changed", checked_commit="c" * 40
    )
    Memory.objects.filter(pk=rule).update(code_state="changed")
    third = context(state=second.state)
    assert full_ids(third) == {rule} and third.project[0].stale is True


def test_a_snapshot_keeps_the_newest_memories_the_agent_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(delivery, "MAX_HELD_MEMORIES", 3)
    rules = [remember(f"Rule {n}: services own their transactions, case {n}.") for n in range(5)]
    first = context()
    assert full_ids(first) == set(rules)
    second = context(state=first.state)
    # Only three were remembered as held: the other two come in full again, never as a dangling reference.
    assert len(ref_ids(second)) == 3 and len(full_ids(second)) == 2
    assert ref_ids(second) | full_ids(second) == set(rules)


def test_expired_memories_are_removed() -> None:
    start = clock.now()
    with clock.frozen(start):
        note = remember("Deploys are frozen this week.", type="temporary", ttl_seconds=3600)
        first = context(task="deploy freeze")
        assert note in full_ids(first)
    with clock.frozen(start + timedelta(hours=2)):
        second = context(task="deploy freeze", state=first.state)
    assert second.removed == [note]


def test_a_memory_left_out_of_the_next_answer_stays_held() -> None:
    fact = remember("The exporter worker renders invoices with WeasyPrint.", type="semantic")
    first = context(task="WeasyPrint invoice rendering")
    assert fact in full_ids(first)
    # No task: nothing is relevant, so the fact is not in this answer, yet the agent still holds it.
    second = context(state=first.state)
    assert fact not in full_ids(second) | ref_ids(second) and second.removed == []
    third = context(task="WeasyPrint invoice rendering", state=second.state)
    assert fact in ref_ids(third) and fact not in full_ids(third)


def test_the_budget_counts_only_what_is_sent() -> None:
    for n in range(12):
        remember(f"Rule {n}: " + "every module documents its public functions and their errors. " * 4)
    first = context(budget_tokens=800)
    assert first.truncated is True
    second = context(budget_tokens=800, state=first.state)
    # The first answer's memories now cost a reference each, so more rules fit the same budget.
    assert ref_ids(second) == full_ids(first)
    assert len(second.project) > len(first.project)
    spent = sum(selectors.estimate_tokens(item) for item in second.project if isinstance(item, MemoryView))
    spent += sum(
        selectors.estimate_reference_tokens(item) for item in second.project if isinstance(item, MemoryRef)
    )
    assert spent <= 800


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ("garbage-17", "is not a state returned by get_context"),
        ("c1.AAAA.BBBB", "is not a state returned by get_context"),
        ("c1.AAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAA", "signature does not match"),
    ],
)
def test_a_bad_state_is_an_error_that_changes_nothing(state: str, message: str) -> None:
    remember("Rule: keep it simple.")
    before = ContextSnapshot.objects.count()
    with pytest.raises(InvalidInput, match=message) as raised:
        context(state=state)
    assert "without state" in raised.value.message and state not in raised.value.message
    assert ContextSnapshot.objects.count() == before


def test_a_tampered_state_is_refused() -> None:
    first = context()
    prefix, snapshot, mac = first.state.split(".")
    flipped = snapshot[:-2] + ("A" if snapshot[-2] != "A" else "B") + snapshot[-1]
    with pytest.raises(InvalidInput, match="signature does not match"):
        context(state=f"{prefix}.{flipped}.{mac}")


def test_a_stale_state_or_another_projects_state_is_an_error_never_an_empty_start() -> None:
    remember("Rule: keep it simple.")
    start = clock.now()
    with clock.frozen(start):
        first = context()
    with pytest.raises(InvalidInput, match="belongs to a get_context call for another project"):
        context(project=OTHER_REPO, state=first.state)
    with pytest.raises(InvalidInput, match="belongs to a get_context call for another project"):
        context(project=None, state=first.state)
    with clock.frozen(start + delta.STATE_TTL + timedelta(seconds=1)):
        with pytest.raises(InvalidInput, match="state has expired"):
            context(state=first.state)
        # A later call prunes the expired row; the state stays refused the same way.
        context()
        assert not ContextSnapshot.objects.filter(expires_at__lte=clock.now()).exists()
        with pytest.raises(InvalidInput, match="state has expired"):
            context(state=first.state)


# --- exact load: recall by ids -------------------------------------------------------------------------


def load(**kwargs: object):
    kwargs.setdefault("caller", CODEX)
    kwargs.setdefault("project", REPO)
    return selectors.memory_recall(**kwargs)


def test_load_returns_whole_memories_in_order_and_names_the_missing() -> None:
    summary = remember("Session summary: migrated the ledger. " * 40, type="episodic")
    rule = remember("Ledger entries are append-only.")
    elsewhere = remember("Another project's rule.", project=OTHER_REPO)
    forgotten = remember("A rule that was wrong.")
    memory_forget(caller=CLAUDE, memory_id=forgotten)
    unknown = "0190b6a2-0000-7000-8000-000000000000"

    result = load(ids=[rule, summary, elsewhere, forgotten, unknown, rule])
    assert [item.id for item in result.memories] == [rule, summary]
    whole = result.memories[1]
    assert isinstance(whole, MemoryView) and whole.content == Memory.objects.get(pk=summary).content
    assert all(item.content_hash for item in result.memories)
    # Another project's memory is missing like an unknown one: no other scope's ids leak.
    assert result.missing == [elsewhere, forgotten, unknown]

    # get_context cut the summary to 800 characters: its hash there differs, so the load sends it whole.
    served = context_deliver(caller=CODEX, project=REPO)
    [cut] = served.recent
    assert cut.content_hash != whole.content_hash


def test_load_with_known_hashes_returns_unchanged_ones_as_references() -> None:
    rule = remember("Ledger entries are append-only.")
    other = remember("Ledger balances are computed nightly.")
    first = load(ids=[rule, other])
    hashes = {item.id: item.content_hash for item in first.memories}
    Memory.objects.filter(pk=other).update(code_state="changed")

    again = load(ids=[rule, other], known_hashes=hashes)
    assert again.memories[0] == MemoryRef(id=rule, content_hash=hashes[rule], changed=False)
    assert again.memories[0].changed is False
    fresh = again.memories[1]
    assert isinstance(fresh, MemoryView) and fresh.changed is True and fresh.content_hash != hashes[other]
    assert again.missing is None
    # A hash from get_context (same full view) is the same hash.
    context_hash = first_hash(context_deliver(caller=CODEX, project=REPO), rule)
    assert context_hash == hashes[rule]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"ids": []}, "at least one memory id"),
        ({"ids": ["not-an-id"]}, "ids\\[0\\] is not a memory id"),
        ({"ids": ["0190b6a2-0000-7000-8000-000000000000"], "query": "x"}, "either query .* or ids"),
        ({"ids": ["0190b6a2-0000-7000-8000-000000000000"], "limit": 3}, "either query .* or ids"),
        (
            {
                "ids": ["0190b6a2-0000-7000-8000-000000000000"],
                "known_hashes": {"0190b6a2-0000-7000-8000-000000000001": "ab"},
            },
            "known_hashes has an id that is not in ids",
        ),
        ({"ids": [f"0190b6a2-0000-7000-8000-{n:012d}" for n in range(51)]}, "at most 50"),
        ({}, "pass query to search memory, or ids"),
    ],
)
def test_load_refuses_bad_input(arguments: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        load(**arguments)
