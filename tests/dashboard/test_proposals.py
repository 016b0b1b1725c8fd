"""Consolidation proposals in the dashboard (the Consolidation scenario of spec §2: the dashboard shows
them, applies a duplicate, rejects a conflict, refuses applying a rejected one)."""

import re

from consolidation import services
from consolidation.models import Consolidation, Kind, ProposalStatus
from dashboard.views import ACTOR
from memories.models import MemoryEdge, Status
from tests.dashboard.conftest import Owner, memory

HOSTILE = "<script>alert(1)</script>"


def _pair(
    kind: str, older_text: str, newer_text: str, *, reason: str = ""
) -> tuple[Consolidation, object, object]:
    older = memory(content=older_text)
    newer = memory(content=newer_text)
    keep = newer
    services.proposal_record(
        kind=kind, scope="user", member_ids=[older.pk, newer.pk], model="qwen", keep_id=keep.pk, reason=reason
    )
    return Consolidation.objects.get(member_ids__contains=[older.pk]), older, newer


def test_proposals_are_listed_with_their_members_and_counted_on_the_overview(owner: Owner) -> None:
    duplicate, _older, _newer = _pair(
        Kind.DUPLICATE,
        "Deploys use fly.io",
        "Deploys go to fly.io " + HOSTILE,
        reason="both say fly " + HOSTILE,
    )
    _pair(Kind.CONFLICT, "Tabs everywhere", "Spaces everywhere")
    html = owner.page("/dashboard/proposals")
    assert len(re.findall(r"/dashboard/proposals/[0-9a-f-]{36}/apply", html)) == 2
    assert "Deploys use fly.io" in html and "Apply: Retire the duplicate" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    overview = owner.page("/dashboard/")
    assert '<span class="n">2</span> pending proposals' in overview
    assert duplicate.status == ProposalStatus.PENDING


def test_apply_a_duplicate_reject_a_conflict_and_refuse_a_second_decision(owner: Owner) -> None:
    duplicate, older, newer = _pair(
        Kind.DUPLICATE, "The API runs on port 7077", "The API listens on port 7077"
    )
    conflict, first, _second = _pair(Kind.CONFLICT, "Releases on Fridays", "Releases on Mondays")
    answer = owner.post(f"/dashboard/proposals/{duplicate.pk}/apply", {"back": "/dashboard/proposals"})
    assert answer.status_code == 303 and answer["Location"] == "/dashboard/proposals"
    assert owner.flash("/dashboard/proposals") == "Applied: 1 memory retired."
    older.refresh_from_db()
    duplicate.refresh_from_db()
    assert older.status == Status.SUPERSEDED and duplicate.decided_by == ACTOR
    assert MemoryEdge.objects.filter(src=newer, relation="replaces", dst=older, source_agent=ACTOR).exists()

    owner.post(f"/dashboard/proposals/{conflict.pk}/reject", {"reason": "both are true for different repos"})
    conflict.refresh_from_db()
    assert conflict.status == ProposalStatus.REJECTED and conflict.decided_by == ACTOR
    assert conflict.decision_note == "both are true for different repos"
    first.refresh_from_db()
    assert first.status == Status.ACTIVE
    assert owner.flash("/dashboard/proposals").startswith("Rejected")

    owner.post(f"/dashboard/proposals/{conflict.pk}/apply")
    assert "Already decided" in owner.flash("/dashboard/proposals")
    first.refresh_from_db()
    assert first.status == Status.ACTIVE
    owner.post(f"/dashboard/proposals/{duplicate.pk}/apply")
    assert "Already decided" in owner.flash("/dashboard/proposals")


def test_a_proposal_that_is_gone_or_forged(owner: Owner) -> None:
    owner.post("/dashboard/proposals/00000000-0000-0000-0000-000000000000/apply")
    assert owner.flash("/dashboard/proposals") == "That proposal no longer exists; nothing was changed."
    owner.post("/dashboard/proposals/not-an-id/reject")
    assert owner.flash("/dashboard/proposals").startswith("That is not a proposal id")


def test_a_forged_post_applies_nothing(owner: Owner) -> None:
    duplicate, older, _newer = _pair(Kind.DUPLICATE, "one fact", "one fact, again")
    assert (
        owner.client.post(f"/dashboard/proposals/{duplicate.pk}/apply", {"csrf": "forged"}).status_code == 403
    )
    assert (
        owner.post(
            f"/dashboard/proposals/{duplicate.pk}/apply", headers={"sec-fetch-site": "cross-site"}
        ).status_code
        == 403
    )
    duplicate.refresh_from_db()
    older.refresh_from_db()
    assert duplicate.status == ProposalStatus.PENDING and older.status == Status.ACTIVE


def test_decided_proposals_can_be_listed(owner: Owner) -> None:
    duplicate, _older, _newer = _pair(Kind.DUPLICATE, "x is y", "x is y indeed")
    services.proposal_reject(proposal_id=str(duplicate.pk), actor="kenfold-cli")
    assert "No pending proposals." in owner.page("/dashboard/proposals")
    rejected = owner.page("/dashboard/proposals?status=rejected")
    assert "x is y indeed" in rejected and "decided by kenfold-cli" in rejected and "/apply" not in rejected
    assert owner.get("/dashboard/proposals?status=bogus").status_code == 400


def test_the_page_counts_refused_model_answers_by_kind(owner: Owner) -> None:
    for n, refused in enumerate(["invalid_answer", "digest_secret", "invalid_answer"]):
        members = [memory(content=f"session {n} a").pk, memory(content=f"session {n} b").pk]
        services.proposal_record(
            kind=Kind.DISTINCT, scope="user", member_ids=members, model="qwen", refused=refused
        )
    html = owner.page("/dashboard/proposals")
    assert "Model answers refused: invalid_answer 2, digest_secret 1." in html
