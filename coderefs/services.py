"""Writes of code references: recording them when a memory is written, and applying what clients saw.

Anchoring happens at first sight: the server never knows which commit a memory was written against, so
the first client that finds the file or symbol in a clean checkout fixes the hash it is later compared to.
"""

from datetime import datetime

from django.db import transaction
from django.db.models import Case, IntegerField, OuterRef, Q, Subquery, Value, When

from access import reach
from access.caller import Caller
from coderefs.extract import refs_for_memory
from coderefs.models import STALE_REF, CodeRef, RefState
from coderefs.schemas import CheckInput, CheckOutput, CheckResult
from kenfold import clock
from kenfold.db_functions import xact_lock
from kenfold_common.coderefs import (
    HASH_CONTROL_RE,
    MAX_HASH_CHARS,
    is_commit,
    is_valid_ref_path,
    is_valid_ref_symbol,
)
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import USER_SCOPE, scope_for_project
from kenfold_common.secrets import find_secrets, reject_secrets
from memories.models import Memory
from memories.quotas import quota_charge


def refs_record(memory: Memory) -> None:
    """Store the files and symbols a new memory mentions (registered with memories.extensions: called
    inside the inserting transaction)."""
    refs = refs_for_memory(memory_type=memory.type, scope=memory.scope, content=memory.content)
    # The content passed the secret filter as a whole; a path or symbol cut out of it is scanned again
    # alone (without its context a rule can read it differently) and left out rather than stored.
    refs = [ref for ref in refs if not find_secrets(f"{ref.path}\n{ref.symbol}")]
    CodeRef.objects.bulk_create(
        [CodeRef(memory=memory, scope=memory.scope, path=ref.path, symbol=ref.symbol) for ref in refs],
        ignore_conflicts=True,
    )


def project_scope(project: str | None) -> str:
    """The scope of a project for the references API: user-wide memories have no code to check."""
    if not (project or "").strip():
        raise InvalidInput("project is required: pass the repository's git remote URL as ?project=")
    scope = scope_for_project(project)
    if scope == USER_SCOPE:
        raise InvalidInput("project is required: pass the repository's git remote URL as ?project=")
    return scope


def _validate_result(index: int, result: CheckResult) -> None:
    where = f"results[{index}]"
    if not result.path and not result.symbol:
        raise InvalidInput(f"{where}: give a path, a symbol or both")
    if result.path and not is_valid_ref_path(result.path):
        raise InvalidInput(f"{where}.path is not a repository-relative file path")
    if result.symbol and not is_valid_ref_symbol(result.symbol):
        raise InvalidInput(f"{where}.symbol is not an identifier (at most 100 characters)")
    if result.anchor_commit is not None and not is_commit(result.anchor_commit):
        raise InvalidInput(f"{where}.anchor_commit must be 7-64 lowercase hex digits")
    if result.found:
        if not result.hash or len(result.hash) > MAX_HASH_CHARS:
            raise InvalidInput(f"{where}: a found target needs a hash of 1-{MAX_HASH_CHARS} characters")
        # PostgreSQL text holds no NUL, and a hash is the client's digest: no control characters either.
        if HASH_CONTROL_RE.search(result.hash):
            raise InvalidInput(
                f"{where}.hash contains a control character; send the digest as the client made it"
            )
    elif result.hash is not None:
        raise InvalidInput(f"{where}: a target that was not found has no hash")
    if result.resolved_path is not None and not is_valid_ref_path(result.resolved_path):
        raise InvalidInput(f"{where}.resolved_path is not a repository-relative file path")
    # resolved_path and hash are stored (and exported); path and symbol select what is stored.
    for name in ("path", "symbol", "resolved_path", "hash"):
        if text := getattr(result, name):
            reject_secrets(field=f"{where}.{name}", text=text, named=True)


def refs_check(*, caller: Caller, check: CheckInput) -> CheckOutput:
    """Apply one client's findings at `check.commit`, in one transaction; validates everything first."""
    caller.require_write("refs check")
    scope = project_scope(check.project)
    reach.require_scope(caller=caller, scope=scope, write=True)
    if not is_commit(check.commit):
        raise InvalidInput("commit must be the checked commit's id: 7-64 lowercase hex digits")
    for index, result in enumerate(check.results):
        _validate_result(index, result)

    now = clock.now()
    updated = anchored = unmatched = 0
    with transaction.atomic():
        # Checks of one project serialize: each recomputes its memories' code_state from every reference
        # (_refresh_code_state), and two overlapping checks could each miss the other's uncommitted
        # changes to different references of one memory.
        xact_lock("refs check", scope)
        for result in check.results:
            rows = CodeRef.objects.filter(scope=scope, path=result.path, symbol=result.symbol)
            if result.anchor_commit is None:
                # First sight: anchor every not-yet-anchored reference to this target.
                rows = rows.filter(anchor_commit__isnull=True)
                changes = {"checked_commit": check.commit, "checked_at": now}
                if result.found:
                    changes |= {
                        "state": RefState.CURRENT,
                        "anchor_hash": result.hash,
                        "anchor_commit": check.commit,
                    }
                else:
                    changes |= {"state": RefState.UNRESOLVED}
                if result.resolved_path:
                    changes["resolved_path"] = result.resolved_path
                count = rows.update(**changes)
                anchored += count if result.found else 0
            else:
                rows = rows.filter(anchor_commit=result.anchor_commit)
                count = 0
                base = {"checked_commit": check.commit, "checked_at": now}
                if result.resolved_path:
                    base["resolved_path"] = result.resolved_path
                if not result.found:
                    count = rows.update(state=RefState.MISSING, **base)
                else:
                    count += rows.filter(anchor_hash=result.hash).update(state=RefState.CURRENT, **base)
                    count += rows.filter(~Q(anchor_hash=result.hash)).update(state=RefState.CHANGED, **base)
            updated += count
            unmatched += 0 if count else 1
        _refresh_code_state(scope=scope, checked_at=now)
        # Last, after the check's own locks (memories.quotas).
        quota_charge(caller=caller, writes=1)
    states = {state: 0 for state in RefState.values}
    for state in CodeRef.objects.filter(scope=scope).values_list("state", flat=True):
        states[state] += 1
    return CheckOutput(updated=updated, anchored=anchored, unmatched=unmatched, states=states)


def _refresh_code_state(*, scope: str, checked_at: datetime) -> None:
    """Set `code_state` of the memories whose references this check touched to their worst stale
    reference (missing before changed), or NULL when none is stale."""
    worst = (
        CodeRef.objects.filter(STALE_REF, memory=OuterRef("pk"))
        .order_by(
            Case(When(state=RefState.MISSING, then=Value(0)), default=Value(1), output_field=IntegerField())
        )
        .values("state")[:1]
    )
    touched = CodeRef.objects.filter(scope=scope, checked_at=checked_at).values("memory_id")
    Memory.objects.filter(pk__in=touched).update(code_state=Subquery(worst))
