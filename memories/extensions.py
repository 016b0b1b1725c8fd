"""Where other apps hook into memories without memories importing them (apps point one way).

coderefs depends on memories, never the reverse: it registers here, in its AppConfig.ready, to record
the files and symbols a new memory mentions (inside the write's transaction) and to add a memory's code
references to the views every surface returns. Staleness itself is a column of the memory row
(`Memory.code_state`), which coderefs keeps current, so ranking and listings need no hook.

evals registers to hear of changes that may change what retrieval returns (a consolidation applied, an
archive imported, a reindex, the vectors of the configured models complete), to score the owner's golden
questions again.
"""

from collections.abc import Callable

from django.db import transaction

from memories.models import Memory
from memories.schemas import MemoryView

MemoryInserted = Callable[[Memory], None]
ViewsPresented = Callable[[list[MemoryView]], None]
RetrievalChanged = Callable[[str], None]

# What retrieval_changed reports.
CONSOLIDATION_APPLIED = "consolidation"
ARCHIVE_IMPORTED = "import"
REINDEXED = "reindex"
# Every live memory has a current vector of each configured model (the backfill finished): how a switch
# of embedding model completes, seen by whoever remembers which models were configured before.
VECTORS_CURRENT = "vectors"

_inserted: list[MemoryInserted] = []
_presented: list[ViewsPresented] = []
_changed: list[RetrievalChanged] = []


def on_memory_inserted(hook: MemoryInserted) -> None:
    """Call `hook` with every memory a service inserts, inside the inserting transaction."""
    if hook not in _inserted:
        _inserted.append(hook)


def on_views_presented(hook: ViewsPresented) -> None:
    """Let `hook` fill in views before a service returns them (one call per batch of views)."""
    if hook not in _presented:
        _presented.append(hook)


def on_retrieval_changed(hook: RetrievalChanged) -> None:
    """Call `hook` with what changed (CONSOLIDATION_APPLIED, ...) once the change has committed."""
    if hook not in _changed:
        _changed.append(hook)


def memory_inserted(memory: Memory) -> None:
    for hook in _inserted:
        hook(memory)


def views_presented(views: list[MemoryView]) -> list[MemoryView]:
    if views:
        for hook in _presented:
            hook(views)
    return views


def retrieval_changed(change: str) -> None:
    """Tell the hooks of a change once the current transaction commits (at once outside one); a change
    rolled back is never told. robust: a failing hook is logged, never the failure of the committed change."""
    for hook in _changed:
        transaction.on_commit(lambda hook=hook: hook(change), robust=True)
