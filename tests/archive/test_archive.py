"""Export and import (spec §1.18) through the management commands: the Archive scenarios of §2.

Fake credentials are assembled at run time so that the repository never holds one.
"""

import io
import json
import stat
import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, connections

from access.caller import Caller
from archive.selectors import ExportSelection, archive_lines
from coderefs.models import CodeRef
from kenfold import clock
from memories import selectors
from memories.models import Memory, MemoryEdge, MemoryEmbedding
from memories.services.remember import memory_remember

pytestmark = pytest.mark.django_db

SCOPE = "project:github.com/kenfold/kenfold"
OTHER_SCOPE = "project:github.com/kenfold/other"
GITHUB_TOKEN = "ghp" + "_" + ("aB3dE5fG7h" * 4)[:36]
RANDOM_VALUE = "Zq8xK2mN" + "9pL4vR7t" + "Y3wB"
T0 = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)

MEMORY_COLUMNS = [
    f.attname
    for f in Memory._meta.concrete_fields
    if f.attname not in ("content_tsv", "content_tsv_en", "content_key")
]
EDGE_COLUMNS = ["src_id", "relation", "dst_id", "weight", "source_agent", "created_at"]
REF_COLUMNS = [f.attname for f in CodeRef._meta.concrete_fields]


def snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every stored column of every memory, edge and code reference (vectors aside), in a fixed order."""
    return {
        "memories": list(Memory.objects.order_by("id").values(*MEMORY_COLUMNS)),
        "edges": list(MemoryEdge.objects.order_by("src_id", "relation", "dst_id").values(*EDGE_COLUMNS)),
        "refs": list(CodeRef.objects.order_by("memory_id", "path", "symbol").values(*REF_COLUMNS)),
    }


def wipe() -> None:
    # Edges, refs, vectors and extraction rows go with their memories (ON DELETE CASCADE in the database).
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory")


def store() -> dict[str, uuid.UUID]:
    """A store with every status, a forward and a backward supersedes link, edges, anchored refs, nested
    attrs, validity and expiry, microsecond timestamps, and one vector."""
    ids = {name: uuid.UUID(f"01900000-0000-7000-8000-{n:012d}") for n, name in enumerate("abcdefg", 1)}

    def make(name: str, **fields: Any) -> Memory:
        fields.setdefault("type", "project")
        fields.setdefault("scope", SCOPE)
        fields.setdefault("source_agent", "claude-code")
        fields.setdefault("created_at", T0)
        fields.setdefault("updated_at", T0 + timedelta(seconds=1, microseconds=7))
        return Memory.objects.create(
            id=ids[name], content=f"memory {name}: the deploy runs `make release`", **fields
        )

    make("a", status="superseded", attrs={"type_source": "agent"})
    # b supersedes a (a backward link); c supersedes g, which comes later in id order (a forward link).
    make(
        "b",
        supersedes_id=ids["a"],
        trust="user",
        confidence=0.875,
        source_session="s-1",
        evidence_uri="https://x.example/1",
    )
    make("g", status="superseded", type="semantic", scope="user")
    make("c", supersedes_id=ids["g"], valid_from=T0, valid_to=T0 + timedelta(days=3), code_state="changed")
    make(
        "d",
        type="temporary",
        expires_at=T0 + timedelta(days=7),
        attrs={
            "kind": "handoff",
            "next_steps": ["run the tests", "merge"],
            "nested": {"level": [1, 2.5, None, True]},
        },
    )
    make("e", status="deleted", attrs={"forgotten_by": "codex", "forget_reason": "wrong"})
    make("f", status="proposed", type="preference", scope="user")
    MemoryEdge.objects.create(
        src_id=ids["b"],
        relation="replaces",
        dst_id=ids["a"],
        weight=0.5,
        source_agent="kenfold-cli",
        created_at=T0,
    )
    MemoryEdge.objects.create(
        src_id=ids["c"],
        relation="derived_from",
        dst_id=ids["b"],
        source_agent="kenfold-extractor",
        created_at=T0,
    )
    CodeRef.objects.create(
        memory_id=ids["c"],
        scope=SCOPE,
        path="internal/auth/middleware.go",
        symbol="RequireAPIKey",
        state="changed",
        resolved_path="internal/auth/middleware.go",
        anchor_hash="h1",
        anchor_commit="c" * 40,
        checked_commit="d" * 40,
        checked_at=T0 + timedelta(hours=1),
        created_at=T0,
    )
    CodeRef.objects.create(memory_id=ids["b"], scope=SCOPE, path="Makefile", created_at=T0)
    MemoryEmbedding.objects.create(memory_id=ids["b"], model="fake", embedding=[0.25] * 8, content_md5="x")
    return ids


def export(*args: str) -> list[dict[str, Any]]:
    out = io.StringIO()
    call_command("export", *args, stdout=out, stderr=io.StringIO())
    return [json.loads(line) for line in out.getvalue().splitlines()]


def export_file(tmp_path: Path, *args: str) -> Path:
    path = tmp_path / f"archive-{uuid.uuid4().hex[:8]}.jsonl"
    call_command("export", "--out", str(path), *args, stdout=io.StringIO())
    return path


def import_archive(path: Path | str, *args: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command("import", str(path), "--json", *args, stdout=out)
    return json.loads(out.getvalue())


def write_lines(tmp_path: Path, records: list[dict[str, Any]], name: str = "edited.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


# --- export ------------------------------------------------------------------------------------------


def test_export_writes_header_records_and_end_counts_to_a_private_file(tmp_path: Path) -> None:
    store()
    out = io.StringIO()
    path = tmp_path / "archive.jsonl"
    call_command("export", "--out", str(path), stdout=out)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "Exported 7 memories, 2 edges and 2 code references" in out.getvalue()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["format"] == "kenfold-archive/1" and set(lines[0]) == {
        "format",
        "exported_at",
        "kenfold_version",
    }
    kinds = [next(iter(line)) for line in lines[1:]]
    assert kinds == ["memory"] * 7 + ["edge"] * 2 + ["ref"] * 2 + ["end"]
    assert lines[-1] == {"end": {"memories": 7, "edges": 2, "refs": 2}}
    ids = [line["memory"]["id"] for line in lines[1:8]]
    assert ids == sorted(ids)
    # Every status is exported; empty attrs are left out.
    assert {line["memory"]["status"] for line in lines[1:8]} == {
        "active",
        "proposed",
        "superseded",
        "deleted",
    }
    assert all("attrs" not in line["memory"] for line in lines[1:8] if line["memory"]["id"].endswith("6"))


def test_export_never_holds_vectors_keys_or_oauth_state(tmp_path: Path) -> None:
    store()
    call_command("key", "create", "claude-code", stdout=io.StringIO())
    text = export_file(tmp_path).read_text()
    for word in ("embedding", "0.25", "key_hash", "api_key", "oauth", "grant", "content_tsv", "content_key"):
        assert word not in text


def test_export_refuses_to_overwrite_a_file(tmp_path: Path) -> None:
    store()
    path = tmp_path / "archive.jsonl"
    path.write_text("keep me")
    with pytest.raises(CommandError, match="already exists; choose another --out"):
        call_command("export", "--out", str(path), stdout=io.StringIO())
    assert path.read_text() == "keep me"


def test_scoped_and_active_export(tmp_path: Path) -> None:
    ids = store()
    lines = export("--scope", "https://github.com/kenfold/kenfold.git", "--active")
    memories = [line["memory"]["id"] for line in lines if "memory" in line]
    # a is superseded, e deleted; g and f are user-wide.
    assert memories == [str(ids["b"]), str(ids["c"]), str(ids["d"])]
    # Only the edge with both ends exported (c → b), and the refs of exported memories.
    assert [line["edge"]["relation"] for line in lines if "edge" in line] == ["derived_from"]
    assert len([line for line in lines if "ref" in line]) == 2
    assert lines[-1] == {"end": {"memories": 3, "edges": 1, "refs": 2}}


@pytest.mark.django_db(transaction=True)
def test_export_is_one_snapshot_while_agents_write() -> None:
    store()
    lines = archive_lines(selection=ExportSelection())
    header = next(lines)
    assert json.loads(header)["format"] == "kenfold-archive/1"

    def write_elsewhere() -> None:
        memory_remember(
            caller=Caller(agent="codex"),
            content="written during the export",
            project=SCOPE.removeprefix("project:"),
        )
        connections.close_all()

    writer = threading.Thread(target=write_elsewhere)
    writer.start()
    writer.join()
    rest = [json.loads(line) for line in lines]
    assert Memory.objects.count() == 8
    assert rest[-1]["end"]["memories"] == 7
    assert all("written during" not in r.get("memory", {}).get("content", "") for r in rest)


# --- import ------------------------------------------------------------------------------------------


def test_export_then_import_into_an_empty_database_restores_every_field(tmp_path: Path) -> None:
    store()
    before = snapshot()
    path = export_file(tmp_path)
    wipe()
    assert Memory.objects.count() == 0
    report = import_archive(path)
    assert (report["memories"], report["edges"], report["refs"]) == (7, 2, 2)
    after = snapshot()
    for kind in ("memories", "edges", "refs"):
        assert len(after[kind]) == len(before[kind])
        for old, new in zip(before[kind], after[kind], strict=True):
            for column, value in old.items():
                assert new[column] == value, f"{kind} {column}"
    # The forward link (c supersedes g, later in the archive) survived.
    assert Memory.objects.get(content__startswith="memory c").supersedes_id is not None
    # No vectors come with an archive; the backfill computes them.
    assert MemoryEmbedding.objects.count() == 0


def test_import_reads_stdin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store()
    text = export_file(tmp_path).read_bytes()
    wipe()

    class Stdin:
        buffer = io.BytesIO(text)

    monkeypatch.setattr("sys.stdin", Stdin)
    assert import_archive("-")["memories"] == 7


def test_reimport_is_a_no_op_reported_as_already_here(tmp_path: Path) -> None:
    store()
    path = export_file(tmp_path)
    before = snapshot()
    out = io.StringIO()
    call_command("import", str(path), stdout=out)
    assert "Imported 0 memories, 0 edges and 0 code references" in out.getvalue()
    assert "Already here, left as they are: 7 memories, 2 edges, 2 code references" in out.getvalue()
    assert snapshot() == before


def test_dry_run_validates_and_writes_nothing(tmp_path: Path) -> None:
    store()
    path = export_file(tmp_path)
    wipe()
    out = io.StringIO()
    call_command("import", "--dry-run", str(path), stdout=out)
    assert "Would import 7 memories, 2 edges and 2 code references" in out.getvalue()
    assert "Nothing was written (--dry-run)" in out.getvalue()
    assert Memory.objects.count() == 0


def test_imported_memories_are_searchable_and_superseded_stays_retired(
    tmp_path: Path, provider_env: Any
) -> None:
    provider_env(KENFOLD_EMBED="off")
    ids = store()
    path = export_file(tmp_path)
    wipe()
    import_archive(path)
    with clock.frozen(T0 + timedelta(days=1)):
        found = selectors.memory_recall(
            caller=Caller(agent="codex"), query="deploy make release", project="github.com/kenfold/kenfold"
        )
    found_ids = {m.id for m in found.memories}
    assert str(ids["b"]) in found_ids
    assert str(ids["a"]) not in found_ids  # superseded
    assert str(ids["e"]) not in found_ids  # deleted
    assert Memory.objects.get(pk=ids["a"]).status == "superseded"


def test_edges_and_refs_of_absent_memories_are_skipped_and_links_reported(tmp_path: Path) -> None:
    ids = store()
    path = export_file(tmp_path, "--scope", SCOPE)
    wipe()
    report = import_archive(path)
    # c supersedes g, a user-wide memory this scoped archive does not hold: imported without the link.
    assert report["supersedes_unlinked"] == 1
    assert Memory.objects.get(pk=ids["c"]).supersedes_id is None


# --- refused archives --------------------------------------------------------------------------------


def refused(tmp_path: Path, records: list[dict[str, Any]], match: str, *, raw: str | None = None) -> str:
    path = write_lines(tmp_path, records)
    if raw is not None:
        path.write_text(raw)
    before = snapshot()
    with pytest.raises(CommandError, match=match) as error:
        call_command("import", str(path), stdout=io.StringIO())
    assert snapshot() == before
    assert "Nothing was imported" in str(error.value)
    return str(error.value)


def exported(tmp_path: Path) -> list[dict[str, Any]]:
    store()
    records = [json.loads(line) for line in export_file(tmp_path).read_text().splitlines()]
    wipe()
    return records


def test_a_truncated_archive_is_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    refused(tmp_path, records[:-1], "no end record: it is truncated")
    refused(
        tmp_path,
        records[:5] + records[-1:],
        r"line 6: the end record counts 7 memories, 2 edges, 2 refs but the archive holds 4 memories, 0 edges, 0 refs",
    )


def test_a_foreign_format_is_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    refused(
        tmp_path,
        [
            {"format": "other-archive/2", **{k: v for k, v in records[0].items() if k != "format"}},
            *records[1:],
        ],
        "line 1: is not a Kenfold archive header",
    )
    refused(tmp_path, [], "line 1: is not one JSON value", raw="id,content\n1,hello\n")


def test_a_secret_in_content_refuses_the_whole_archive_without_echoing_it(tmp_path: Path) -> None:
    records = exported(tmp_path)
    records[3]["memory"]["content"] = f"the CI token is {GITHUB_TOKEN}"
    message = refused(tmp_path, records, "line 4: memory.content appears to contain a GitHub token")
    assert GITHUB_TOKEN not in message


def test_a_secret_nested_in_attrs_or_in_a_key_refuses_the_archive(tmp_path: Path) -> None:
    records = exported(tmp_path)
    records[2]["memory"]["attrs"] = {"evidence": {"steps": ["ok", f"export T={GITHUB_TOKEN}"]}}
    message = refused(
        tmp_path, records, r"line 3: memory.attrs.evidence.steps\[1\] appears to contain a GitHub token"
    )
    assert GITHUB_TOKEN not in message
    records = exported(tmp_path)
    records[2]["memory"]["attrs"] = {GITHUB_TOKEN: "ok"}
    message = refused(tmp_path, records, r"line 3: memory.attrs.\{key #1\} appears to contain a GitHub token")
    assert GITHUB_TOKEN not in message


@pytest.mark.parametrize(
    "attrs",
    [
        {"config": {"db_password": ["first", RANDOM_VALUE]}},
        {"credentials": {"main": {"value": RANDOM_VALUE}}},
    ],
    ids=["array-under-secret-named-key", "object-under-secret-named-key"],
)
def test_a_credential_under_a_secret_named_key_refuses_the_archive(
    tmp_path: Path, attrs: dict[str, Any]
) -> None:
    records = exported(tmp_path)
    records[2]["memory"]["attrs"] = attrs
    message = refused(
        tmp_path, records, "line 3: .* appears to contain a credential assigned to a secret-named field"
    )
    assert RANDOM_VALUE not in message


def test_an_unknown_field_is_refused_with_its_line(tmp_path: Path) -> None:
    records = exported(tmp_path)
    records[9]["edge"]["colour"] = "blue"
    message = refused(tmp_path, records, 'line 10: unknown field "edge.colour"')
    assert "blue" not in message
    records[9]["edge"].pop("colour")
    records[9]["thing"] = {}
    refused(tmp_path, records, 'line 10: unknown record kind "thing"')


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda m: m.update(id="not-a-uuid"), "memory.id: Input should be a valid UUID"),
        (lambda m: m.update(type="fact"), "memory.type: Input should be"),
        (
            lambda m: m.update(scope="project:GitHub.com/O/R.git"),
            "memory: scope must be project:<normalized identity>",
        ),
        (
            lambda m: m.update(
                scope="project:github.com/o/" + "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
            ),
            "memory: scope appears to contain a credential; remove it from the archive",
        ),
        (lambda m: m.update(confidence=1.5), "memory.confidence: Input should be less than or equal to 1"),
        (lambda m: m.update(confidence="0.5"), "memory.confidence: Input should be a valid number"),
        (lambda m: m.update(supersedes=m["id"]), "memory: supersedes must name another memory"),
        (lambda m: m.update(content=""), "memory.content: String should have at least 1 character"),
        (lambda m: m.update(source_agent="Claude Code"), "memory: source_agent must be an agent name"),
        (
            lambda m: m.update(type="temporary", expires_at=None),
            "memory: a temporary memory needs expires_at",
        ),
        (
            lambda m: m.update(valid_from="2026-03-02T00:00:00+00:00", valid_to="2026-03-01T00:00:00+00:00"),
            "memory: valid_to must not be before valid_from",
        ),
        (
            lambda m: m.update(created_at="2026-03-01T00:00:00"),
            "memory.created_at: Input should have timezone info",
        ),
        (lambda m: m.pop("created_at"), 'missing field "memory.created_at"'),
    ],
)
def test_invalid_memory_records_are_refused_with_their_line(tmp_path: Path, change: Any, match: str) -> None:
    records = exported(tmp_path)
    change(records[2]["memory"])
    refused(tmp_path, records, "line 3: " + match)


def test_nan_duplicate_ids_and_lines_after_the_end_are_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    text = "".join(json.dumps(r) + "\n" for r in records).replace('"weight": 0.5', '"weight": NaN')
    refused(tmp_path, [], "line 9: edge.weight: Input should be a finite number", raw=text)
    duplicated = [*records[:3], records[2], *records[3:]]
    refused(tmp_path, duplicated, "line 4: memory .* appears twice \\(first on line 3\\)")
    refused(tmp_path, [*records, records[1]], "line 14: follows the end record of line 13")
