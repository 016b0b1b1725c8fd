"""updated_at is kept current by the database, so every writer (not only the ORM) stamps it."""

from django.db import migrations

TOUCH_FUNCTION = """
CREATE OR REPLACE FUNCTION kenfold_touch_updated_at() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END;
$$;
CREATE TRIGGER kenfold_touch_updated_at BEFORE UPDATE ON memory
    FOR EACH ROW EXECUTE FUNCTION kenfold_touch_updated_at();
"""

DROP = """
DROP TRIGGER IF EXISTS kenfold_touch_updated_at ON memory;
DROP FUNCTION IF EXISTS kenfold_touch_updated_at();
"""


class Migration(migrations.Migration):
    dependencies = [("memories", "0002_memory_schema")]

    operations = [migrations.RunSQL(TOUCH_FUNCTION, DROP)]
