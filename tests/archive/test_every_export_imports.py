"""Every export imports (issue 37, item 5): stores built through the services from generated operations
(every type and status, supersedes and replaces edges, code references, docs sections and their links,
handoffs, unicode, Korean, content at the 8,000-character limit) are exported with `manage.py export`
and imported with `manage.py import`, which restores every stored column of every record.

The generated stores are imported into this database once emptied (a second Kenfold per example would
cost a migration each); the fixed store that covers every kind of record is imported into a freshly
migrated second database by a separate `manage.py` process. Hypothesis runs with a fixed seed and a few
examples, so `make test` stays fast and repeatable."""

import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.core.management import call_command
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from access.caller import Caller
from bench.archive import sibling_database
from coderefs.models import CodeRef
from kenfold_common.errors import KenfoldError
from memories.models import Memory, MemoryEdge, MemoryType, Status
from memories.services.handoff import handoff_create
from memories.services.remember import MAX_CONTENT_CHARS, memory_remember
from memories.services.review import memory_approve, memory_forget, memory_reject
from projectdocs.schemas import DocsSyncInput
from projectdocs.services import docs_sync
from tests.archive.test_archive import EDGE_COLUMNS, MEMORY_COLUMNS, REF_COLUMNS, snapshot, wipe

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]

AGENTS = [Caller(agent="claude-code"), Caller(agent="codex"), Caller(agent="unknown")]
PROJECTS = [
    None,
    "github.com/kenfold/kenfold",
    "git@github.com:Acme/Shop.git",
    "gitlab.example.com/그룹/저장소",
]
ODD_TEXT = [
    "배포는 `make release`로 한다; 롤백은 `scripts/rollback.sh`를 쓴다.",
    "The handler `internal/auth/middleware.go` calls `RequireAPIKey` first.",
    "Emoji 🚀 and RTL שלום and combining é (e + \u0301) and a tab\tinside.",
    "가" * MAX_CONTENT_CHARS,
    "x" * (MAX_CONTENT_CHARS - 1) + "!",
    "Quotes \" ' ` and backslashes \\ and {json: [1, 2]} in plain text.",
]
content = st.one_of(
    st.sampled_from(ODD_TEXT),
    st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=60),
)
index = st.integers(min_value=0, max_value=50)
remember = st.tuples(
    st.just("remember"),
    st.sampled_from(AGENTS),
    content,
    st.sampled_from([None, *MemoryType.values]),
    st.sampled_from(PROJECTS),
    st.sampled_from([None, "session-1", "세션-2"]),
)
supersede = st.tuples(st.just("supersede"), st.sampled_from(AGENTS), content, index)
review = st.tuples(st.just("review"), st.sampled_from(["approve", "reject", "forget"]), index)
handoff = st.tuples(st.just("handoff"), content, st.lists(content, max_size=3), st.sampled_from(PROJECTS[1:]))
docs = st.tuples(
    st.just("docs"),
    st.sampled_from(["docs/deploy.md", "docs/guide/intro.mdx", "README.md"]),
    st.lists(st.tuples(st.lists(content, max_size=2), content), min_size=1, max_size=3),
    st.sampled_from(["1", "2"]),
)
operations = st.lists(st.one_of(remember, supersede, review, handoff, docs), min_size=1, max_size=12)


def apply(operation: tuple[Any, ...]) -> None:
    """One operation through the services; one they refuse (a secret-looking text, a rule) is skipped,
    since a refused write is not in the store."""
    kind, *args = operation
    ids = [str(i) for i in Memory.objects.order_by("created_at", "id").values_list("id", flat=True)]
    try:
        if kind == "remember":
            caller, text, type, project, session = args
            ttl = 3600 if type == MemoryType.TEMPORARY else None
            memory_remember(
                caller=caller, content=text, type=type, project=project, ttl_seconds=ttl, session_id=session
            )
        elif kind == "supersede" and ids:
            caller, text, at = args
            old = Memory.objects.get(pk=ids[at % len(ids)])
            project = None if old.scope == "user" else old.scope.split(":", 1)[1]
            memory_remember(caller=caller, content=text, project=project, supersedes=str(old.pk))
        elif kind == "review" and ids:
            action, at = args
            memory_id = ids[at % len(ids)]
            if action == "approve":
                memory_approve(memory_id=memory_id, actor="kenfold-dashboard")
            elif action == "reject":
                memory_reject(memory_id=memory_id, actor="kenfold-cli")
            else:
                memory_forget(caller=AGENTS[0], memory_id=memory_id, reason="날짜가 틀림")
        elif kind == "handoff":
            summary, steps, project = args
            handoff_create(caller=AGENTS[1], summary=summary, next_steps=steps, project=project)
        elif kind == "docs":
            path, chunks, version = args
            other = "README.md" if path != "README.md" else "docs/deploy.md"
            page = {
                "path": path,
                "file_hash": version * 64,
                "title": "배포 Deploy",
                "tags": ["deploy", "배포"],
                "relates_to": [{"path": other, "relation": "part_of"}],
                "chunks": [{"heading_path": heading, "content": text} for heading, text in chunks],
            }
            docs_sync(
                caller=AGENTS[0],
                sync=DocsSyncInput(project="github.com/kenfold/kenfold", files=[page], deleted=[]),
            )
    except KenfoldError:
        pass


