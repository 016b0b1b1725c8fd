"""memories' writes, one module per use case: remember (remember and supersede), handoff (handoff and
resume), review (forget and the owner's review), delivery (get_context and recall as agents are served
them, recorded as usage); writes holds what remember and handoff share (input checks, the insert with the
review rule and the quota, the embedding after commit), classification the chat model's type for
remember.

Every surface (MCP tools, REST, dashboard, commands) calls these functions; the rules of the contract
(seeds/000) and of spec §1.4–§1.5 live here and nowhere else. Each function validates everything before
it writes, so bad input changes nothing, and owns its transaction.

Callers import from the use case's module. The names below are the MCP tools' and the dashboard's, which
still read them as `services.<name>` while other branches reshape those adapters; point them at the
modules and drop this list once those land.
"""

from memories.services.delivery import context_deliver, recall_deliver
from memories.services.handoff import (
    HANDOFF_DEFAULT_TTL,
    HANDOFF_MAX_TTL,
    MAX_NEXT_STEPS,
    MAX_STEP_CHARS,
    handoff_create,
    handoff_resume,
)
from memories.services.remember import MAX_CONTENT_CHARS, MAX_TTL, memory_remember
from memories.services.review import MAX_REASON_CHARS, memory_approve, memory_forget, memory_reject

__all__ = [
    "HANDOFF_DEFAULT_TTL",
    "HANDOFF_MAX_TTL",
    "MAX_CONTENT_CHARS",
    "MAX_NEXT_STEPS",
    "MAX_REASON_CHARS",
    "MAX_STEP_CHARS",
    "MAX_TTL",
    "context_deliver",
    "handoff_create",
    "handoff_resume",
    "memory_approve",
    "memory_forget",
    "memory_reject",
    "memory_remember",
    "recall_deliver",
]
