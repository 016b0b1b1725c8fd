"""One HNSW index per model and scope, in place of one per model.

Every vector search reads named scopes, and the model-wide graph had to walk past other scopes' vectors
to find enough of them: the smaller the scope, the longer the walk (memories.embedding_store.
ensure_scope_index). Existing vectors get their scopes' indexes here, then the model-wide indexes go.
Building reads the table once per scope: at 100,000 memories in 21 scopes, about 50 s for two models.
"""

import hashlib

from django.db import migrations

from memories.embedding_store import _index_name


def _model_index_name(model: str, dims: int) -> str:
    """The model-wide index's name before this migration (memories.embedding_store at 0004-0012)."""
    return f"memory_embedding_hnsw_{hashlib.md5(model.encode()).hexdigest()[:12]}_{dims}"


def _hnsw_indexes(cursor) -> list[tuple[str, str]]:
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
    return cursor.fetchall()


def _build(cursor, name: str, dims: int, predicate: str, params: list[str]) -> None:
    cursor.execute(
        f'CREATE INDEX IF NOT EXISTS "{name}" ON memory_embedding '
        f"USING hnsw ((embedding::vector({int(dims)})) vector_cosine_ops) WHERE {predicate}",
        params,
    )


def per_scope(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        # The whole table is read once per index built: give the builds the memory a graph needs.
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
        cursor.execute(
            "SELECT model, vector_dims(embedding) AS dims, scope FROM memory_embedding "
            "GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
        )
        for model, dims, scope in cursor.fetchall():
            _build(cursor, _index_name(model, dims, scope), dims, "model = %s AND scope = %s", [model, scope])
        for name, definition in _hnsw_indexes(cursor):
            if "scope" not in definition:
                cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute("ANALYZE memory_embedding")


def per_model(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
        cursor.execute(
            "SELECT model, vector_dims(embedding) AS dims FROM memory_embedding GROUP BY 1, 2 ORDER BY 1, 2"
        )
        for model, dims in cursor.fetchall():
            _build(cursor, _model_index_name(model, dims), dims, "model = %s", [model])
        for name, definition in _hnsw_indexes(cursor):
            if "scope" in definition:
                cursor.execute(f'DROP INDEX "{name}"')


class Migration(migrations.Migration):
    dependencies = [("memories", "0012_merge_docs_delta")]

    operations = [migrations.RunPython(per_scope, per_model)]
