"""Fill memory.code_state (memories 0009) from the references' states recorded before the column existed.

The same rule as coderefs.models.STALE_REF: a reference that is gone, or whose symbol changed, is stale;
the worst one (missing before changed) becomes the memory's code state.
"""

from django.db import migrations

FILL = """
UPDATE memory m SET code_state = worst.state
FROM (
    SELECT memory_id, CASE WHEN bool_or(state = 'missing') THEN 'missing' ELSE 'changed' END AS state
    FROM memory_ref
    WHERE state = 'missing' OR (state = 'changed' AND symbol <> '')
    GROUP BY memory_id
) AS worst
WHERE m.id = worst.memory_id
"""


class Migration(migrations.Migration):
    dependencies = [("coderefs", "0002_backfill_refs"), ("memories", "0009_memory_code_state")]

    operations = [migrations.RunSQL(FILL, migrations.RunSQL.noop)]
