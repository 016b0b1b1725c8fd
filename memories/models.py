"""Memories and the edges between them (spec §1.1); the API keys agents use are in access.models.

Every invariant that must hold for any writer is a database constraint, not only Python validation:
the server is not the only thing that ever writes to this database (imports, psql, future workers).
"""

import uuid
from datetime import datetime

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import MD5, Now
from pgvector.django import VectorField

from kenfold.db_functions import ContentKey, EnglishSearchTsVector, SearchTsVector, UUIDv7


class MemoryType(models.TextChoices):
    SEMANTIC = "semantic"
    EPISODIC = "episodic"
    PROJECT = "project"
    PREFERENCE = "preference"
    CODEBASE = "codebase"
    TEMPORARY = "temporary"


class Trust(models.TextChoices):
    USER = "user"
    AGENT = "agent"
    EXTERNAL = "external"


class Status(models.TextChoices):
    PROPOSED = "proposed"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    DELETED = "deleted"


# Not retired: served (active) or waiting for the owner (proposed). Such memories deduplicate new writes,
# get vectors and have their code references checked.
LIVE_STATUSES = (Status.ACTIVE, Status.PROPOSED)


class CodeState(models.TextChoices):
    """What the memory's code references say, worst first; NULL while the code it names still holds."""

    MISSING = "missing"  # a referenced file or symbol is gone
    CHANGED = "changed"  # a referenced symbol changed (a changed file alone is not stale)


# "Served to agents": active and not expired. The one rule, in the two forms the code needs: a queryset
# method for the ORM and a SQL condition for the search statements (on `memory` rows or on the copies of
# status and expiry that each `memory_embedding` row carries). Both compare with the caller's `now`.
def unexpired_sql(alias: str, now_param: str = "now") -> str:
    return f"({alias}.expires_at IS NULL OR {alias}.expires_at > %({now_param})s)"


def served_sql(alias: str, now_param: str = "now", *, history: bool = False) -> str:
    """Served at `now_param`. With `history` (an `as_of` read), `now_param` is a past time and the test is
    what was served then: active since before it (active_from) and not retired (ended_at) or expired by it.
    A retired memory whose end is unknown (ended_at NULL, rows older than the column) counts as never
    served, so history never shows more than was served."""
    if not history:
        return f"{alias}.status = '{Status.ACTIVE}' AND {unexpired_sql(alias, now_param)}"
    return (
        f"{alias}.active_from <= %({now_param})s AND ({alias}.ended_at > %({now_param})s "
        f"OR ({alias}.ended_at IS NULL AND {alias}.status = '{Status.ACTIVE}')) AND {unexpired_sql(alias, now_param)}"
    )


# The generated search columns and the deduplication key: no view shows them (MemoryQuerySet.for_views).
NOT_IN_VIEWS = ("content_tsv", "content_tsv_en", "content_key")


class MemoryQuerySet(models.QuerySet["Memory"]):
    def unexpired(self, now: datetime) -> "MemoryQuerySet":
        return self.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))

    def served(self, now: datetime) -> "MemoryQuerySet":
        """What agents may see: active and not expired."""
        return self.unexpired(now).filter(status=Status.ACTIVE)

    def for_views(self) -> "MemoryQuerySet":
        """Without the generated search columns: no view shows them, and they are long (two text-search
        vectors of the whole content per memory) to send, parse and keep for every row."""
        return self.defer(*NOT_IN_VIEWS)


