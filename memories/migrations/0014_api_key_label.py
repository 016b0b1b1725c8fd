"""API keys get an optional label, so the owner can tell two keys of one agent apart (issue 35)."""

import django.db.models.functions.text
import django.db.models.lookups
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0013_embedding_inline_storage"),
    ]

    operations = [
        migrations.AddField(
            model_name="apikey",
            name="label",
            field=models.TextField(blank=True, db_default="", default=""),
        ),
        migrations.AddConstraint(
            model_name="apikey",
            constraint=models.CheckConstraint(
                condition=django.db.models.lookups.LessThanOrEqual(
                    django.db.models.functions.text.Length("label"), 64
                ),
                name="api_key_label_length",
            ),
        ),
    ]
