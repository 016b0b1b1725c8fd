"""What agents are served: get_context with its delta state, and recall, each recorded as usage."""

import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from access import reach
from access.caller import Caller
from kenfold import clock
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import USER_SCOPE, scope_for_project
from memories import delta, selectors, usage
from memories.history import parse_as_of
from memories.schemas import GetContextOutput, MemoryItem, RecallOutput

# How many memories a snapshot remembers the agent holding: about ten full get_context answers, a few
# tens of kilobytes per row.
MAX_HELD_MEMORIES = 1000


def context_deliver(
    *,
    caller: Caller,
    task: str | None = None,
    project: str | None = None,
    budget_tokens: int | None = None,
    state: str | None = None,
    as_of: str | None = None,
    session_id: str | None = None,
    used: list[str] | None = None,
    requests_running: Callable[[], int] | None = None,
) -> GetContextOutput:
    """get_context as agents call it: the context (selectors.context_get) and a `state` for the next call.

    With `as_of`, the context as it was served at that past time, without a state: an agent holding a
    past answer does not hold what is served now, so it must never become the base of a delta.

    With `state`, memories the agent already holds unchanged come as references, and `removed` names
    those it holds that were retired since. The new state stands for everything the agent then holds:
    what it held before (minus removed), plus what this answer sent. A memory merely irrelevant to this
    task stays held. A bad or stale state is an error (memories.delta), never an empty start.

    The snapshot row is bookkeeping about the caller, not memory: get_context stays a read of memory
    (read-only grants may call it) and nothing in the store changes.
    """
    now = clock.now()
    reused = usage.parse_used(used)
    scope = scope_for_project(project)
    if scope != USER_SCOPE:
        # Before the state is read: a state must not tell a limited caller anything of another project.
        reach.require_scope(caller=caller, scope=scope, write=False)
    moment = parse_as_of(as_of, now=now)
    if moment is not None and state is not None:
        raise InvalidInput("as_of answers are not deltas: call get_context with as_of and without state")
    if moment is not None:
        output = selectors.context_get(
            caller=caller,
            task=task,
            project=project,
            budget_tokens=budget_tokens,
            as_of=moment,
            requests_running=requests_running,
        )
    else:
        output = _context_with_state(
            caller=caller,
            task=task,
            project=project,
            scope=scope,
            budget_tokens=budget_tokens,
            state=state,
            now=now,
            requests_running=requests_running,
        )
    # Served, so recorded like any answer (memories.usage), a past one too: the owner sees what agents read.
    _record_usage(
        caller=caller,
        tool="get_context",
        served=output.sent_items(),
        session_id=session_id,
        used=reused,
        now=now,
    )
    return output


def _context_with_state(
    *,
    caller: Caller,
    task: str | None,
    project: str | None,
    scope: str,
    budget_tokens: int | None,
    state: str | None,
    now: datetime,
    requests_running: Callable[[], int] | None,
) -> GetContextOutput:
    """get_context now (`scope` is `project`'s), as a delta against `state` when given, with the new
    state for the next call."""
    held = delta.held_for_state(state=state, scope=scope, now=now) if state is not None else None
    output = selectors.context_get(
        caller=caller,
        task=task,
        project=project,
        budget_tokens=budget_tokens,
        held=held,
        requests_running=requests_running,
    )
    removed = set(output.removed or [])
    holding = {key: value for key, value in (held or {}).items() if key not in removed}
    for item in output.sent_items():
        # Moved to the end: the memories of this answer are the newest the agent holds.
        holding.pop(item.id, None)
        # Every item the packer sent carries its hash (a full view gets it there, a reference has it).
        holding[item.id] = item.content_hash or ""
    if len(holding) > MAX_HELD_MEMORIES:
        # Forgetting that the agent holds a memory only makes a later answer send it in full again, so
        # the oldest entries go first (this answer's items were added last).
        holding = dict(list(holding.items())[-MAX_HELD_MEMORIES:])
    output.state = delta.save_state(scope=scope, held=holding, now=now)
    return output


def recall_deliver(
    *, caller: Caller, session_id: str | None = None, used: list[str] | None = None, **arguments: Any
) -> RecallOutput:
    """recall as agents call it: selectors.memory_recall with these `arguments`, recorded as
    served (memories.usage); `used` marks memories that earlier answers served and the agent reused.

    Like get_context's state, the record is bookkeeping about the caller, so read-only grants may call it.
    """
    now = clock.now()
    reused = usage.parse_used(used)
    output = selectors.memory_recall(caller=caller, **arguments)
    _record_usage(
        caller=caller, tool="recall", served=output.memories, session_id=session_id, used=reused, now=now
    )
    return output


def _record_usage(
    *,
    caller: Caller,
    tool: str,
    served: list[MemoryItem],
    session_id: str | None,
    used: list[uuid.UUID],
    now: datetime,
) -> None:
    # Reuse first: it refers to earlier answers, never to the one being recorded.
    usage.usage_mark_used(caller=caller, memory_ids=used, session_id=session_id, now=now)
    usage.usage_record(
        caller=caller, tool=tool, memory_ids=[item.id for item in served], session_id=session_id, now=now
    )
