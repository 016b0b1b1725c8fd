"""The owner's dashboard sessions, in PostgreSQL so that any worker of any replica can serve the next page.

The cookie carries a random token; only its SHA-256 is stored, so a database leak opens no session.
"""

from django.db import models
from django.db.models.functions import Now


class DashboardSession(models.Model):
    token_hash = models.CharField(max_length=64, primary_key=True)
    # Compared with the form's `csrf` field on every POST (constant time).
    csrf_token = models.CharField(max_length=64)
    # access.password.owner_stamp() at login: a password change ends the session.
    owner_stamp = models.CharField(max_length=16)
    created_at = models.DateTimeField(db_default=Now())
    last_seen_at = models.DateTimeField(db_default=Now())
    # Messages shown once on the next page ("approved", "already decided"), as [level, text] pairs.
    flash = models.JSONField(default=list)

    class Meta:
        db_table = "dashboard_session"
        indexes = [models.Index(fields=["created_at"], name="dashboard_session_created")]
