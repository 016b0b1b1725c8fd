"""Each vector row carries its memory's scope, status, type and expiry, kept in step by triggers.

A vector search walks the HNSW index and tests every row it meets against the filters (scope, live
status): about a thousand rows for the 50 nearest of one project at 100,000 memories. Reading those
filters from the memory table cost a primary-key lookup per row, a quarter of the search's time
(docs/benchmarks.md); read from the vector row itself they cost nothing more. The database keeps the
copies, so every writer (the ORM, raw SQL, a bulk load with triggers on) is covered:

- a new vector row copies its memory's values, under a share lock on the memory row: a concurrent
  change of that memory either commits first (and is copied) or waits for this row (and updates it);
- a change of a memory's scope, status, type or expiry is copied onto its vector rows.

Existing rows are filled here. Their HNSW indexes are dropped first and rebuilt after: updating rows
under an HNSW index re-inserts every row into the graph, far slower than one build.
"""

from django.db import migrations

COLUMNS = """
ALTER TABLE memory_embedding
    ADD COLUMN scope text,
    ADD COLUMN status text,
    ADD COLUMN type text,
    ADD COLUMN expires_at timestamptz;
"""

FILL = """
UPDATE memory_embedding e
SET scope = m.scope, status = m.status, type = m.type, expires_at = m.expires_at
FROM memory m
WHERE m.id = e.memory_id;
ALTER TABLE memory_embedding
    ALTER COLUMN scope SET NOT NULL,
    ALTER COLUMN status SET NOT NULL,
    ALTER COLUMN type SET NOT NULL;
"""

# For a small scope the exact answer is cheaper than the graph walk: the planner reads the scope's live
# vectors through this index and sorts them (a scope of a few hundred memories, out of a million).
SCOPE_INDEX = """
CREATE INDEX memory_embedding_live_scope ON memory_embedding (model, scope) WHERE status = 'active';
"""
DROP_SCOPE_INDEX = "DROP INDEX IF EXISTS memory_embedding_live_scope;"

TRIGGERS = """
CREATE OR REPLACE FUNCTION kenfold_embedding_filters() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    SELECT m.scope, m.status, m.type, m.expires_at
    INTO NEW.scope, NEW.status, NEW.type, NEW.expires_at
    FROM memory m
    WHERE m.id = NEW.memory_id
    FOR SHARE;
    RETURN NEW;
END;
$$;
CREATE TRIGGER kenfold_embedding_filters BEFORE INSERT OR UPDATE OF memory_id ON memory_embedding
    FOR EACH ROW EXECUTE FUNCTION kenfold_embedding_filters();

CREATE OR REPLACE FUNCTION kenfold_memory_filters_to_embeddings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_embedding e
    SET scope = NEW.scope, status = NEW.status, type = NEW.type, expires_at = NEW.expires_at
    WHERE e.memory_id = NEW.id;
    RETURN NULL;
END;
$$;
CREATE TRIGGER kenfold_memory_filters_to_embeddings AFTER UPDATE OF scope, status, type, expires_at ON memory
    FOR EACH ROW
    WHEN (OLD.scope IS DISTINCT FROM NEW.scope OR OLD.status IS DISTINCT FROM NEW.status
          OR OLD.type IS DISTINCT FROM NEW.type OR OLD.expires_at IS DISTINCT FROM NEW.expires_at)
    EXECUTE FUNCTION kenfold_memory_filters_to_embeddings();
"""

DROP = """
DROP TRIGGER IF EXISTS kenfold_memory_filters_to_embeddings ON memory;
DROP FUNCTION IF EXISTS kenfold_memory_filters_to_embeddings();
DROP TRIGGER IF EXISTS kenfold_embedding_filters ON memory_embedding;
DROP FUNCTION IF EXISTS kenfold_embedding_filters();
ALTER TABLE memory_embedding
    DROP COLUMN IF EXISTS scope,
    DROP COLUMN IF EXISTS status,
    DROP COLUMN IF EXISTS type,
    DROP COLUMN IF EXISTS expires_at;
"""


def fill_existing_rows(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT c.relname, pg_get_indexdef(i.indexrelid)
            FROM pg_index i
            JOIN pg_class c ON c.oid = i.indexrelid
            JOIN pg_am am ON am.oid = c.relam
            WHERE i.indrelid = 'memory_embedding'::regclass AND am.amname = 'hnsw'
            ORDER BY c.relname
            """
        )
        hnsw = cursor.fetchall()
        for name, _definition in hnsw:
            cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute(FILL)
        for _name, definition in hnsw:
            cursor.execute(definition)
        # The planner has no statistics on the new columns yet: without them it estimated one matching
        # row and sorted every vector of the model instead of walking the graph (68 ms against 4 ms).
        cursor.execute("ANALYZE memory_embedding")


class Migration(migrations.Migration):
    dependencies = [("memories", "0007_active_recent_index")]

    operations = [
        migrations.RunSQL(COLUMNS, migrations.RunSQL.noop),
        migrations.RunPython(fill_existing_rows, migrations.RunPython.noop),
        migrations.RunSQL(SCOPE_INDEX, DROP_SCOPE_INDEX),
        migrations.RunSQL(TRIGGERS, DROP),
    ]
