"""Vectors are stored in their row, not in the TOAST table.

pgvector gives its type EXTERNAL storage: a row longer than about 2 kB has its vector moved out of line.
A 512-dimension vector is 2,052 bytes, so every vector of the multilingual model was: each row a search
reads cost a lookup in the TOAST table's index and a second heap read. The exact search of a small
scope (migration 0008's scope index, then a sort) reads every vector of the scope, and took 5.1-6.5 ms
for the 512-dimension model against 0.9-2.3 ms for the 384-dimension one, whose vectors stay in their
rows, at 1,100 memories a scope (docs/benchmarks.md, 2026-12-03).

MAIN keeps a value in its row unless the row would not fit in a page: the vectors embedding models
produce (tested up to 1,536 dimensions) stay inline, and one too large for a row in a page (about 2,000
dimensions and more) still goes out of line. Only rows written from now on are stored
this way; existing ones are read as before until they are written again (a re-embedding, or
`VACUUM FULL memory_embedding`, which locks the table while it rewrites it).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0012_merge_docs_delta")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memory_embedding ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE memory_embedding ALTER COLUMN embedding SET STORAGE EXTERNAL",
        )
    ]
