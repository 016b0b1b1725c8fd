"""Turning Memory rows into the MemoryView that every surface returns."""

from memories.models import Memory, MemoryType
from memories.schemas import MemoryView

HANDOFF_KIND = "handoff"


def is_handoff(memory: Memory) -> bool:
    return memory.type == MemoryType.TEMPORARY and (memory.attrs or {}).get("kind") == HANDOFF_KIND


def memory_view(memory: Memory, *, score: float | None = None) -> MemoryView:
    attrs = memory.attrs or {}
    handoff = is_handoff(memory)
    return MemoryView(
        id=str(memory.id),
        type=memory.type,
        scope=memory.scope,
        content=memory.content,
        source_agent=memory.source_agent,
        trust=memory.trust,
        created_at=memory.created_at,
        expires_at=memory.expires_at,
        next_steps=list(attrs.get("next_steps") or []) if handoff else None,
        resumed_by=attrs.get("resumed_by") if handoff else None,
        score=score,
        # Any code state is stale: a changed file alone never sets one (coderefs decides).
        stale=True if memory.code_state else None,
    )
