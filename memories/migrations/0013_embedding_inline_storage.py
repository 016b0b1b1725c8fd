"""Vectors are stored in their row, not in the TOAST table.

pgvector gives its type EXTERNAL storage: a row longer than about 2 kB has its vector moved out of line.
A 512-dimension vector is 2,052 bytes, so every vector of the multilingual model was: each row a search
reads cost a lookup in the TOAST table's index and a second heap read. The exact search of a small
scope (migration 0008's scope index, then a sort) reads every vector of the scope, and took 5.1-6.5 ms
for the 512-dimension model against 0.9-2.3 ms for the 384-dimension one, whose vectors stay in their
rows, at 1,100 memories a scope (docs/benchmarks.md, 2026-12-03).

MAIN keeps a value in its row unless the row would not fit in a page: the vectors embedding models
produce (tested up to 1,536 dimensions) stay inline, and one too large for a row in a page (about 2,000
dimensions and more) still goes out of line.

The setting applies to rows written from now on. A small store's existing vectors are moved now:
VACUUM FULL rewrites the table and rebuilds its indexes under a lock (3 s for 8,800 vectors on the
2-core development machine). A larger store is not locked that long during an upgrade; its old vectors
are read as before until they are written again (a re-embedding), or until the owner runs
`VACUUM FULL memory_embedding` at a quiet moment.
"""

import logging

from django.db import migrations

log = logging.getLogger(__name__)

# The lock this size costs, extrapolated: about seven seconds (8,800 vectors took three; 20,000 not measured).
REWRITE_UP_TO_ROWS = 20_000


def move_vectors_inline(apps, schema_editor) -> None:
    """Rewrite a small store's table if any of its vectors is out of line; tell a large store's owner how."""
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM memory_embedding WHERE pg_column_toast_chunk_id(embedding) IS NOT NULL)"
        )
        if not cursor.fetchone()[0]:
            return
        cursor.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memory_embedding LIMIT %s) AS sample",
            [REWRITE_UP_TO_ROWS + 1],
        )
        if cursor.fetchone()[0] > REWRITE_UP_TO_ROWS:
            log.warning(
                "memory_embedding has more than %d vectors: the ones stored out of line stay there until "
                "they are re-embedded; run `VACUUM FULL memory_embedding` at a quiet moment to move them "
                "into their rows now (it locks the table while it rewrites it)",
                REWRITE_UP_TO_ROWS,
            )
            return
        cursor.execute("VACUUM FULL memory_embedding")


class Migration(migrations.Migration):
    # VACUUM cannot run inside a transaction.
    atomic = False

    dependencies = [("memories", "0012_merge_docs_delta")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_embedding ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE memory_embedding ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
        migrations.RunPython(move_vectors_inline, migrations.RunPython.noop),
    ]
