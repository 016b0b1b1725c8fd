"""Consolidation proposals (spec §1.1 `consolidation`, §1.14): what the chat model proposes to retire or
merge, and what the owner decided.

One table holds every judgement, including the pairs judged distinct and the proposals the owner
rejected: the member set is unique, so a set of memories is judged once, ever, and a rejected pair is
never proposed again.
"""

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Now

from kenfold.db_functions import UUIDv7
from memories.models import Memory


class Kind(models.TextChoices):
    DUPLICATE = "duplicate"  # both say the same: retire all but `keep`
    CONFLICT = "conflict"  # they contradict: retire the older, keep the newer
    DIGEST = "digest"  # old session summaries replaced by one digest memory
    DISTINCT = "distinct"  # judged different (or the answer was unusable): nothing to do, never re-asked


class ProposalStatus(models.TextChoices):
    PENDING = "pending"
    APPLIED = "applied"
    REJECTED = "rejected"
    DISMISSED = "dismissed"  # nothing to propose: distinct, an unusable answer, a digest that failed checks
    STALE = "stale"  # a member changed (retired, expired) after the proposal was made


DECIDED = (ProposalStatus.APPLIED, ProposalStatus.REJECTED, ProposalStatus.DISMISSED, ProposalStatus.STALE)


class Consolidation(models.Model):
    id = models.UUIDField(primary_key=True, db_default=UUIDv7(), editable=False)
    kind = models.TextField(choices=Kind.choices)
    scope = models.TextField()
    # Sorted and distinct (services.proposal_insert), so one set of memories has one spelling and the
    # unique index below makes "judged before" a constraint, not a lookup.
    member_ids = ArrayField(models.UUIDField())
    keep_id = models.UUIDField(null=True, blank=True)
    content = models.TextField(default="", db_default="", blank=True)
    reason = models.TextField(default="", db_default="", blank=True)
    # Set when the model's answer was refused: the kind of refusal (`invalid_answer`, `digest_secret`, ...),
    # counted by `consolidate status`; the answer itself is never kept.
    refused = models.TextField(default="", db_default="", blank=True)
    model = models.TextField()
    status = models.TextField(
        choices=ProposalStatus.choices, default=ProposalStatus.PENDING, db_default=ProposalStatus.PENDING
    )
    result = models.ForeignKey(
        Memory, null=True, blank=True, on_delete=models.DB_SET_NULL, related_name="+", db_index=False
    )
    decided_by = models.TextField(null=True, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    # The owner's reason for a rejection (the model's reason is `reason`).
    decision_note = models.TextField(default="", db_default="", blank=True)
    created_at = models.DateTimeField(db_default=Now())
    # Kept current by the kenfold_touch_updated_at trigger.
    updated_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "consolidation"
        constraints = [
            models.CheckConstraint(condition=Q(kind__in=Kind.values), name="consolidation_kind_valid"),
            models.CheckConstraint(
                condition=Q(status__in=ProposalStatus.values), name="consolidation_status_valid"
            ),
            models.CheckConstraint(condition=~Q(model=""), name="consolidation_model_not_empty"),
            models.CheckConstraint(condition=~Q(scope=""), name="consolidation_scope_not_empty"),
            models.CheckConstraint(
                condition=models.lookups.GreaterThanOrEqual(
                    models.Func(F("member_ids"), function="cardinality", output_field=models.IntegerField()),
                    2,
                ),
                name="consolidation_two_members",
            ),
            models.CheckConstraint(
                condition=Q(keep_id__isnull=False, kind__in=[Kind.DUPLICATE, Kind.CONFLICT])
                | Q(keep_id__isnull=True, kind__in=[Kind.DIGEST, Kind.DISTINCT]),
                name="consolidation_keep_iff_pair",
            ),
            models.CheckConstraint(
                condition=Q(keep_id__isnull=True)
                | models.lookups.IsNull(
                    models.Func(
                        F("member_ids"),
                        F("keep_id"),
                        function="array_position",
                        output_field=models.IntegerField(),
                    ),
                    False,
                ),
                name="consolidation_keep_is_member",
            ),
            models.CheckConstraint(
                condition=Q(kind=Kind.DIGEST, content__gt="") | (~Q(kind=Kind.DIGEST) & Q(content="")),
                name="consolidation_content_iff_digest",
            ),
            models.CheckConstraint(
                condition=~Q(kind=Kind.DISTINCT) | Q(status=ProposalStatus.DISMISSED),
                name="consolidation_distinct_dismissed",
            ),
            models.UniqueConstraint(fields=["member_ids"], name="consolidation_member_set_once"),
        ]
        indexes = [
            models.Index(fields=["created_at"], condition=Q(status="pending"), name="consolidation_pending"),
            GinIndex(fields=["member_ids"], name="consolidation_members"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.id}"


class ConsolidationScan(models.Model):
    """A memory whose look-alikes were searched, with the vectors of ``model`` ('' when none were used).

    A run searches only memories without a scan (the oldest first, a bounded batch at a time): searching
    every memory on every run grew with the store (docs/benchmarks.md). Each pair is still found, by
    the later of its two memories to be scanned. Deciding a proposal removes its members' scans, so a pair
    left out while one of them was held by that proposal is found again; a new embedding model scans
    everything again.
    """

    pk = models.CompositePrimaryKey("memory", "model")
    memory = models.ForeignKey(Memory, on_delete=models.DB_CASCADE, related_name="+", db_index=False)
    model = models.TextField(blank=True)
    scanned_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "consolidation_scan"