def round_trip(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    before = snapshot()
    path = tmp_path / f"archive-{uuid.uuid4().hex[:8]}.jsonl"
    call_command("export", "--out", str(path), stdout=io.StringIO())
    wipe()
    out = io.StringIO()
    call_command("import", str(path), "--json", stdout=out)
    return before, snapshot(), json.loads(out.getvalue())


def _columns(model: type, attnames: list[str]) -> str:
    # jsonb as its canonical text: Django's connection hands it back as text, a plain one decoded.
    by_attname = {
        f.attname: f"{f.column}::text" if f.get_internal_type() == "JSONField" else f.column
        for f in model._meta.concrete_fields
    }
    return ", ".join(by_attname[name] for name in attnames)


# Every stored column (vectors aside) of every table an archive carries, in a fixed order, as raw SQL so
# that it reads the same from this database and from a second one.
TABLE_QUERIES = {
    "memories": f"SELECT {_columns(Memory, MEMORY_COLUMNS)} FROM memory ORDER BY id",
    "edges": f"SELECT {_columns(MemoryEdge, EDGE_COLUMNS)} FROM memory_edge ORDER BY src_id, relation, dst_id",
    "refs": f"SELECT {_columns(CodeRef, REF_COLUMNS)} FROM memory_ref ORDER BY memory_id, path, symbol",
}


def rows(cursor: Any) -> dict[str, list[tuple[Any, ...]]]:
    tables = {}
    for name, query in TABLE_QUERIES.items():
        cursor.execute(query)
        tables[name] = [tuple(row) for row in cursor.fetchall()]
    return tables


def import_into_a_fresh_kenfold(archive: Path, home: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Migrate a new, empty database as a second Kenfold would, import the archive there with
    `manage.py import`, and read its tables back."""
    with sibling_database(f"kenfold_fresh_{uuid.uuid4().hex[:8]}") as url:
        env = {key: value for key, value in os.environ.items() if not key.startswith("KENFOLD_")}
        env |= {
            "KENFOLD_HOME": str(home),
            "KENFOLD_DATABASE_URL": url,
            "KENFOLD_EMBED": "off",
            "DJANGO_SETTINGS_MODULE": "kenfold.settings",
            "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "client")]),
        }
        for command in (["migrate", "--verbosity", "0"], ["import", str(archive)]):
            child = subprocess.run(
                [sys.executable, "manage.py", *command],
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert child.returncode == 0, child.stderr[-3000:]
        with psycopg.connect(url) as conn, conn.cursor() as cursor:
            return rows(cursor)


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


# `python -m bench.export_import --examples N` runs this test with more examples (and a fresh seed).
EXAMPLES = int(os.environ.get("HYPOTHESIS_EXAMPLES", "12"))
DERANDOMIZE = os.environ.get("HYPOTHESIS_FRESH_SEED") != "1"


# The tmp_path and provider fixtures are the same for every example; each example empties the store first.
@settings(
    derandomize=DERANDOMIZE,
    database=None,
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=operations)
def test_every_generated_store_exports_and_imports_identically(
    tmp_path: Path, plan: list[tuple[Any, ...]]
) -> None:
    wipe()
    for operation in plan:
        apply(operation)
    before, after, report = round_trip(tmp_path)
    assert after == before
    assert report["memories"] == len(before["memories"])
    assert report["edges"] == len(before["edges"]) and report["refs"] == len(before["refs"])


def test_the_fixed_store_covers_every_type_status_edge_ref_and_docs_section(tmp_path: Path) -> None:
    """The generated plans are few; this one plan makes sure each kind of record is in some round trip."""
    wipe()
    plan: list[tuple[Any, ...]] = [
        ("remember", AGENTS[0], ODD_TEXT[1], MemoryType.PROJECT, PROJECTS[1], "session-1"),
        ("remember", AGENTS[1], ODD_TEXT[0], MemoryType.CODEBASE, PROJECTS[2], "세션-2"),
        ("remember", AGENTS[2], ODD_TEXT[3], MemoryType.SEMANTIC, None, None),
        ("remember", AGENTS[0], "사용자는 탭보다 스페이스를 선호한다", MemoryType.PREFERENCE, None, None),
        ("remember", AGENTS[0], "The user prefers short commit titles", MemoryType.PREFERENCE, None, None),
        ("remember", AGENTS[0], "The user wants Korean answers", MemoryType.PREFERENCE, None, None),
        ("remember", AGENTS[1], ODD_TEXT[2], MemoryType.EPISODIC, PROJECTS[3], None),
        ("remember", AGENTS[1], "A flaky test until Friday", MemoryType.TEMPORARY, PROJECTS[1], None),
        ("review", "approve", 3),
        ("review", "reject", 4),
        ("supersede", AGENTS[1], "The handler `internal/auth/jwt.go` now checks `VerifyToken`.", 0),
        ("handoff", "반쯤 했다: `cmd/server/main.go`", ["테스트 실행", "merge"], PROJECTS[1]),
        ("docs", "docs/deploy.md", [(["배포"], "## 배포\n\n`make release`를 실행한다."), ([], "Intro")], "1"),
        ("docs", "README.md", [(["Run"], "## Run\n\nmake run")], "1"),
        ("docs", "docs/deploy.md", [(["배포"], "## 배포\n\n`make deploy`를 실행한다."), ([], "Intro")], "2"),
    ]
    for operation in plan:
        apply(operation)
    archive = tmp_path / "fixed.jsonl"
    call_command("export", "--out", str(archive), stdout=io.StringIO())
    with connection.cursor() as cursor:
        here = rows(cursor)
    assert import_into_a_fresh_kenfold(archive, tmp_path / "second") == here
    before = snapshot()
    memories = before["memories"]
    assert {m["type"] for m in memories} == set(MemoryType.values)
    assert {m["status"] for m in memories} == set(Status.values)
    assert {e["relation"] for e in before["edges"]} == {"relates_to:part_of"}
    assert {m["attrs"].get("path") for m in memories} >= {"docs/deploy.md", "README.md"}
    assert before["refs"] and any(len(m["content"]) == MAX_CONTENT_CHARS for m in memories)
