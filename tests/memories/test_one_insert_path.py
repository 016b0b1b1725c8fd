"""One insert path (issue 36): every memory row is created by memories/insert.py, so the rules of a new
row (timestamps, the poisoning screen, supersede, the insert hooks) hold for every write. This scans
the source tree's syntax, no database. Not scanned: tests/ and bench/, whose fixtures fill synthetic
stores of thousands of rows with one generate_series statement to measure the product, not to write
memories through it."""

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = (
    "kenfold",
    "memories",
    "coderefs",
    "oauth",
    "dashboard",
    "consolidation",
    "archive",
    "projectdocs",
    "evals",
    "client",
    "scripts",
    "plugins",
)
THE_INSERT_PATH = REPO / "memories" / "insert.py"
_CREATING = {"create", "bulk_create", "get_or_create", "update_or_create"}
# `memory` itself, not memory_edge, memory_ref or memory_embedding.
_SQL_INSERT = re.compile(r"\b(?:INSERT\s+INTO|COPY)\s+(?:public\.)?\"?memory\"?(?![\w])", re.IGNORECASE)


def memory_creations(source: str) -> list[str]:
    """Where `source` creates a Memory row: `Memory.objects.create(...)` and its kin, `Memory(...)` (an
    instance to save), and SQL inserting into (or copying into) the memory table."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "Memory":
                found.append(f"line {node.lineno}: Memory(...)")
            elif (
                isinstance(func, ast.Attribute)
                and func.attr in _CREATING
                and isinstance(func.value, ast.Attribute)
                and func.value.attr == "objects"
                and isinstance(func.value.value, ast.Name)
                and func.value.value.id == "Memory"
            ):
                found.append(f"line {node.lineno}: Memory.objects.{func.attr}(...)")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL_INSERT.search(node.value)
        ):
            found.append(f"line {node.lineno}: SQL inserting into memory")
    return found


def test_only_memories_insert_creates_memory_rows() -> None:
    offenders = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if path == THE_INSERT_PATH or ".venv" in path.parts:
                continue
            for where in memory_creations(path.read_text()):
                offenders.append(f"{path.relative_to(REPO)} {where}")
    assert offenders == [], "create memories through memories.insert.memory_insert: " + "; ".join(offenders)


def test_the_insert_path_itself_is_found_by_the_scan() -> None:
    # The scan would pass vacuously if it could not see an insert: memories/insert.py holds both kinds.
    found = memory_creations(THE_INSERT_PATH.read_text())
    assert any("Memory.objects.create" in where for where in found)


@pytest.mark.parametrize(
    "source",
    [
        "Memory.objects.create(type='project')",
        "Memory.objects.bulk_create([])",
        "Memory.objects.get_or_create(id=1)",
        "Memory(type='project').save()",
        "cursor.execute('INSERT INTO memory (id) VALUES (1)')",
        "cursor.execute('''insert into\\n  memory(id) select 1''')",
        "copy = 'COPY memory (id, content) FROM STDIN'",
    ],
)
def test_each_way_of_creating_a_memory_is_found(source: str) -> None:
    assert memory_creations(source)


@pytest.mark.parametrize(
    "source",
    [
        "MemoryEdge.objects.create(src=a, dst=b)",
        "CodeRef.objects.bulk_create([])",
        "Memory.objects.filter(pk=1).update(status='active')",
        "cursor.execute('INSERT INTO memory_edge (src_id) VALUES (1)')",
        "cursor.execute('INSERT INTO memory_embedding (memory_id) VALUES (1)')",
    ],
)
def test_other_rows_and_updates_are_not_counted(source: str) -> None:
    assert memory_creations(source) == []
