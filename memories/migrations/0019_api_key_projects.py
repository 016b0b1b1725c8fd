"""API keys limited to projects: the projects a key may read and write, and whether it reads user-wide
memories (issue 38)."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0018_memory_serving_interval"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="projects",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.TextField(), blank=True, null=True, size=None
            ),
        ),
        migrations.AddField(
            model_name="apikey",
            name="user_memories",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddConstraint(
            model_name="apikey",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("projects__isnull", True), models.Q(("projects", []), _negated=True), _connector="OR"
                ),
                name="api_key_projects_not_empty",
            ),
        ),
    ]