class Memory(models.Model):
    id = models.UUIDField(primary_key=True, db_default=UUIDv7(), editable=False)
    type = models.TextField(choices=MemoryType.choices)
    # "user" or "project:<normalized remote>" (or "repo:<id>"); see kenfold_common.identity.
    scope = models.TextField()
    content = models.TextField()
    attrs = models.JSONField(default=dict, db_default=models.Value({}, output_field=models.JSONField()))

    source_agent = models.TextField()
    source_session = models.TextField(null=True, blank=True)
    evidence_uri = models.TextField(null=True, blank=True)
    trust = models.TextField(choices=Trust.choices, default=Trust.AGENT, db_default=Trust.AGENT)
    confidence = models.FloatField(default=0.5, db_default=0.5)

    status = models.TextField(choices=Status.choices, default=Status.ACTIVE, db_default=Status.ACTIVE)
    # No cascade (the database refuses the delete): history must never vanish because the memory it
    # replaced was removed.
    supersedes = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        related_name="superseded_by",
        db_index=False,
    )

    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    # Kept current by the kenfold_touch_updated_at trigger, so raw SQL updates are stamped too.
    updated_at = models.DateTimeField(db_default=Now())
    # When the memory was first served (created active, or approved) and when it stopped being served
    # (superseded, forgotten, rejected): what recall and get_context's `as_of` read. Set by the
    # kenfold_serving_interval trigger on every change of status, so every writer (consolidation, docs
    # sync, imports, psql) records them; expiry needs no column, expires_at is its time.
    active_from = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    content_tsv = models.GeneratedField(
        expression=SearchTsVector(F("content"), F("attrs")), output_field=SearchVectorField(), db_persist=True
    )
    # Stemmed English with identifiers split: finds `retry` for `retries`, `refresh session` for
    # `refreshSession`. The `simple` vector above keeps exact words, paths and Korean.
    content_tsv_en = models.GeneratedField(
        expression=EnglishSearchTsVector(F("content"), F("attrs")),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    content_key = models.GeneratedField(
        expression=ContentKey(F("content")), output_field=models.TextField(), db_persist=True
    )
    # Written only by the coderefs app, from its references' states (its rule of what is stale), so that
    # ranking, listings and views read staleness from the memory row without knowing about references.
    code_state = models.TextField(choices=CodeState.choices, null=True, blank=True)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        db_table = "memory"
        constraints = [
            models.CheckConstraint(condition=Q(type__in=MemoryType.values), name="memory_type_valid"),
            models.CheckConstraint(condition=Q(trust__in=Trust.values), name="memory_trust_valid"),
            models.CheckConstraint(condition=Q(status__in=Status.values), name="memory_status_valid"),
            models.CheckConstraint(
                condition=Q(code_state__isnull=True) | Q(code_state__in=CodeState.values),
                name="memory_code_state_valid",
            ),
            models.CheckConstraint(condition=~Q(scope=""), name="memory_scope_not_empty"),
            models.CheckConstraint(condition=~Q(content=""), name="memory_content_not_empty"),
            models.CheckConstraint(condition=~Q(source_agent=""), name="memory_source_agent_not_empty"),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_range"
            ),
            models.CheckConstraint(
                condition=Q(valid_from__isnull=True)
                | Q(valid_to__isnull=True)
                | Q(valid_to__gte=F("valid_from")),
                name="memory_validity_ordered",
            ),
            models.CheckConstraint(
                condition=~Q(type=MemoryType.TEMPORARY) | Q(expires_at__isnull=False),
                name="memory_temporary_expires",
            ),
            models.CheckConstraint(
                condition=Q(supersedes__isnull=True) | ~Q(supersedes=F("id")),
                name="memory_not_self_superseding",
            ),
        ]
        indexes = [
            models.Index(
                F("scope"),
                F("type"),
                F("created_at").desc(),
                condition=Q(status="active"),
                name="memory_active_scope",
            ),
            # The newest live memories of a scope in order: the lexical search's window for common words.
            models.Index(
                F("scope"), F("created_at").desc(), condition=Q(status="active"), name="memory_active_recent"
            ),
            GinIndex(fields=["content_tsv"], name="memory_content_tsv"),
            GinIndex(fields=["content_tsv_en"], name="memory_content_tsv_en"),
            # Only live rows are searched by similarity, so the trigram index skips retired ones.
            GinIndex(
                fields=["content"],
                opclasses=["gin_trgm_ops"],
                condition=Q(status="active"),
                name="memory_content_trgm",
            ),
            models.Index(
                fields=["expires_at"], condition=Q(expires_at__isnull=False), name="memory_expires_at"
            ),
            models.Index(
                fields=["supersedes"], condition=Q(supersedes__isnull=False), name="memory_supersedes"
            ),
            models.Index(
                fields=["source_session"],
                condition=Q(source_session__isnull=False),
                name="memory_source_session",
            ),
            models.Index(
                fields=["created_at"],
                condition=Q(type="episodic", status="active"),
                name="memory_active_episodes",
            ),
            # Dedup lookups by (scope, type, key). md5 of the key, not the key itself: an 8000-character
            # memory of incompressible text overflows the btree entry limit (about 2700 bytes). Lookups
            # compare the md5 and then the full key, so a collision cannot merge two memories.
            models.Index(
                F("scope"),
                F("type"),
                MD5("content_key"),
                condition=Q(status__in=LIVE_STATUSES),
                name="memory_dedupe",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.id}"


class MemoryEdge(models.Model):
    """A typed link between two memories: `derived_from` (fact → session summary), `replaces`."""

    pk = models.CompositePrimaryKey("src", "relation", "dst")
    src = models.ForeignKey(Memory, on_delete=models.DB_CASCADE, related_name="edges_out", db_index=False)
    relation = models.TextField()
    dst = models.ForeignKey(Memory, on_delete=models.DB_CASCADE, related_name="edges_in", db_index=False)
    weight = models.FloatField(default=1.0, db_default=1.0)
    source_agent = models.TextField()
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "memory_edge"
        constraints = [
            models.CheckConstraint(condition=~Q(relation=""), name="memory_edge_relation_not_empty"),
            models.CheckConstraint(condition=~Q(src=F("dst")), name="memory_edge_not_self"),
        ]
        indexes = [models.Index(fields=["dst", "relation"], name="memory_edge_dst")]


class MemoryEmbedding(models.Model):
    """A memory's vector from one embedding model; any dimension, several models side by side.

    Search compares only vectors of the configured model, so switching models needs no migration: the
    backfill embeds everything again under the new name while the old vectors keep serving nobody. Each
    model gets its own partial HNSW index on `embedding::vector(D)` (memories.search.embedding_store).
    """

    pk = models.CompositePrimaryKey("memory", "model")
    memory = models.ForeignKey(Memory, on_delete=models.DB_CASCADE, related_name="embeddings", db_index=False)
    model = models.TextField()
    embedding = VectorField()
    # md5 of the content that was embedded: a vector computed for text that changed since (a redaction,
    # an edit) is never written over the new text.
    content_md5 = models.TextField()
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "memory_embedding"
        constraints = [
            models.CheckConstraint(condition=~Q(model=""), name="memory_embedding_model_not_empty"),
            models.CheckConstraint(
                condition=models.lookups.GreaterThan(models.Func(F("embedding"), function="vector_dims"), 0),
                name="memory_embedding_has_dimensions",
            ),
        ]
        indexes = [models.Index(fields=["model", "memory"], name="memory_embedding_model")]


class ExtractionStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Extraction(models.Model):
    """One session summary's extraction (spec §1.1 `extraction`, §1.12). A summary without a row is pending.

    ``attempts`` numbers the claims: a worker finishes or fails only the row of its own attempt, so a
    worker whose lease expired (and whose summary another worker claimed meanwhile) cannot overwrite the
    newer attempt's result.
    """

    source = models.OneToOneField(
        Memory, primary_key=True, on_delete=models.DB_CASCADE, related_name="extraction"
    )
    status = models.TextField(choices=ExtractionStatus.choices)
    attempts = models.IntegerField(default=0, db_default=0)
    model = models.TextField(default="", db_default="")
    # Candidates that passed validation, and how many of them were stored (new in their scope).
    candidates = models.IntegerField(default=0, db_default=0)
    stored = models.IntegerField(default=0, db_default=0)
    error = models.TextField(default="", db_default="")
    # Items of the model's answer refused by the checks (or the whole answer, `invalid_answer`), counted
    # by the kind of refusal ({"evidence_not_in_session": 2}); never the refused text.
    refused = models.JSONField(default=dict, db_default=Value({}, output_field=models.JSONField()))
    locked_until = models.DateTimeField(null=True, blank=True)
    # When a failed extraction is retried; NULL on a failed row means Kenfold gave up.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(db_default=Now())
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "extraction"
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ExtractionStatus.values), name="extraction_status_valid"
            ),
            models.CheckConstraint(condition=Q(attempts__gte=0), name="extraction_attempts_non_negative"),
            models.CheckConstraint(
                condition=Q(candidates__gte=0) & Q(stored__gte=0) & Q(stored__lte=F("candidates")),
                name="extraction_counts_valid",
            ),
        ]
        indexes = [
            models.Index(
                fields=["next_attempt_at"], condition=Q(status="failed"), name="extraction_retry_due"
            )
        ]


