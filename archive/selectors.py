"""Reading an archive out of the database (spec §1.18): one consistent snapshot, streamed in id order."""

from collections.abc import Callable, Generator
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Exists, OuterRef, QuerySet

from archive.records import EDGE_FIELDS, MEMORY_FIELDS, REF_FIELDS, Counts, dump_header, dump_line
from coderefs.models import CodeRef
from kenfold import __version__, clock
from memories.models import LIVE_STATUSES, Memory, MemoryEdge

# Rows fetched per round trip of the server-side cursor: memory stays flat however large the store is.
CHUNK = 2000


@dataclass(frozen=True)
class ExportSelection:
    scope: str | None = None
    # Only what is served or waiting for review (active and proposed), not retired history.
    active: bool = False


def _memories(selection: ExportSelection) -> QuerySet[Memory]:
    memories = Memory.objects.all()
    if selection.scope is not None:
        memories = memories.filter(scope=selection.scope)
    if selection.active:
        memories = memories.filter(status__in=LIVE_STATUSES)
    return memories


def _edges(memories: QuerySet[Memory]) -> QuerySet[MemoryEdge]:
    # Only edges whose two ends are in the archive: an edge to a memory left out could not be imported.
    return MemoryEdge.objects.filter(
        Exists(memories.filter(pk=OuterRef("src"))), Exists(memories.filter(pk=OuterRef("dst")))
    )


def _refs(memories: QuerySet[Memory]) -> QuerySet[CodeRef]:
    return CodeRef.objects.filter(Exists(memories.filter(pk=OuterRef("memory"))))


def archive_lines(
    *, selection: ExportSelection, progress: Callable[[int, int], None] | None = None
) -> Generator[str]:
    """The archive's lines, header to end record, read in one read-only REPEATABLE READ transaction, so
    the counts, the memories, their edges and refs are one consistent snapshot even while agents write.

    A generator: the transaction stays open until the caller has taken the last line (or closes it).
    """
    # Inside a caller's transaction (a test's) its snapshot rules; SET TRANSACTION must come first.
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                # The snapshot is taken by the first query after this statement, and kept to the end.
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        memories = _memories(selection)
        edges = _edges(memories).order_by("src", "relation", "dst")
        refs = _refs(memories).order_by("memory", "path", "symbol")
        counts = Counts(memories=memories.count(), edges=edges.count(), refs=refs.count())
        total = counts.memories + counts.edges + counts.refs
        yield dump_header(exported_at=clock.now(), version=__version__)
        done = 0
        for row in memories.order_by("id").values(*MEMORY_FIELDS).iterator(chunk_size=CHUNK):
            yield dump_line("memory", row)
            done += 1
            if progress is not None and done % CHUNK == 0:
                progress(done, total)
        for row in edges.values(*EDGE_FIELDS).iterator(chunk_size=CHUNK):
            yield dump_line("edge", row)
            done += 1
        for row in refs.values(*REF_FIELDS).iterator(chunk_size=CHUNK):
            yield dump_line("ref", row)
            done += 1
        if progress is not None:
            progress(done, total)
        yield dump_line("end", counts.as_record())
