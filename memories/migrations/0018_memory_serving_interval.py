"""When each memory was served: `active_from` and `ended_at`, for recall's and get_context's `as_of`.

A trigger records them on every change of status, whatever the writer. Existing rows are backfilled with
what history kept: an active or retired memory was served from its creation; a retired one ended when its
successor was written (supersedes), when a consolidation replaced it (the `replaces` edge), or else at its
last update (forget and docs sync change nothing after retiring a memory). Approval times were not kept,
so an approved memory counts from its creation.
"""

from django.db import migrations, models

TRIGGER = """
CREATE OR REPLACE FUNCTION kenfold_serving_interval() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.status = 'active' AND NEW.active_from IS NULL THEN
            NEW.active_from := NEW.created_at;
        END IF;
    ELSIF NEW.status IS DISTINCT FROM OLD.status THEN
        IF NEW.status = 'active' THEN
            NEW.active_from := coalesce(NEW.active_from, now());
            NEW.ended_at := NULL;
        ELSIF NEW.status IN ('superseded', 'deleted') AND NEW.ended_at IS NULL THEN
            NEW.ended_at := now();
        END IF;
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER kenfold_serving_interval BEFORE INSERT OR UPDATE OF status ON memory
    FOR EACH ROW EXECUTE FUNCTION kenfold_serving_interval();
"""

UNTRIGGER = """
DROP TRIGGER IF EXISTS kenfold_serving_interval ON memory;
DROP FUNCTION IF EXISTS kenfold_serving_interval();
"""

# updated_at stays what it was: the backfill is not an edit of the memories.
BACKFILL = """
ALTER TABLE memory DISABLE TRIGGER kenfold_touch_updated_at;
UPDATE memory SET active_from = created_at WHERE status <> 'proposed';
UPDATE memory m SET ended_at = coalesce(
    (SELECT min(s.created_at) FROM memory s WHERE s.supersedes_id = m.id AND s.status <> 'proposed'),
    (SELECT min(e.created_at) FROM memory_edge e WHERE e.dst_id = m.id AND e.relation = 'replaces'),
    m.updated_at)
WHERE m.status IN ('superseded', 'deleted');
ALTER TABLE memory ENABLE TRIGGER kenfold_touch_updated_at;
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0017_quotas_and_audit")]

    operations = [
        migrations.AddField(
            model_name="memory", name="active_from", field=models.DateTimeField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="memory", name="ended_at", field=models.DateTimeField(blank=True, null=True)
        ),
        migrations.RunSQL(TRIGGER, UNTRIGGER),
        migrations.RunSQL(BACKFILL, migrations.RunSQL.noop),
    ]
