"""Turning Memory rows into the MemoryView that every surface returns."""

import hashlib
import json

from memories.models import Memory, MemoryType
from memories.schemas import MemoryView

# Hex digits of SHA-256 kept in a content hash: 64 bits tell versions of one memory apart, and a
# reference stays short (it is what a delta get_context sends instead of the text).
CONTENT_HASH_DIGITS = 16
# What a view carries that does not change what the caller knows: a search score differs per query, the
# hash and change flag describe the view itself, and the commit a code reference was last checked at moves
# with every `refs sync` (its state, which is hashed, says whether the code still holds).
_NOT_HASHED = {
    "score": True,
    "content_hash": True,
    "changed": True,
    "code_refs": {"__all__": {"checked_commit"}},
}

HANDOFF_KIND = "handoff"
# The attrs key holding the poisoning screen's reasons (memories.insert), kept after the owner approves.
FLAGS_KEY = "flags"
# A section of a project's documentation, stored by `kenfold docs sync` (projectdocs): attrs carry its
# page's path, heading_path, chunk_index, file_hash and frontmatter fields.
DOC_KIND = "doc"
# The project's memory guidelines (KENFOLD.md): one active per project, served first by get_context.
GUIDELINES_KIND = "guidelines"
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
        flags=list(attrs.get(FLAGS_KEY) or []) or None,
    )


def view_hash(view: MemoryView) -> str:
    """The hash of what a view tells (content as sent, next steps, code references' states, staleness).

    A memory's content never changes under its id (a correction supersedes it), but what a view says
    about it can: its code went stale, a handoff was resumed, a session summary was cut to fit. Any of
    these changes the hash, so a caller holding the older view gets the new one in full.
    """
    shown = view.model_dump(mode="json", exclude=_NOT_HASHED, exclude_none=True)
    canonical = json.dumps(shown, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:CONTENT_HASH_DIGITS]
