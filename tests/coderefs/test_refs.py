"""Code references on the server: recorded on write, anchored at first sight, checked later, surfaced."""

import io

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from access.caller import Caller
from coderefs.models import CodeRef
from coderefs.schemas import CheckInput, CheckResult
from coderefs.selectors import refs_targets
from coderefs.services import refs_check
from kenfold_common.errors import InvalidInput, PermissionDenied
from memories import selectors
from memories.models import Memory
from memories.services.remember import memory_remember
from memories.services.review import memory_forget

pytestmark = pytest.mark.django_db

AGENT = Caller(agent="claude-code")
SYNC = Caller(agent="refs-sync")
REPO = "github.com/kenfold/kenfold"
SCOPE = f"project:{REPO}"
C1, C2 = "a" * 40, "b" * 40


def remember(content: str, **kwargs: object) -> str:
    return memory_remember(caller=AGENT, content=content, project=REPO, **kwargs).id


def check(commit: str, *results: CheckResult) -> dict:
    return refs_check(
        caller=SYNC, check=CheckInput(project=REPO, commit=commit, results=list(results))
    ).model_dump()


def test_remember_records_pending_file_and_symbol_refs_only_for_code_types_in_projects() -> None:
    memory_id = remember("`RequireAPIKey` in internal/auth/middleware.go hashes the token.")
    refs = list(CodeRef.objects.filter(memory_id=memory_id).values_list("path", "symbol", "state", "scope"))
    assert sorted(refs) == [
        ("internal/auth/middleware.go", "", "pending", SCOPE),
        ("internal/auth/middleware.go", "RequireAPIKey", "pending", SCOPE),
    ]
    memory_remember(caller=AGENT, content="`RequireAPIKey` in internal/auth/middleware.go is nice.")
    remember("We discussed internal/auth/middleware.go at length.", type="episodic")
    assert CodeRef.objects.count() == 2, "user-wide and episodic memories get no refs"


def test_first_sight_anchors_then_changes_are_tracked() -> None:
    memory_id = remember("`RequireAPIKey` in internal/auth/middleware.go hashes the token.")
    targets = refs_targets(caller=SYNC, project=REPO).targets
    assert {(t.path, t.symbol, t.anchor_commit) for t in targets} == {
        ("internal/auth/middleware.go", "", None),
        ("internal/auth/middleware.go", "RequireAPIKey", None),
    }
    first = check(
        C1,
        CheckResult(path="internal/auth/middleware.go", found=True, hash="blob:1"),
        CheckResult(path="internal/auth/middleware.go", symbol="RequireAPIKey", found=True, hash="sym:1"),
        CheckResult(path="other.go", found=True, hash="blob:9"),
    )
    assert (first["updated"], first["anchored"], first["unmatched"]) == (2, 2, 1)
    assert first["states"]["current"] == 2

    later = check(
        C2,
        CheckResult(path="internal/auth/middleware.go", anchor_commit=C1, found=True, hash="blob:2"),
        CheckResult(
            path="internal/auth/middleware.go",
            symbol="RequireAPIKey",
            anchor_commit=C1,
            found=True,
            hash="sym:1",
        ),
    )
    assert later["states"]["current"] == 1 and later["states"]["changed"] == 1
    view = selectors.memory_recall(caller=AGENT, query="RequireAPIKey token", project=REPO).memories[0]
    assert view.id == memory_id and view.stale is False, "a changed file alone is not stale"
    assert {(r.path, r.symbol, r.state, r.checked_commit) for r in view.code_refs or []} == {
        ("internal/auth/middleware.go", None, "changed", C2[:12]),
        ("internal/auth/middleware.go", "RequireAPIKey", "current", C2[:12]),
    }

    check(
        C2,
        CheckResult(
            path="internal/auth/middleware.go", symbol="RequireAPIKey", anchor_commit=C1, found=False
        ),
    )
    view = selectors.memory_recall(caller=AGENT, query="RequireAPIKey token", project=REPO).memories[0]
    assert view.stale is True


