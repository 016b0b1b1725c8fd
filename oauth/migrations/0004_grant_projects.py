"""OAuth grants limited to the projects the owner chose on the consent page (issue 38)."""

import django.contrib.postgres.fields
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("oauth", "0003_dashboard_lockout")]

    operations = [
        migrations.AddField(
            model_name="oauthgrant",
            name="projects",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.TextField(), blank=True, null=True, size=None
            ),
        ),
        migrations.AddField(
            model_name="oauthgrant",
            name="user_memories",
            field=models.BooleanField(db_default=True, default=True),
        ),
        migrations.AddConstraint(
            model_name="oauthgrant",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("projects__isnull", True), models.Q(("projects", []), _negated=True), _connector="OR"
                ),
                name="oauth_grant_projects_not_empty",
            ),
        ),
    ]
