"""The API keys agents use to reach Kenfold (spec §1.15) and the owner's password (§1.16).

Both tables kept their names (`api_key`, `oauth_owner`) when the models moved here from memories and
oauth: the moves changed Django's state only (access/migrations, memories 0021, oauth 0005).
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


class Owner(models.Model):
    """The one owner of this Kenfold (a single row, id 1): the consent page's and the dashboard's password."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    # Argon2id in PHC form ($argon2id$v=19$m=…,t=…,p=…$salt$hash): the parameters travel with the hash.
    password_hash = models.TextField(blank=True, default="")
    password_changed_at = models.DateTimeField(null=True, blank=True)
    # The consent page's wrong passwords and lock.
    failures = models.PositiveIntegerField(default=0)
    locked_until = models.DateTimeField(null=True, blank=True)
    # The dashboard's, counted apart: the consent page is public, and guesses there must not lock the
    # owner out of the local dashboard.
    dashboard_failures = models.PositiveIntegerField(default=0)
    dashboard_locked_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "oauth_owner"
        constraints = [models.CheckConstraint(condition=models.Q(id=1), name="oauth_owner_single_row")]
