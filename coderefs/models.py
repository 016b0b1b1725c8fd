"""References from memories to files and symbols, and what clients last saw of them (spec §1.1 memory_ref)."""

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from kenfold_common import coderefs as refs
from memories.models import Memory


class RefState(models.TextChoices):
    # The names are shared with the sync client (kenfold_common.coderefs).
    PENDING = refs.PENDING
    CURRENT = refs.CURRENT
    CHANGED = refs.CHANGED
    MISSING = refs.MISSING
    UNRESOLVED = refs.UNRESOLVED


class CodeRef(models.Model):
    pk = models.CompositePrimaryKey("memory", "path", "symbol")
    memory = models.ForeignKey(Memory, on_delete=models.DB_CASCADE, related_name="code_refs", db_index=False)
    scope = models.TextField()
    path = models.TextField(default="", db_default="", blank=True)
    symbol = models.TextField(default="", db_default="", blank=True)
    state = models.TextField(choices=RefState.choices, default=RefState.PENDING, db_default=RefState.PENDING)
    resolved_path = models.TextField(null=True, blank=True)
    anchor_hash = models.TextField(null=True, blank=True)
    anchor_commit = models.TextField(null=True, blank=True)
    checked_commit = models.TextField(null=True, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "memory_ref"
        constraints = [
            models.CheckConstraint(
                condition=Q(scope__startswith="project:") | Q(scope__startswith="repo:"),
                name="memory_ref_scope",
            ),
            models.CheckConstraint(condition=~Q(path="") | ~Q(symbol=""), name="memory_ref_target"),
            models.CheckConstraint(condition=Q(state__in=RefState.values), name="memory_ref_state_valid"),
            # An anchor is a hash seen at a commit: one without the other means nothing.
            models.CheckConstraint(
                condition=Q(anchor_hash__isnull=True, anchor_commit__isnull=True)
                | Q(anchor_hash__isnull=False, anchor_commit__isnull=False),
                name="memory_ref_anchor_complete",
            ),
        ]
        indexes = [models.Index(fields=["scope", "path", "symbol"], name="memory_ref_target_idx")]


# The stale rule, once, in SQL: gone is stale; a changed symbol is stale; a changed file alone is not
# (files change all the time). A memory's `code_state` is its worst stale reference (coderefs.services).
STALE_REF = Q(state=RefState.MISSING) | (Q(state=RefState.CHANGED) & ~Q(symbol=""))
