"""Forget (an agent's or the owner's) and the owner's review of proposed memories: the writes that take a
memory out of service or into it."""

import uuid

from django.db import transaction
from psycopg.types.json import Jsonb

from access import reach
from access.caller import Caller
from kenfold import clock
from kenfold.db_functions import server_bound
from kenfold_common.errors import InvalidInput, NotFound
from kenfold_common.secrets import redact_secrets
from memories.audit import audit_record
from memories.models import Memory, MemoryAction, Status, Trust
from memories.quotas import quota_charge
from memories.schemas import ForgetOutput
from memories.selectors import parse_memory_id

MAX_REASON_CHARS = 1000
CLI_AGENT = "kenfold-cli"


def _clean_reason(reason: str | None) -> str:
    """Reasons are free text for the audit trail: cut, NUL-free, and redacted rather than refused."""
    return redact_secrets((reason or "").replace("\x00", "").strip()[:MAX_REASON_CHARS])


def _deletion_record(*, by: str, reason: str | None) -> dict[str, str]:
    """Who deleted a memory, and why when they said: kept in its attrs."""
    return {"forgotten_by": by} | ({"forget_reason": reason} if reason else {})


def _mark_deleted(*, memory_id: uuid.UUID, record: dict[str, str]) -> bool:
    """Soft-delete a memory not yet deleted, adding `record` to its attrs; whether a row changed."""
    changed = server_bound(
        f"UPDATE memory SET status = '{Status.DELETED}', attrs = coalesce(attrs, '{{}}'::jsonb) || %(record)s::jsonb, "
        f"ended_at = %(now)s WHERE id = %(id)s AND status <> '{Status.DELETED}' RETURNING id",
        {"id": memory_id, "record": Jsonb(record), "now": clock.now()},
        prepare=True,
    )
    return bool(changed)


def memory_forget(*, caller: Caller, memory_id: str, reason: str | None = None) -> ForgetOutput:
    """Soft-delete: the row stays for audit; the first deletion's who and why are kept."""
    caller.require_write("forget")
    target_id = parse_memory_id(memory_id)
    reason = _clean_reason(reason)
    record = _deletion_record(by=caller.agent, reason=reason)
    unknown = NotFound(
        f"memory {target_id} does not exist (use an id returned by remember, recall, or get_context)"
    )
    if caller.projects is not None or not caller.user_memories:
        # A memory's scope never changes, so reading it first leaves no window for the check to go stale.
        scope = Memory.objects.filter(pk=target_id).values_list("scope", flat=True).first()
        reach.require_memory(caller=caller, scope=scope, not_found=unknown, write=True)
    with transaction.atomic():
        # One statement: a memory already deleted keeps its first deletion's who and why.
        if _mark_deleted(memory_id=target_id, record=record):
            audit_record(
                action=MemoryAction.FORGOTTEN,
                memory_ids=[target_id],
                agent=caller.agent,
                credential=caller.credential,
                detail={"reason": reason},
            )
        elif not Memory.objects.filter(pk=target_id).exists():
            raise unknown
        # After the memory row's lock, like every write (memories.quotas).
        quota_charge(caller=caller, writes=1)
    return ForgetOutput(id=str(target_id), status=Status.DELETED)


class NotProposed(InvalidInput):
    """Approve or reject on a memory that is no longer proposed: someone decided first (another page, the
    CLI). ``status`` is what it is now, for an adapter that words it its own way."""

    def __init__(self, message: str, *, status: str) -> None:
        super().__init__(message)
        self.status = status


def memory_approve(*, memory_id: str, replaces: str | None = None, actor: str = CLI_AGENT) -> Memory:
    """Serve a proposed memory, confirmed by the user (trust = user); optionally retiring another one."""
    target_id = parse_memory_id(memory_id)
    replaced_id = parse_memory_id(replaces, field="replaces") if replaces else None
    with transaction.atomic():
        memory = Memory.objects.select_for_update().filter(pk=target_id).first()
        if memory is None:
            raise NotFound(f"memory {target_id} does not exist")
        if replaced_id is None and memory.status == Status.ACTIVE:
            return memory
        if memory.status != Status.PROPOSED:
            raise NotProposed(
                f"memory {target_id} is {memory.status}, not proposed; only proposed memories are approved",
                status=memory.status,
            )
        retire_id = replaced_id or memory.supersedes_id
        if retire_id is not None:
            old = Memory.objects.select_for_update().filter(pk=retire_id).first()
            if replaced_id is not None:
                if old is None:
                    raise NotFound(f"replaces: memory {replaced_id} does not exist")
                if old.scope != memory.scope or old.status != Status.ACTIVE or old.pk == memory.pk:
                    raise InvalidInput(
                        f"replaces: memory {replaced_id} must be a different active memory in {memory.scope}"
                    )
                memory.supersedes = old
            if old is not None and old.status == Status.ACTIVE:
                Memory.objects.filter(pk=old.pk).update(status=Status.SUPERSEDED, ended_at=clock.now())
                audit_record(
                    action=MemoryAction.SUPERSEDED,
                    memory_ids=[old.pk],
                    agent=actor,
                    detail={"by": str(memory.pk)},
                )
        memory.status = Status.ACTIVE
        memory.trust = Trust.USER
        memory.active_from = clock.now()
        memory.attrs = (memory.attrs or {}) | {"approved_by": actor}
        memory.save(update_fields=["status", "trust", "supersedes", "attrs", "active_from"])
        audit_record(action=MemoryAction.APPROVED, memory_ids=[memory.pk], agent=actor)
    return memory


def memory_reject(*, memory_id: str, reason: str | None = None, actor: str = CLI_AGENT) -> Memory:
    """Refuse a proposed memory: it is deleted, with who and why, and never proposed again."""
    target_id = parse_memory_id(memory_id)
    reason = _clean_reason(reason)
    with transaction.atomic():
        memory = Memory.objects.select_for_update().filter(pk=target_id).first()
        if memory is None:
            raise NotFound(f"memory {target_id} does not exist")
        if memory.status != Status.PROPOSED:
            raise NotProposed(
                f"memory {target_id} is {memory.status}, not proposed; use forget to remove it",
                status=memory.status,
            )
        memory.status = Status.DELETED
        memory.attrs = (memory.attrs or {}) | _deletion_record(by=actor, reason=reason)
        memory.save(update_fields=["status", "attrs"])
        audit_record(
            action=MemoryAction.REJECTED, memory_ids=[memory.pk], agent=actor, detail={"reason": reason}
        )
    return memory
