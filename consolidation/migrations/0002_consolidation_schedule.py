"""Schedule the consolidation worker every 15 minutes, the first run one interval after installation
(django-q2 runs it in `qcluster`; the job itself does nothing while consolidation is off)."""

from datetime import timedelta

from django.db import migrations
from django.utils import timezone

TASK = "consolidation.tasks.consolidation_tick"


def schedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="consolidation",
        defaults={
            "func": TASK,
            "schedule_type": "I",
            "minutes": 15,
            "repeats": -1,
            "next_run": timezone.now() + timedelta(minutes=15),
        },
    )


def unschedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.filter(name="consolidation").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("consolidation", "0001_proposals"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
