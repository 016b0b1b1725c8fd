"""ApiKey moves to the access app (access/migrations/0001_api_key.py): memories forgets the model, the
table (`api_key`) stays where it is, with its rows, constraints and index."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("memories", "0020_served_call"), ("access", "0001_api_key")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="ApiKey")], database_operations=[]
        )
    ]
