"""The extraction table (spec §1.1), its updated_at trigger, and the extraction worker's schedule: every
minute, django-q2's worker drains the session summaries that are due (memories.tasks)."""

import django.db.models.deletion
import django.db.models.functions.datetime
from django.db import migrations, models
from django.utils import timezone

TASK = "memories.tasks.extraction_drain"
TOUCH = """CREATE TRIGGER kenfold_touch_updated_at BEFORE UPDATE ON extraction
    FOR EACH ROW EXECUTE FUNCTION kenfold_touch_updated_at();"""
UNTOUCH = "DROP TRIGGER IF EXISTS kenfold_touch_updated_at ON extraction;"


def schedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="memory extraction",
        defaults={
            "func": TASK,
            "schedule_type": "I",
            "minutes": 1,
            "repeats": -1,
            "next_run": timezone.now(),
        },
    )


def unschedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.filter(name="memory extraction").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0009_memory_code_state"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.CreateModel(
            name="Extraction",
            fields=[
                (
                    "source",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.DB_CASCADE,
                        primary_key=True,
                        related_name="extraction",
                        serialize=False,
                        to="memories.memory",
                    ),
                ),
                (
                    "status",
                    models.TextField(
                        choices=[("running", "Running"), ("done", "Done"), ("failed", "Failed")]
                    ),
                ),
                ("attempts", models.IntegerField(db_default=0, default=0)),
                ("model", models.TextField(db_default="", default="")),
                ("candidates", models.IntegerField(db_default=0, default=0)),
                ("stored", models.IntegerField(db_default=0, default=0)),
                ("error", models.TextField(db_default="", default="")),
                ("locked_until", models.DateTimeField(blank=True, null=True)),
                ("next_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ("updated_at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
            ],
            options={
                "db_table": "extraction",
                "indexes": [
                    models.Index(
                        condition=models.Q(("status", "failed")),
                        fields=["next_attempt_at"],
                        name="extraction_retry_due",
                    )
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("status__in", ["running", "done", "failed"])),
                        name="extraction_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("attempts__gte", 0)), name="extraction_attempts_non_negative"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("candidates__gte", 0),
                            ("stored__gte", 0),
                            ("stored__lte", models.F("candidates")),
                        ),
                        name="extraction_counts_valid",
                    ),
                ],
            },
        ),
        migrations.RunSQL(TOUCH, UNTOUCH),
        migrations.RunPython(schedule, unschedule),
    ]