def test_not_found_at_first_sight_is_unresolved_hidden_and_offered_again() -> None:
    memory_id = remember("`Ghost` lives in pkg/ghost.go.")
    check(C1, CheckResult(path="pkg/ghost.go", symbol="Ghost", found=False))
    assert CodeRef.objects.get(memory_id=memory_id, symbol="Ghost").state == "unresolved"
    view = selectors.memory_recall(caller=AGENT, query="ghost", project=REPO).memories[0]
    assert [r.symbol for r in view.code_refs or []] == [None], "unresolved refs are not shown"
    assert ("pkg/ghost.go", "Ghost") in {
        (t.path, t.symbol) for t in refs_targets(caller=SYNC, project=REPO).targets
    }
    check(C2, CheckResult(path="pkg/ghost.go", symbol="Ghost", found=True, hash="sym:x"))
    assert CodeRef.objects.get(memory_id=memory_id, symbol="Ghost").state == "current"


def test_stale_memories_rank_lower_come_last_in_context_and_are_listed() -> None:
    stale_id = remember("Webhook signatures are verified by `verify_signature` in app/hooks.py.")
    fresh_id = remember("Webhook signatures are verified before parsing the body.")
    check(
        C1,
        CheckResult(path="app/hooks.py", symbol="verify_signature", found=True, hash="sym:1"),
        CheckResult(path="app/hooks.py", found=True, hash="blob:1"),
    )
    first = selectors.memory_recall(caller=AGENT, query="webhook signatures verify_signature", project=REPO)
    assert first.memories[0].id == stale_id
    check(C2, CheckResult(path="app/hooks.py", symbol="verify_signature", anchor_commit=C1, found=False))
    ranked = selectors.memory_recall(
        caller=AGENT, query="webhook signatures verify_signature", project=REPO
    ).memories
    assert [m.id for m in ranked] == [fresh_id, stale_id]
    assert ranked[1].score < ranked[0].score
    assert [m.id for m in selectors.context_get(caller=AGENT, project=REPO).project] == [fresh_id, stale_id]

    out = io.StringIO()
    call_command("refs", "status", "--scope", REPO, stdout=out)
    assert "1 current, 0 changed, 1 missing, 0 pending, 0 unresolved" in out.getvalue()
    assert f"{stale_id}  verify_signature in app/hooks.py missing at {C2[:12]}" in out.getvalue()
    out = io.StringIO()
    call_command("memory", "list", "--stale", stdout=out)
    assert stale_id in out.getvalue() and fresh_id not in out.getvalue()


@pytest.mark.parametrize(
    ("commit", "result", "message"),
    [
        ("xyz", CheckResult(path="a.go", found=False), "commit must be"),
        (C1, CheckResult(found=False), "give a path, a symbol or both"),
        (C1, CheckResult(path="/etc/passwd", found=False), "not a repository-relative file path"),
        (C1, CheckResult(symbol="not an identifier!", found=False), "is not an identifier"),
        (C1, CheckResult(path="a.go", found=True), "needs a hash"),
        (C1, CheckResult(path="a.go", found=False, hash="blob:1"), "has no hash"),
        (C1, CheckResult(path="a.go", anchor_commit="zz", found=False), "anchor_commit"),
    ],
)
def test_bad_reports_are_refused_and_change_nothing(commit: str, result: CheckResult, message: str) -> None:
    remember("See a.go.")
    with pytest.raises(InvalidInput, match=message):
        check(commit, CheckResult(path="a.go", found=True, hash="blob:1"), result)
    assert CodeRef.objects.get().state == "pending"


def test_read_only_callers_cannot_report_and_projects_are_required() -> None:
    with pytest.raises(PermissionDenied):
        refs_check(
            caller=Caller(agent="r", read_only=True), check=CheckInput(project=REPO, commit=C1, results=[])
        )
    for project in ("", "/home/me/repo"):
        with pytest.raises(InvalidInput):
            refs_targets(caller=SYNC, project=project)


def test_targets_skip_retired_memories_and_put_unchecked_first() -> None:
    old = remember("`Old` in a.go.")
    remember("`New` in b.go.")
    check(C1, CheckResult(path="b.go", found=True, hash="blob:b"))
    memory_forget(caller=AGENT, memory_id=old)
    targets = [(t.path, t.symbol) for t in refs_targets(caller=SYNC, project=REPO).targets]
    assert targets == [("b.go", "New"), ("b.go", "")]


def test_backfill_migration_extracts_refs_of_older_memories() -> None:
    memory = Memory.objects.create(
        type="codebase",
        scope=SCOPE,
        content="`parse_args` in cli/main.py reads flags.",
        source_agent="old-agent",
    )
    module = __import__("coderefs.migrations.0002_backfill_refs", fromlist=["backfill"])
    module.backfill(apps, None)
    module.backfill(apps, None)  # idempotent
    assert sorted(CodeRef.objects.filter(memory=memory).values_list("path", "symbol")) == [
        ("cli/main.py", ""),
        ("cli/main.py", "parse_args"),
    ]