class ContextSnapshot(models.Model):
    """What one get_context answer left the agent holding: memory id → hash of the view it holds.

    The agent carries only a signed reference to this row (the opaque `state`), so a state stays about
    forty characters however much it stands for, and any replica can read it. Rows are never updated: a
    delta call writes a new snapshot, so retrying with an older state still means what it meant. They
    expire (memories.delta.STATE_TTL) and are pruned as new ones are written.
    """

    # Random, not time-ordered: a state names its row, and ids of other callers' rows must not be guessable.
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # The scope the answer was assembled for (its read scopes follow from it); a state answers only there.
    scope = models.TextField()
    held = models.JSONField(default=dict)
    created_at = models.DateTimeField(db_default=Now())
    expires_at = models.DateTimeField()

    class Meta:
        db_table = "context_snapshot"
        constraints = [
            models.CheckConstraint(condition=~Q(scope=""), name="context_snapshot_scope_not_empty"),
        ]
        indexes = [models.Index(fields=["expires_at"], name="context_snapshot_expires_at")]


class CredentialQuota(models.Model):
    """The owner's own write quotas for one credential (`key:<id>` or `grant:<id>`), over the defaults.

    Keyed by the credential string rather than a column on each credential table: keys and OAuth grants
    live in different apps, and one table lets the quota check read both with one lookup. NULL means the
    default (KENFOLD_QUOTA_WRITES_PER_MINUTE, KENFOLD_QUOTA_MEMORIES_PER_DAY), 0 means no limit.
    """

    credential = models.TextField(primary_key=True)
    writes_per_minute = models.IntegerField(null=True, blank=True)
    memories_per_day = models.IntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "credential_quota"
        constraints = [
            models.CheckConstraint(
                condition=Q(credential__regex=r"^(key|grant):.+$"), name="credential_quota_credential_valid"
            ),
            models.CheckConstraint(
                condition=Q(writes_per_minute__isnull=True) | Q(writes_per_minute__gte=0),
                name="credential_quota_writes_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(memories_per_day__isnull=True) | Q(memories_per_day__gte=0),
                name="credential_quota_memories_non_negative",
            ),
        ]


