"""The dashboard's wrong passwords and lock, counted apart from the consent page's (issue 37)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("oauth", "0002_prune_schedule")]

    operations = [
        migrations.AddField(
            model_name="owner", name="dashboard_failures", field=models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(
            model_name="owner",
            name="dashboard_locked_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
