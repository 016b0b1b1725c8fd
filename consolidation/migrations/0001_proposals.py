"""The consolidation table (spec §1.1 `consolidation`) and its updated_at trigger."""

import django.contrib.postgres.fields
import django.contrib.postgres.indexes
import django.db.models.deletion
import django.db.models.functions.datetime
import django.db.models.lookups
from django.db import migrations, models

import kenfold.db_functions

TOUCH = """CREATE TRIGGER kenfold_touch_updated_at BEFORE UPDATE ON consolidation
    FOR EACH ROW EXECUTE FUNCTION kenfold_touch_updated_at();"""
UNTOUCH = "DROP TRIGGER IF EXISTS kenfold_touch_updated_at ON consolidation;"


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("memories", "0010_extraction"),
    ]

    operations = [
        migrations.CreateModel(
            name="Consolidation",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        db_default=kenfold.db_functions.UUIDv7(),
                        editable=False,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                (
                    "kind",
                    models.TextField(
                        choices=[
                            ("duplicate", "Duplicate"),
                            ("conflict", "Conflict"),
                            ("digest", "Digest"),
                            ("distinct", "Distinct"),
                        ]
                    ),
                ),
                ("scope", models.TextField()),
                ("member_ids", django.contrib.postgres.fields.ArrayField(base_field=models.UUIDField())),
                ("keep_id", models.UUIDField(blank=True, null=True)),
                ("content", models.TextField(blank=True, db_default="", default="")),
                ("reason", models.TextField(blank=True, db_default="", default="")),
                ("model", models.TextField()),
                (
                    "status",
                    models.TextField(
                        choices=[
                            ("pending", "Pending"),
                            ("applied", "Applied"),
                            ("rejected", "Rejected"),
                            ("dismissed", "Dismissed"),
                            ("stale", "Stale"),
                        ],
                        db_default="pending",
                        default="pending",
                    ),
                ),
                ("decided_by", models.TextField(blank=True, null=True)),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                ("decision_note", models.TextField(blank=True, db_default="", default="")),
                ("created_at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                ("updated_at", models.DateTimeField(db_default=django.db.models.functions.datetime.Now())),
                (
                    "result",
                    models.ForeignKey(
                        blank=True,
                        db_index=False,
                        null=True,
                        on_delete=django.db.models.deletion.DB_SET_NULL,
                        related_name="+",
                        to="memories.memory",
                    ),
                ),
            ],
            options={
                "db_table": "consolidation",
                "indexes": [
                    models.Index(
                        condition=models.Q(("status", "pending")),
                        fields=["created_at"],
                        name="consolidation_pending",
                    ),
                    django.contrib.postgres.indexes.GinIndex(
                        fields=["member_ids"], name="consolidation_members"
                    ),
                ],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("kind__in", ["duplicate", "conflict", "digest", "distinct"])),
                        name="consolidation_kind_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("status__in", ["pending", "applied", "rejected", "dismissed", "stale"])
                        ),
                        name="consolidation_status_valid",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("model", ""), _negated=True), name="consolidation_model_not_empty"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("scope", ""), _negated=True), name="consolidation_scope_not_empty"
                    ),
                    models.CheckConstraint(
                        condition=django.db.models.lookups.GreaterThanOrEqual(
                            models.Func(
                                models.F("member_ids"),
                                function="cardinality",
                                output_field=models.IntegerField(),
                            ),
                            2,
                        ),
                        name="consolidation_two_members",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("keep_id__isnull", False), ("kind__in", ["duplicate", "conflict"])),
                            models.Q(("keep_id__isnull", True), ("kind__in", ["digest", "distinct"])),
                            _connector="OR",
                        ),
                        name="consolidation_keep_iff_pair",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("keep_id__isnull", True),
                            django.db.models.lookups.IsNull(
                                models.Func(
                                    models.F("member_ids"),
                                    models.F("keep_id"),
                                    function="array_position",
                                    output_field=models.IntegerField(),
                                ),
                                False,
                            ),
                            _connector="OR",
                        ),
                        name="consolidation_keep_is_member",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("content__gt", ""), ("kind", "digest")),
                            models.Q(models.Q(("kind", "digest"), _negated=True), ("content", "")),
                            _connector="OR",
                        ),
                        name="consolidation_content_iff_digest",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            models.Q(("kind", "distinct"), _negated=True),
                            ("status", "dismissed"),
                            _connector="OR",
                        ),
                        name="consolidation_distinct_dismissed",
                    ),
                    models.UniqueConstraint(fields=("member_ids",), name="consolidation_member_set_once"),
                ],
            },
        ),
        migrations.RunSQL(TOUCH, UNTOUCH),
    ]