class QuotaCounter(models.Model):
    """How much one credential wrote in one fixed window (a UTC minute for writes, a UTC day for memories).

    Counted in PostgreSQL, inside the write's own transaction (memories.quotas), so every server process
    on the database shares the count and a refused write leaves no trace. `quota` is the limit in force
    at the last count, so the dashboard can say who is near it without recomputing overrides.
    """

    pk = models.CompositePrimaryKey("credential", "kind", "window_start")
    credential = models.TextField()
    kind = models.TextField()
    window_start = models.DateTimeField()
    count = models.IntegerField()
    quota = models.IntegerField()

    class Meta:
        db_table = "quota_counter"
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["writes", "memories"]), name="quota_counter_kind_valid"
            ),
            models.CheckConstraint(condition=Q(count__gte=0), name="quota_counter_count_non_negative"),
        ]


class MemoryAction(models.TextChoices):
    CREATED = "created"
    SUPERSEDED = "superseded"
    FORGOTTEN = "forgotten"
    APPROVED = "approved"
    REJECTED = "rejected"
    REDACTED = "redacted"
    IMPORTED = "imported"
    RESUMED = "resumed"


class MemoryEvent(models.Model):
    """One change to one memory: who (agent and credential), what, when (the audit trail).

    `memory_id` is not a foreign key: the trail of a memory outlives the row, and an import can record
    events for rows it inserts in the same statement batch. `detail` holds ids and short reasons, never
    content or credentials.
    """

    id = models.BigAutoField(primary_key=True)
    memory_id = models.UUIDField()
    action = models.TextField(choices=MemoryAction.choices)
    agent = models.TextField()
    credential = models.TextField(null=True, blank=True)
    at = models.DateTimeField(db_default=Now())
    detail = models.JSONField(default=dict, db_default=Value({}, output_field=models.JSONField()))

    class Meta:
        db_table = "memory_event"
        constraints = [
            models.CheckConstraint(
                condition=Q(action__in=MemoryAction.values), name="memory_event_action_valid"
            ),
            models.CheckConstraint(condition=~Q(agent=""), name="memory_event_agent_not_empty"),
        ]
        indexes = [
            models.Index(fields=["memory_id", "at"], name="memory_event_memory"),
            models.Index(fields=["at"], name="memory_event_at"),
            models.Index(
                fields=["credential", "at"],
                condition=Q(credential__isnull=False),
                name="memory_event_credential",
            ),
        ]


class ServedCall(models.Model):
    """One recall or get_context answer: the memories it served, in rank order, and to whom.

    Ids only, never content or the query: the table says which memories are read and used, not what
    anyone asked. Kept KENFOLD_USAGE_DAYS and at most KENFOLD_USAGE_MAX_ROWS rows (memories.usage).
    """

    id = models.BigAutoField(primary_key=True)
    served_at = models.DateTimeField()
    tool = models.TextField()
    agent = models.TextField()
    # Caller.credential (`key:<id>`, `grant:<id>`); NULL for stdio and KENFOLD_AUTH=none.
    credential = models.TextField(null=True, blank=True)
    # The client's `_meta` kenfold/session_id (the session hook sends it), when known.
    session_id = models.TextField(null=True, blank=True)
    # Rank r is position r - 1.
    memory_ids = ArrayField(models.UUIDField())
    # The subset the agent reused: said by the session hook or by the agent (`used` on a later call).
    used_ids = ArrayField(
        models.UUIDField(), default=list, db_default=Value([], output_field=ArrayField(models.UUIDField()))
    )

    class Meta:
        db_table = "served_call"
        constraints = [
            models.CheckConstraint(
                condition=Q(tool__in=("recall", "get_context")), name="served_call_tool_valid"
            ),
            models.CheckConstraint(
                condition=Q(used_ids__contained_by=F("memory_ids")), name="served_call_used_served"
            ),
        ]
        indexes = [
            models.Index(fields=["served_at"], name="served_call_served_at"),
            # Marking a reuse looks up the caller's latest answers.
            models.Index(F("agent"), F("id").desc(), name="served_call_agent_recent"),
        ]
