"""Extensions and SQL functions that the memory schema is built on.

On the embedded server the extensions already exist (Kenfold's bootstrap creates them as superuser);
on a server of your own they must be available, and creating them needs the right privileges, so a
failure says exactly what the database administrator has to run.
"""

from django.db import migrations

REQUIRED_EXTENSIONS = ("vector", "pg_trgm")

CONTENT_KEY_FUNCTION = r"""
CREATE OR REPLACE FUNCTION kenfold_content_key(content text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN lower(regexp_replace(btrim(regexp_replace(content, '\s+', ' ', 'g'), ' '), '[.!。]+$', ''));
"""


def create_extensions(apps, schema_editor) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name in REQUIRED_EXTENSIONS:
            cursor.execute("SELECT 1 FROM pg_extension WHERE extname = %s", [name])
            if cursor.fetchone():
                continue
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = %s", [name])
            if not cursor.fetchone():
                raise RuntimeError(
                    f"the PostgreSQL server has no {name!r} extension installed; Kenfold needs pgvector and "
                    "pg_trgm (the pgvector/pgvector:pg18 image has both), or unset KENFOLD_DATABASE_URL to "
                    "use the embedded server"
                )
            cursor.execute("SAVEPOINT kenfold_ext")
            try:
                cursor.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")
            except Exception as exc:
                cursor.execute("ROLLBACK TO SAVEPOINT kenfold_ext")
                raise RuntimeError(
                    f"could not create the {name!r} extension ({exc}); ask the database administrator to run "
                    f"`CREATE EXTENSION {name};` in this database, then migrate again"
                ) from exc


class Migration(migrations.Migration):
    initial = True
    dependencies: list[tuple[str, str]] = []

    operations = [
        migrations.RunPython(create_extensions, migrations.RunPython.noop),
        migrations.RunSQL(CONTENT_KEY_FUNCTION, "DROP FUNCTION IF EXISTS kenfold_content_key(text)"),
    ]
