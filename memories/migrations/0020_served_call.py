"""Which memories agents were served and reused (memories.usage), pruned hourly by the worker."""

import django.contrib.postgres.fields
from django.db import migrations, models
from django.utils import timezone

TASK = "memories.tasks.usage_prune_old"


def schedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.update_or_create(
        name="usage prune",
        defaults={"func": TASK, "schedule_type": "H", "repeats": -1, "next_run": timezone.now()},
    )


def unschedule(apps, schema_editor) -> None:
    apps.get_model("django_q", "Schedule").objects.filter(name="usage prune").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0019_api_key_projects"),
        ("django_q", "0019_alter_task_options_alter_ormq_key_alter_ormq_lock_and_more"),
    ]

    operations = [
        migrations.CreateModel(
            name="ServedCall",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("served_at", models.DateTimeField()),
                ("tool", models.TextField()),
                ("agent", models.TextField()),
                ("credential", models.TextField(blank=True, null=True)),
                ("session_id", models.TextField(blank=True, null=True)),
                ("memory_ids", django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField())),
                (
                    "used_ids",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.UUIDField(),
                        db_default=models.Value(
                            [],
                            output_field=django.contrib.postgres.fields.ArrayField(
                                base_field=models.UUIDField()
                            ),
                        ),
                        default=list,
                    ),
                ),
            ],
            options={
                "db_table": "served_call",
                "indexes": [
                    models.Index(fields=["served_at"], name="served_call_served_at"),
                    models.Index(
                        models.F("agent"),
                        models.OrderBy(models.F("id"), descending=True),
                        name="served_call_agent_recent",
                    ),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("tool__in", ("recall", "get_context"))),
                        name="served_call_tool_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("used_ids__contained_by", models.F("memory_ids"))),
                        name="served_call_used_served",
                    ),
                ],
            },
        ),
        migrations.RunPython(schedule, unschedule),
    ]
