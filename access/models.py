"""The API keys agents use to reach Kenfold (spec §1.15).

The table kept its name (`api_key`) when the model moved here from memories: the move changed Django's
state only (access/migrations/0001_api_key.py, memories/migrations/0021_api_key_to_access.py).
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Now

from kenfold.db_functions import UUIDv7
from kenfold_common.identity import AGENT_NAME_PATTERN


class ApiKey(models.Model):
    """A bearer key for one agent. Only the SHA-256 of the key is stored; the key is shown once."""

    id = models.UUIDField(primary_key=True, db_default=UUIDv7(), editable=False)
    agent = models.TextField()
    prefix = models.TextField()
    key_hash = models.BinaryField(unique=True)
    # Least privilege for integrations that only search: every tool is listed, writes are refused.
    read_only = models.BooleanField(default=False, db_default=False)
    # The owner's own words for where the key is used ("laptop", "CI"), so two keys of one agent can be
    # told apart in listings; never used for identity.
    label = models.TextField(default="", db_default="", blank=True)
    # The projects (normalized identities, kenfold_common.identity) the key may read and write; NULL for
    # every project. Memories of other projects do not exist for it (access.reach).
    projects = ArrayField(models.TextField(), null=True, blank=True)
    # Whether the key reads user-wide memories (the owner's preferences); a project-limited key never
    # writes them.
    user_memories = models.BooleanField(default=True, db_default=True)
    created_at = models.DateTimeField(db_default=Now())
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "api_key"
        constraints = [
            models.CheckConstraint(condition=Q(agent__regex=AGENT_NAME_PATTERN), name="api_key_agent_valid"),
            models.CheckConstraint(
                condition=models.lookups.Exact(models.Func(F("key_hash"), function="octet_length"), 32),
                name="api_key_hash_sha256",
            ),
            models.CheckConstraint(
                condition=models.lookups.LessThanOrEqual(models.functions.Length("label"), 64),
                name="api_key_label_length",
            ),
            # An empty list would read as "no project" to one reader and "every project" to another.
            models.CheckConstraint(
                condition=Q(projects__isnull=True) | ~Q(projects=[]), name="api_key_projects_not_empty"
            ),
        ]
        indexes = [models.Index(fields=["agent"], name="api_key_agent")]

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None
