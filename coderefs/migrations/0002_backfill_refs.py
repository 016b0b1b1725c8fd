"""One-time extraction of code references from memories written before references existed."""

from django.db import migrations

from coderefs.extract import refs_for_memory

BATCH = 500


def backfill(apps, schema_editor) -> None:
    Memory = apps.get_model("memories", "Memory")
    CodeRef = apps.get_model("coderefs", "CodeRef")
    candidates = Memory.objects.filter(
        type__in=["project", "codebase", "semantic"], status__in=["active", "proposed"]
    ).exclude(scope="user")
    for memory in candidates.only("id", "type", "scope", "content").iterator(chunk_size=BATCH):
        refs = refs_for_memory(memory_type=memory.type, scope=memory.scope, content=memory.content)
        CodeRef.objects.bulk_create(
            [CodeRef(memory_id=memory.id, scope=memory.scope, path=r.path, symbol=r.symbol) for r in refs],
            ignore_conflicts=True,
        )


class Migration(migrations.Migration):
    dependencies = [("coderefs", "0001_code_refs")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