def code_state(memory_id: str) -> str | None:
    return Memory.objects.values_list("code_state", flat=True).get(pk=memory_id)


def test_code_state_follows_the_worst_reference_and_clears_when_the_code_comes_back() -> None:
    memory_id = remember("`charge` and `refund` in app/pay.py keep the ledger balanced.")
    check(
        C1,
        CheckResult(path="app/pay.py", found=True, hash="blob:1"),
        CheckResult(path="app/pay.py", symbol="charge", found=True, hash="sym:c1"),
        CheckResult(path="app/pay.py", symbol="refund", found=True, hash="sym:r1"),
    )
    assert code_state(memory_id) is None
    check(C2, CheckResult(path="app/pay.py", anchor_commit=C1, found=True, hash="blob:2"))
    assert code_state(memory_id) is None, "a changed file alone is not stale"
    check(C2, CheckResult(path="app/pay.py", symbol="charge", anchor_commit=C1, found=True, hash="sym:c2"))
    assert code_state(memory_id) == "changed"
    check(C2, CheckResult(path="app/pay.py", symbol="refund", anchor_commit=C1, found=False))
    assert code_state(memory_id) == "missing", "gone outranks changed"
    out = io.StringIO()
    call_command("memory", "list", "--stale", stdout=out)
    assert memory_id in out.getvalue()

    # A later checkout where the code is back as it was anchored: nothing is stale any more.
    check(
        "c" * 40,
        CheckResult(path="app/pay.py", symbol="charge", anchor_commit=C1, found=True, hash="sym:c1"),
        CheckResult(path="app/pay.py", symbol="refund", anchor_commit=C1, found=True, hash="sym:r1"),
    )
    assert code_state(memory_id) is None
    out = io.StringIO()
    call_command("memory", "list", "--stale", stdout=out)
    assert memory_id not in out.getvalue()
    view = selectors.memory_recall(caller=AGENT, query="charge refund ledger", project=REPO).memories[0]
    assert view.id == memory_id and view.stale is False


def test_a_check_of_another_project_leaves_this_projects_code_state_alone() -> None:
    memory_id = remember("`verify` in app/auth.py checks the token.")
    check(C1, CheckResult(path="app/auth.py", symbol="verify", found=True, hash="sym:1"))
    check(C2, CheckResult(path="app/auth.py", symbol="verify", anchor_commit=C1, found=False))
    assert code_state(memory_id) == "missing"
    refs_check(
        caller=SYNC,
        check=CheckInput(
            project="github.com/other/repo",
            commit=C2,
            results=[
                CheckResult(path="app/auth.py", symbol="verify", anchor_commit=C1, found=True, hash="sym:1")
            ],
        ),
    )
    assert code_state(memory_id) == "missing"


def test_fill_migration_sets_code_state_of_memories_checked_before_the_column() -> None:
    changed = Memory.objects.create(type="codebase", scope=SCOPE, content="`a` in x.py.", source_agent="old")
    missing = Memory.objects.create(type="codebase", scope=SCOPE, content="`b` in y.py.", source_agent="old")
    file_only = Memory.objects.create(type="codebase", scope=SCOPE, content="See z.py.", source_agent="old")
    rows = [
        (changed, "x.py", "a", "changed"),
        (changed, "x.py", "", "changed"),
        (missing, "y.py", "b", "changed"),
        (missing, "y.py", "", "missing"),
        (file_only, "z.py", "", "changed"),
    ]
    CodeRef.objects.filter(memory__in=[changed, missing, file_only]).delete()
    CodeRef.objects.bulk_create(
        [
            CodeRef(
                memory=m,
                scope=SCOPE,
                path=path,
                symbol=symbol,
                state=state,
                anchor_hash="h",
                anchor_commit=C1,
            )
            for m, path, symbol, state in rows
        ]
    )
    Memory.objects.filter(pk__in=[changed.pk, missing.pk, file_only.pk]).update(code_state=None)
    module = __import__("coderefs.migrations.0003_fill_code_state", fromlist=["FILL"])
    with connection.cursor() as cursor:
        cursor.execute(module.FILL)
    assert [code_state(m.pk) for m in (changed, missing, file_only)] == ["changed", "missing", None]
