"""Owner (the owner's password and its lockouts) joins access from oauth. The table (`oauth_owner`) and
its single-row constraint stay as oauth's migrations made them: only Django's state moves."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("access", "0001_api_key"), ("oauth", "0004_grant_projects")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Owner",
                    fields=[
                        (
                            "id",
                            models.PositiveSmallIntegerField(default=1, primary_key=True, serialize=False),
                        ),
                        ("password_hash", models.TextField(blank=True, default="")),
                        ("password_changed_at", models.DateTimeField(blank=True, null=True)),
                        ("failures", models.PositiveIntegerField(default=0)),
                        ("locked_until", models.DateTimeField(blank=True, null=True)),
                        ("dashboard_failures", models.PositiveIntegerField(default=0)),
                        ("dashboard_locked_until", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "oauth_owner",
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(("id", 1)), name="oauth_owner_single_row"
                            )
                        ],
                    },
                )
            ],
            database_operations=[],
        )
    ]
