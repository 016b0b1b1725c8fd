"""Move memories stored under a project scope that is not at the fixed point of normalization into the
normalized project (issue 37).

Before normalization was made a fixed point, one pass of the rules could leave `github.com/org/repo.git`
(from `repo.git.git`) or `github.com:org/repo` (from `https://github.com:org/repo`); normalizing either
again gives `github.com/org/repo`. So one repository could be two projects, and an export holding such a
scope did not import. Every table that carries a scope moves with its memories: code references,
consolidation proposals and get_context snapshots (vector rows follow their memory by trigger, 0008).

Duplicates that meet in the merged project (same type and normalized content, both active or proposed)
keep one: an active memory before a proposed one, then the oldest, as consolidation keeps a duplicate.
Each other one is superseded, with `merged_into` in its attrs and a `replaces` edge from the one kept, so
its history stays readable. A stored scope that no longer normalizes at all (the rules now refuse what was
left of, say, `https://~/x`) is left as it is: there is no project to move it to, and the owner can still
list and forget its memories by that scope.
"""

from django.db import migrations

from kenfold_common.errors import InvalidInput
from kenfold_common.identity import PROJECT_SCOPE_PREFIX, normalize_project

SCOPED = [
    ("memories", "Memory"),
    ("coderefs", "CodeRef"),
    ("consolidation", "Consolidation"),
    ("memories", "ContextSnapshot"),
]
LIVE = ("active", "proposed")
MIGRATION_AGENT = "kenfold"


def _moves(apps) -> dict[str, str]:
    """Stored project scope -> its normalized scope, for every scope that normalizes to another one."""
    scopes: set[str] = set()
    for app, model in SCOPED:
        rows = apps.get_model(app, model).objects.filter(scope__startswith=PROJECT_SCOPE_PREFIX)
        scopes.update(rows.values_list("scope", flat=True).distinct())
    moves = {}
    for scope in scopes:
        try:
            normalized = PROJECT_SCOPE_PREFIX + normalize_project(scope.removeprefix(PROJECT_SCOPE_PREFIX))
        except InvalidInput:
            continue
        if normalized != scope:
            moves[scope] = normalized
    return moves


def _retire_duplicates(apps, scope: str) -> None:
    Memory = apps.get_model("memories", "Memory")
    MemoryEdge = apps.get_model("memories", "MemoryEdge")
    live = (
        Memory.objects.filter(scope=scope, status__in=LIVE)
        .order_by("type", "content_key", "created_at", "id")
        .values("id", "type", "content_key", "status", "attrs")
    )
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in live:
        groups.setdefault((row["type"], row["content_key"]), []).append(row)
    for rows in groups.values():
        if len(rows) < 2:
            continue
        # Sorted by age already; a stable sort puts the active ones first.
        kept, *retired = sorted(rows, key=lambda row: row["status"] != "active")
        for row in retired:
            Memory.objects.filter(pk=row["id"]).update(
                status="superseded", attrs=(row["attrs"] or {}) | {"merged_into": str(kept["id"])}
            )
        MemoryEdge.objects.bulk_create(
            [
                MemoryEdge(
                    src_id=kept["id"], relation="replaces", dst_id=row["id"], source_agent=MIGRATION_AGENT
                )
                for row in retired
            ],
            ignore_conflicts=True,
        )


def normalize_project_scopes(apps, schema_editor) -> None:
    moves = _moves(apps)
    for old, new in moves.items():
        for app, model in SCOPED:
            apps.get_model(app, model).objects.filter(scope=old).update(scope=new)
    for scope in set(moves.values()):
        _retire_duplicates(apps, scope)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0014_api_key_label"),
        ("coderefs", "0003_fill_code_state"),
        ("consolidation", "0003_scans"),
    ]

    operations = [migrations.RunPython(normalize_project_scopes, migrations.RunPython.noop)]
