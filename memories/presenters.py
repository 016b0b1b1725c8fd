"""Turning Memory rows into the MemoryView that every surface returns."""

from memories.models import Memory, MemoryType
from memories.schemas import MemoryView

HANDOFF_KIND = "handoff"
# A section of a project's documentation, stored by `kenfold docs sync` (projectdocs): attrs carry its
# page's path, heading_path, chunk_index, file_hash and frontmatter fields.
DOC_KIND = "doc"
# MemoryEdge relations made from a page's `relates_to` frontmatter are this prefix and the relation type.
DOC_RELATION_PREFIX = "relates_to:"


def is_doc(memory: Memory) -> bool:
    return (memory.attrs or {}).get("kind") == DOC_KIND


def is_handoff(memory: Memory) -> bool:
    return memory.type == MemoryType.TEMPORARY and (memory.attrs or {}).get("kind") == HANDOFF_KIND


def memory_view(memory: Memory, *, score: float | None = None) -> MemoryView:
    attrs = memory.attrs or {}
    handoff = is_handoff(memory)
    doc = is_doc(memory)
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
        path=attrs.get("path") if doc else None,
        heading_path=list(attrs.get("heading_path") or []) if doc else None,
        # Any code state is stale: a changed file alone never sets one (coderefs decides).
        stale=True if memory.code_state else None,
    )
