"""The Review scenario of spec §2: `extract run` proposes, `memory review` decides interactively."""

import io
from collections.abc import Callable

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from access.caller import Caller
from memories import selectors
from memories.models import Memory
from memories.services.remember import memory_remember
from memories.services.review import memory_approve
from tests.provider_servers import chat_reply, provider_server

pytestmark = pytest.mark.django_db

CLAUDE = Caller(agent="claude-code")
REPO = "https://github.com/kenfold/kenfold.git"
SUMMARY = """Session summary: 3 request(s) on branch main, 2026-11-30 10:00–10:40 UTC.
Requests:
- From now on we use pnpm in this repo, not npm.
- The retry logic lives in src/net/retry.ts.
- Please keep answers short.
Final response: done."""
ITEMS = [
    {
        "category": "project_rule",
        "content": "The kenfold repo uses pnpm as its package manager.",
        "evidence": "we use pnpm in this repo, not npm",
        "basis": "stated",
    },
    {
        "category": "code_fact",
        "content": "The retry logic lives in src/net/retry.ts.",
        "evidence": "The retry logic lives in src/net/retry.ts.",
        "basis": "stated",
    },
    {
        "category": "user_preference",
        "content": "The user wants short answers.",
        "evidence": "Please keep answers short.",
        "basis": "stated",
    },
]


def review(answers: str) -> str:
    out = io.StringIO()
    call_command("memory", "review", stdin=io.StringIO(answers), stdout=out)
    return out.getvalue()


def test_extracted_proposals_are_reviewed_interactively(provider_env: Callable[..., None]) -> None:
    old_rule = memory_remember(
        caller=CLAUDE,
        content="The kenfold repo uses npm as its package manager.",
        type="project",
        project=REPO,
    )
    memory_remember(caller=CLAUDE, content=SUMMARY, type="episodic", project=REPO, session_id="s-7")
    with provider_server(lambda r: chat_reply({"items": ITEMS})) as server:
        provider_env(KENFOLD_CHAT_URL=server.url, KENFOLD_EMBED="off")
        out = io.StringIO()
        call_command("extract", "run", stdout=out)
    assert "stored 3 proposed memories" in out.getvalue()
    rule, code, pref = [Memory.objects.get(content=item["content"], status="proposed") for item in ITEMS]
    assert rule.attrs["similar_to"] == [old_rule.id]

    # Nonsense and an out-of-range similar number re-prompt; then: replace similar #1, approve, reject.
    shown = review("maybe\n7\n1\na\nr\nalready in CLAUDE.md\n")
    assert shown.count("[a]pprove, [r]eject, replace similar #[1-3], [s]kip, [q]uit: ") == 5
    assert "'maybe' is not a choice; answer a, r, s, q or 1-1" in shown
    assert "'7' is not a choice" in shown
    assert "[1/3] project in project:github.com/kenfold/kenfold" in shown
    assert 'evidence: "we use pnpm in this repo, not npm"' in shown
    assert "from a session of claude-code (session s-7), model qwen3.5:4b, confidence 0.90" in shown
    assert f"similar #1: The kenfold repo uses npm as its package manager.  ({old_rule.id})" in shown
    assert "summary " in shown and "Session summary: 3 request(s)" in shown
    assert shown.rstrip().endswith("2 approved, 1 rejected, 0 skipped")

    for memory in (rule, code, pref):
        memory.refresh_from_db()
    assert (rule.status, rule.trust, str(rule.supersedes_id)) == ("active", "user", old_rule.id)
    assert Memory.objects.get(pk=old_rule.id).status == "superseded"
    assert (code.status, code.trust) == ("active", "user")
    assert pref.status == "deleted" and pref.attrs["forget_reason"] == "already in CLAUDE.md"
    assert review("") == "Nothing to review.\n"


def test_skip_and_quit_leave_proposals_waiting() -> None:
    first = memory_remember(caller=CLAUDE, content="Answer in English, please.", type="preference")
    memory_remember(caller=CLAUDE, content="Use tabs, never spaces.", type="preference")
    shown = review("s\nq\n")
    assert shown.rstrip().endswith("0 approved, 0 rejected, 1 skipped")
    assert Memory.objects.filter(status="proposed").count() == 2
    # End of input quits as q does.
    assert review("").rstrip().endswith("0 approved, 0 rejected, 0 skipped")
    # Oldest first.
    assert str(selectors.memory_review_queue()[0].memory.id) == first.id


def test_review_shows_what_a_proposal_replaces() -> None:
    approved = memory_remember(caller=CLAUDE, content="Answer in English.", type="preference")
    memory_approve(memory_id=approved.id)
    memory_remember(
        caller=Caller(agent="codex"),
        content="Answer in any language.",
        type="semantic",
        supersedes=approved.id,
    )
    shown = review("s\n")
    assert f"  replaces (user) {approved.id}: Answer in English." in shown
    assert "(approving retires it; until then it is served)" in shown


def test_a_failed_decision_names_the_argument_not_its_value() -> None:
    token = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
    proposal = memory_remember(caller=CLAUDE, content="Answer briefly.", type="preference")
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="1 of 2 could not be approved"):
        call_command("memory", "approve", proposal.id, token, stdout=out, stderr=err)
    assert f"approved {proposal.id}" in out.getvalue()
    assert (
        err.getvalue().startswith("argument 2: id is not a memory id") and token[4:12] not in err.getvalue()
    )
