"""Where other apps hook into memories without memories importing them (apps point one way).

coderefs depends on memories, never the reverse: it registers here, in its AppConfig.ready, to record
the files and symbols a new memory mentions (inside the write's transaction) and to add a memory's code
references to the views every surface returns. Staleness itself is a column of the memory row
(`Memory.code_state`), which coderefs keeps current, so ranking and listings need no hook.
"""

from collections.abc import Callable

from memories.models import Memory
from memories.schemas import MemoryView

MemoryInserted = Callable[[Memory], None]
ViewsPresented = Callable[[list[MemoryView]], None]

_inserted: list[MemoryInserted] = []
_presented: list[ViewsPresented] = []


def on_memory_inserted(hook: MemoryInserted) -> None:
    """Call `hook` with every memory a service inserts, inside the inserting transaction."""
    if hook not in _inserted:
        _inserted.append(hook)


def on_views_presented(hook: ViewsPresented) -> None:
    """Let `hook` fill in views before a service returns them (one call per batch of views)."""
    if hook not in _presented:
        _presented.append(hook)


def memory_inserted(memory: Memory) -> None:
    for hook in _inserted:
        hook(memory)


def views_presented(views: list[MemoryView]) -> list[MemoryView]:
    if views:
        for hook in _presented:
            hook(views)
    return views
