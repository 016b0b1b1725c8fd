"""The owner's golden questions (memory CI): per project, a question and the memories that must come back
in its top k; and each scoring of them (a run) with what every question got.

Results copy the question's text and k, so a run's history stays readable after a question is removed.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from kenfold.db_functions import UUIDv7

MAX_K = 50  # recall's own limit


class Trigger(models.TextChoices):
    MANUAL = "manual"  # `eval run` or the dashboard's "Run now"
    CONSOLIDATION = "consolidation"  # a consolidation proposal was applied
    IMPORT = "import"  # an archive import added memories or edges
    MODEL_SWITCH = "model_switch"  # the configured embedding models changed and their vectors are complete
    REINDEX = "reindex"  # `manage.py reindex`


class GoldenQuestion(models.Model):
    id = models.UUIDField(primary_key=True, db_default=UUIDv7(), editable=False)
    # The stored scope recall reads for the project (`project:…`, or `user`), with the user-wide memories.
    scope = models.TextField()
    query = models.TextField()
    expected_ids = ArrayField(models.UUIDField())
    k = models.PositiveSmallIntegerField(default=5, db_default=5)
    created_by = models.TextField()
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "eval_question"
        indexes = [models.Index(fields=["scope", "created_at"], name="eval_question_scope")]
        constraints = [
            models.CheckConstraint(condition=Q(k__gte=1, k__lte=MAX_K), name="eval_question_k_range"),
            models.CheckConstraint(condition=Q(expected_ids__len__gte=1), name="eval_question_expects"),
        ]


class EvalRun(models.Model):
    """One scoring of a project's questions. recall_at_k: the mean over questions of the share of their
    expected memories found in their top k; mrr: the mean of 1 / the rank of the first one found."""

    id = models.UUIDField(primary_key=True, db_default=UUIDv7(), editable=False)
    scope = models.TextField()
    trigger = models.TextField(choices=Trigger.choices)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    questions = models.PositiveIntegerField()
    passed = models.PositiveIntegerField()  # every expected memory in the top k
    recall_at_k = models.FloatField()
    mrr = models.FloatField()
    # The embedding models configured when it ran: a later change of them is a model switch.
    models = ArrayField(models.TextField(), default=list)

    class Meta:
        db_table = "eval_run"
        indexes = [models.Index(fields=["scope", "started_at"], name="eval_run_scope_started")]


class EvalResult(models.Model):
    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="results")
    question = models.ForeignKey(GoldenQuestion, null=True, on_delete=models.SET_NULL, related_name="+")
    query = models.TextField()
    k = models.PositiveSmallIntegerField()
    # The ids scored: each expected memory, or the active memory that replaced it (supersedes, replaces).
    expected_ids = ArrayField(models.UUIDField())
    found = models.PositiveSmallIntegerField()  # how many of them were in the top k
    rank = models.PositiveSmallIntegerField(null=True)  # 1-based rank of the first one found
    top_ids = ArrayField(models.UUIDField())  # what recall returned, best first (what came instead)

    class Meta:
        db_table = "eval_result"
