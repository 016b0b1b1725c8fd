"""Owner moves to the access app (access/migrations/0002_owner.py): oauth forgets the model, the table
(`oauth_owner`) stays where it is, with its row and constraint."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("oauth", "0004_grant_projects"), ("access", "0002_owner")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="Owner")], database_operations=[]
        )
    ]
