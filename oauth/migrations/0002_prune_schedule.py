"""Prune expired OAuth codes and tokens hourly (django-q2 runs it in `qcluster`)."""

from django.db import migrations
from django.utils import timezone

TASK = "oauth.tasks.prune_expired"


def schedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="oauth prune",
        defaults={"func": TASK, "schedule_type": "H", "repeats": -1, "next_run": timezone.now()},
    )


def unschedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.filter(name="oauth prune").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("oauth", "0001_initial"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]
    operations = [migrations.RunPython(schedule, unschedule)]
