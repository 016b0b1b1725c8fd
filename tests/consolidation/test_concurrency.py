"""Two owners (the dashboard and the command) applying at the same moment: one wins, the other is told
why nothing happened, and no memory is retired twice or by a proposal that no longer holds."""

from collections.abc import Callable
from datetime import timedelta

import pytest

from consolidation import services
from consolidation.models import Consolidation
from kenfold_common.errors import Conflict
from memories.models import Memory, MemoryEdge
from tests.consolidation.conftest import SCOPE, ScriptedModel, remember
from tests.threads import held_open, in_parallel

pytestmark = pytest.mark.django_db(transaction=True)


def record(keep: Memory, other: Memory) -> str:
    services.proposal_record(
        kind="duplicate", scope=SCOPE, member_ids=[keep.pk, other.pk], keep_id=keep.pk, model="m", reason="r"
    )
    return str(Consolidation.objects.get(keep_id=keep.pk, member_ids__contains=[other.pk]).id)


def apply(proposal_id: str, actor: str) -> Callable[[], object]:
    return lambda: services.proposal_apply(proposal_id=proposal_id, actor=actor)


def test_two_applies_of_one_proposal_apply_it_once() -> None:
    kept = remember("Payments are idempotent on the Stripe event id, per webhook.", age=timedelta(days=3))
    retired = remember("Payments are idempotent on the Stripe event id.")
    proposal_id = record(kept, retired)
    results = in_parallel([apply(proposal_id, "kenfold-dashboard"), apply(proposal_id, "kenfold-cli")])
    applied = [r for r in results if isinstance(r, services.Applied)]
    refused = [r for r in results if isinstance(r, Conflict)]
    assert len(applied) == 1 and len(refused) == 1, results
    assert "already decided (applied)" in str(refused[0])
    assert Memory.objects.get(pk=retired.pk).status == "superseded"
    assert Memory.objects.get(pk=kept.pk).status == "active"
    assert MemoryEdge.objects.filter(relation="replaces").count() == 1
    assert Consolidation.objects.get().decided_by == applied[0].proposal.decided_by


def test_a_second_run_waits_for_no_one_and_judges_nothing(model: ScriptedModel) -> None:
    remember("Deploys go to Fly.io from the main branch.", age=timedelta(days=5))
    remember("Deploys go to Render from the main branch.", age=timedelta(days=2))
    with held_open(f"SELECT pg_advisory_xact_lock(hashtextextended('{services.RUN_LOCK}', 0))"):
        report = services.consolidation_run()
        assert report.skipped.startswith("another consolidation run is in progress")
        assert (report.judged, model.judged) == (0, [])
    assert services.consolidation_run().judged == 1


def test_two_proposals_sharing_a_memory_cannot_both_retire_it() -> None:
    a = remember("Deploys go to Fly.io from main.", age=timedelta(days=3))
    b = remember("Deploys go to Fly.io from the main branch.", age=timedelta(days=2))
    c = remember("Deploys go to Fly.io from the main branch, by CI.")
    first, second = record(a, b), record(c, b)
    results = in_parallel([apply(first, "kenfold-dashboard"), apply(second, "kenfold-cli")])
    applied = [r for r in results if isinstance(r, services.Applied)]
    stale = [r for r in results if isinstance(r, Conflict)]
    assert len(applied) == 1 and len(stale) == 1, results
    assert "the memories changed since the proposal was made" in str(stale[0])
    statuses = dict(Memory.objects.values_list("id", "status"))
    assert statuses[b.pk] == "superseded"
    assert sorted([statuses[a.pk], statuses[c.pk]]) == ["active", "active"]
    assert sorted(Consolidation.objects.values_list("status", flat=True)) == ["applied", "stale"]
    assert MemoryEdge.objects.filter(relation="replaces", dst=b).count() == 1
