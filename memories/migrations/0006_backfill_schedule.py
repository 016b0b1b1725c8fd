"""Schedule the embedding backfill every five minutes (django-q2 runs it in `qcluster`)."""

from django.db import migrations
from django.utils import timezone

TASK = "memories.tasks.embeddings_backfill"


def schedule(apps, schema_editor) -> None:
    Schedule = apps.get_model("django_q", "Schedule")
    Schedule.objects.update_or_create(
        name="embedding backfill",
        defaults={
            "func": TASK,
            "schedule_type": "I",
            "minutes": 5,
            "repeats": -1,
            "next_run": timezone.now(),
        },
    )


def unschedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.filter(name="embedding backfill").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0005_english_search_vector"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [migrations.RunPython(schedule, unschedule)]
