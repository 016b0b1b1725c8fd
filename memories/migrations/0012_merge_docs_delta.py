"""Joins two migrations written side by side: the weighted search vectors of project docs and the
get_context snapshots of delta context. Neither depends on the other."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0011_context_snapshot"),
        ("memories", "0011_weighted_search_vectors"),
    ]

    operations = []
