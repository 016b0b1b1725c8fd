"""handoff and resume: the note one session leaves for the next, and its pickup."""

import logging
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import QuerySet

from access import reach
from access.caller import Caller
from kenfold import clock
from kenfold.db_functions import xact_lock
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import scope_for_project
from kenfold_common.secrets import reject_secrets
from memories.audit import audit_record
from memories.models import Memory, MemoryAction, MemoryType, Status
from memories.presenters import FLAGS_KEY, HANDOFF_KIND, memory_view
from memories.schemas import HandoffOutput, ResumeOutput
from memories.services.remember import MAX_CONTENT_CHARS
from memories.services.writes import (
    agent_insert,
    clean_text,
    embed_committed,
    parse_ttl,
    reject_secret_session_id,
)

log = logging.getLogger(__name__)

HANDOFF_DEFAULT_TTL = timedelta(days=7)
HANDOFF_MAX_TTL = timedelta(days=30)
MAX_NEXT_STEPS = 20
MAX_STEP_CHARS = 1000


def _handoffs(memories: QuerySet[Memory], scope: str) -> QuerySet[Memory]:
    return memories.filter(scope=scope, type=MemoryType.TEMPORARY, attrs__kind=HANDOFF_KIND)


def handoff_create(
    *,
    caller: Caller,
    summary: str,
    next_steps: list[str] | None = None,
    project: str | None = None,
    ttl_seconds: int | None = None,
    session_id: str | None = None,
) -> HandoffOutput:
    """Leave the one active handoff of a project; an earlier one is superseded and linked."""
    caller.require_write("handoff")
    summary = clean_text(
        summary, field="summary", limit=MAX_CONTENT_CHARS, advice="Summarize; details belong in remember"
    )
    steps: list[str] = []
    for index, step in enumerate(next_steps or []):
        step = (step or "").strip()
        if len(step) > MAX_STEP_CHARS:
            raise InvalidInput(
                f"next_steps[{index}] is {len(step)} characters; the limit is {MAX_STEP_CHARS}"
            )
        if "\x00" in step:
            raise InvalidInput(
                f"next_steps[{index}] contains a NUL character (\\x00); remove it and try again"
            )
        reject_secrets(field=f"next_steps[{index}]", text=step)
        if step:
            steps.append(step)
    if len(steps) > MAX_NEXT_STEPS:
        raise InvalidInput(f"next_steps has {len(steps)} steps; the limit is {MAX_NEXT_STEPS}")
    reject_secrets(field="summary", text=summary)
    reject_secret_session_id(session_id)
    scope = scope_for_project(project)
    reach.require_scope(caller=caller, scope=scope, write=True)
    ttl = parse_ttl(ttl_seconds, maximum=HANDOFF_MAX_TTL, default=HANDOFF_DEFAULT_TTL)

    with transaction.atomic():
        xact_lock("handoff", scope)
        previous = _handoffs(Memory.objects.filter(status=Status.ACTIVE), scope).order_by(
            "-created_at", "-id"
        )
        newest = previous.first()
        memory = agent_insert(
            caller=caller,
            content=summary,
            type=MemoryType.TEMPORARY,
            scope=scope,
            ttl=ttl,
            session_id=session_id,
            attrs={"kind": HANDOFF_KIND, "next_steps": steps, "type_source": "agent"},
            supersedes=newest,
            retire_superseded=False,
        )
        # A handoff held for review (it reads like an instruction) leaves the current one served.
        if memory.status == Status.ACTIVE:
            retired = list(previous.exclude(pk=memory.pk).values_list("id", flat=True))
            Memory.objects.filter(pk__in=retired).update(status=Status.SUPERSEDED, ended_at=clock.now())
            audit_record(
                action=MemoryAction.SUPERSEDED,
                memory_ids=retired,
                agent=caller.agent,
                credential=caller.credential,
                detail={"reason": "a newer handoff"},
            )
    # Recall searches handoffs too (they are active memories of the scope), by meaning as well as by word.
    embed_committed(memory)
    return HandoffOutput(
        id=str(memory.id), expires_at=memory.expires_at, flags=list(memory.attrs.get(FLAGS_KEY) or []) or None
    )


def handoff_resume(*, caller: Caller, project: str | None = None) -> ResumeOutput:
    """The latest unexpired handoff of the project; the first caller is recorded as the one who resumed it."""
    caller.require_write("resume")
    scope = scope_for_project(project)
    reach.require_scope(caller=caller, scope=scope, write=True)
    handoff = (
        _handoffs(Memory.objects.served(clock.now()).for_views(), scope)
        .order_by("-created_at", "-id")
        .first()
    )
    if handoff is None:
        return ResumeOutput()
    try:
        # Conditional on the key being absent, so concurrent resumers cannot overwrite the first one.
        with connection.cursor() as cursor:
            cursor.execute(
                """UPDATE memory SET attrs = attrs || jsonb_build_object('resumed_at', %s::text, 'resumed_by', %s::text)
                   WHERE id = %s AND NOT attrs ? 'resumed_at'""",
                [clock.now().isoformat(), caller.agent, handoff.id],
            )
            if cursor.rowcount:
                audit_record(
                    action=MemoryAction.RESUMED,
                    memory_ids=[handoff.id],
                    agent=caller.agent,
                    credential=caller.credential,
                )
        handoff.refresh_from_db(fields=["attrs"])
    except Exception:
        log.warning(
            "recording who resumed a handoff failed", exc_info=True, extra={"memory_id": str(handoff.id)}
        )
    return ResumeOutput(handoff=memory_view(handoff))
