"""ApiKey joins access from memories. The table (`api_key`) and its constraints and index stay as
memories' migrations made them: only Django's state moves, so nothing runs against the database."""

import django.db.models.functions.datetime
import django.db.models.functions.text
import django.db.models.lookups
from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models

import kenfold.db_functions


class Migration(migrations.Migration):
    initial = True

    dependencies = [("memories", "0020_served_call")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ApiKey",
                    fields=[
                        (
                            "id",
                            models.UUIDField(
                                db_default=kenfold.db_functions.UUIDv7(),
                                editable=False,
                                primary_key=True,
                                serialize=False,
                            ),
                        ),
                        ("agent", models.TextField()),
                        ("prefix", models.TextField()),
                        ("key_hash", models.BinaryField(unique=True)),
                        ("read_only", models.BooleanField(db_default=False, default=False)),
                        ("label", models.TextField(blank=True, db_default="", default="")),
                        (
                            "projects",
                            ArrayField(base_field=models.TextField(), blank=True, null=True, size=None),
                        ),
                        ("user_memories", models.BooleanField(db_default=True, default=True)),
                        (
                            "created_at",
                            models.DateTimeField(db_default=django.db.models.functions.datetime.Now()),
                        ),
                        ("last_used_at", models.DateTimeField(blank=True, null=True)),
                        ("revoked_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "api_key",
                        "indexes": [models.Index(fields=["agent"], name="api_key_agent")],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(("agent__regex", "^[a-z0-9][a-z0-9._-]{0,63}$")),
                                name="api_key_agent_valid",
                            ),
                            models.CheckConstraint(
                                condition=django.db.models.lookups.Exact(
                                    models.Func(models.F("key_hash"), function="octet_length"), 32
                                ),
                                name="api_key_hash_sha256",
                            ),
                            models.CheckConstraint(
                                condition=django.db.models.lookups.LessThanOrEqual(
                                    django.db.models.functions.text.Length("label"), 64
                                ),
                                name="api_key_label_length",
                            ),
                            models.CheckConstraint(
                                condition=models.Q(
                                    ("projects__isnull", True),
                                    models.Q(("projects", []), _negated=True),
                                    _connector="OR",
                                ),
                                name="api_key_projects_not_empty",
                            ),
                        ],
                    },
                )
            ],
            database_operations=[],
        )
    ]
