"""The audit trail (issue 38 item 4): each service that changes a memory records who did what, with the
credential, and the owner reads it with `memory history` and `audit`."""

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command

from access.caller import Caller
from access.keys import api_key_create
from archive.records import FORMAT
from archive.services import archive_import, memory_scan
from consolidation.models import Consolidation
from consolidation.services import proposal_apply
from kenfold import clock
from memories.capture import extraction
from memories.models import Memory, MemoryEvent
from memories.services.handoff import handoff_create, handoff_resume
from memories.services.remember import memory_remember
from memories.services.review import memory_approve, memory_forget, memory_reject
from projectdocs.schemas import DocsSyncInput
from projectdocs.services import docs_sync

pytestmark = pytest.mark.django_db

REPO = "git@github.com:acme/shop.git"
SCOPE = "project:github.com/acme/shop"
AT = datetime(2026, 12, 6, 10, 15, 42, tzinfo=UTC)
FAKE_GITHUB_TOKEN = "ghp_" + "Zq8" * 12


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


@pytest.fixture
def key_caller() -> Caller:
    key, _ = api_key_create(agent="claude-code")
    return Caller(agent="claude-code", credential=f"key:{key.id}")


def trail(memory_id: object) -> list[tuple[str, str, str | None]]:
    return [
        (e.action, e.agent, e.credential)
        for e in MemoryEvent.objects.filter(memory_id=memory_id).order_by("at", "id")
    ]


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_remember_supersede_forget_record_agent_and_credential(key_caller: Caller) -> None:
    first = memory_remember(caller=key_caller, content="Deploys run on Fridays.", project=REPO)
    second = memory_remember(
        caller=Caller(agent="codex"), content="Deploys run on Tuesdays.", project=REPO, supersedes=first.id
    )
    memory_forget(caller=key_caller, memory_id=second.id, reason="we stopped deploying weekly")
    assert trail(first.id) == [
        ("created", "claude-code", key_caller.credential),
        ("superseded", "codex", None),
    ]
    assert trail(second.id) == [
        ("created", "codex", None),
        ("forgotten", "claude-code", key_caller.credential),
    ]
    superseded = MemoryEvent.objects.get(memory_id=first.id, action="superseded")
    assert superseded.detail == {"by": second.id}
    forgotten = MemoryEvent.objects.get(action="forgotten")
    assert forgotten.detail == {"reason": "we stopped deploying weekly"}
    # Forgetting again changes nothing and records nothing.
    memory_forget(caller=key_caller, memory_id=second.id)
    assert MemoryEvent.objects.filter(action="forgotten").count() == 1


def test_handoffs_resume_and_the_owners_review_are_recorded(key_caller: Caller) -> None:
    one = handoff_create(caller=key_caller, summary="Half done.", project=REPO)
    two = handoff_create(caller=key_caller, summary="Three quarters done.", project=REPO)
    handoff_resume(caller=Caller(agent="codex"), project=REPO)
    assert trail(one.id) == [
        ("created", "claude-code", key_caller.credential),
        ("superseded", "claude-code", key_caller.credential),
    ]
    assert trail(two.id) == [("created", "claude-code", key_caller.credential), ("resumed", "codex", None)]
    kept = memory_remember(caller=key_caller, content="Prefer tabs.", type="preference")
    dropped = memory_remember(caller=key_caller, content="Prefer spaces.", type="preference")
    memory_approve(memory_id=kept.id)
    memory_reject(memory_id=dropped.id, reason=f"wrong, and {FAKE_GITHUB_TOKEN}")
    assert trail(kept.id)[-1] == ("approved", "kenfold-cli", None)
    rejected = MemoryEvent.objects.get(memory_id=dropped.id, action="rejected")
    assert FAKE_GITHUB_TOKEN not in json.dumps(rejected.detail), "a reason is stored redacted"
    assert rejected.detail["reason"].startswith("wrong, and [REDACTED")


def test_docs_sync_records_created_superseded_and_forgotten_sections(key_caller: Caller) -> None:
    def sync(content: str | None, version: str) -> None:
        files = (
            []
            if content is None
            else [
                {
                    "path": "docs/a.md",
                    "file_hash": version * 64,
                    "chunks": [{"heading_path": ["A"], "content": content}],
                }
            ]
        )
        deleted = ["docs/a.md"] if content is None else []
        docs_sync(caller=key_caller, sync=DocsSyncInput(project=REPO, files=files, deleted=deleted))

    sync("## A\n\nFirst text.", "1")
    first = Memory.objects.get()
    sync("## A\n\nSecond text.", "2")
    second = Memory.objects.exclude(pk=first.pk).get()
    sync(None, "3")
    assert [action for action, *_ in trail(first.pk)] == ["created", "superseded"]
    assert [action for action, *_ in trail(second.pk)] == ["created", "forgotten"]
    assert {credential for *_, credential in trail(second.pk)} == {key_caller.credential}


def test_extraction_consolidation_import_and_redaction_are_recorded() -> None:
    summary = Memory.objects.create(
        type="episodic", scope=SCOPE, content="We moved the CDN to Fastly today.", source_agent="claude-code"
    )
    candidate = extraction.Candidate(
        type="project",
        scope=SCOPE,
        content="The CDN is Fastly.",
        evidence="moved the CDN to Fastly",
        confidence=0.9,
        basis="stated",
    )
    extracted = extraction._store_candidate(summary=summary, candidate=candidate, vector=None, model="m")
    assert extracted is not None
    assert trail(extracted.pk) == [("created", extraction.EXTRACTOR_AGENT, None)]
    assert MemoryEvent.objects.get(memory_id=extracted.pk).detail["extracted_from"] == str(summary.pk)

    sessions = [
        Memory.objects.create(type="episodic", scope=SCOPE, content=f"Session {n}.", source_agent="codex")
        for n in range(2)
    ]
    proposal = Consolidation.objects.create(
        kind="digest",
        scope=SCOPE,
        member_ids=sorted(m.pk for m in sessions),
        content="Two sessions.",
        model="m",
    )
    applied = proposal_apply(proposal_id=str(proposal.pk), actor="kenfold-cli")
    assert trail(applied.result.pk) == [("created", "kenfold-cli", None)]
    assert all(trail(m.pk) == [("superseded", "kenfold-cli", None)] for m in sessions)

    leaky = Memory.objects.create(
        type="project", scope=SCOPE, content=f"token {FAKE_GITHUB_TOKEN}", source_agent="codex"
    )
    memory_scan(redact=True)
    assert trail(leaky.pk) == [("redacted", "kenfold-cli", None)]

    imported_id = "019ae3c0-0000-7000-8000-000000000001"
    record = {
        "id": imported_id,
        "type": "semantic",
        "scope": "user",
        "content": "Imported fact.",
        "attrs": {},
        "source_agent": "claude-code",
        "source_session": None,
        "evidence_uri": None,
        "trust": "agent",
        "confidence": 0.5,
        "status": "active",
        "supersedes": None,
        "valid_from": None,
        "valid_to": None,
        "expires_at": None,
        "created_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "code_state": None,
    }
    lines = _archive([record])
    archive_import(lines=lines)
    archive_import(lines=_archive([record]))  # already here: nothing new to record
    assert trail(imported_id) == [("imported", "kenfold-cli", None)]


def _archive(records: list[dict]) -> list[bytes]:
    header = {"format": FORMAT, "exported_at": "2026-01-01T00:00:00Z", "kenfold_version": "0"}
    end = {"end": {"memories": len(records), "edges": 0, "refs": 0}}
    lines = [header, *({"memory": record} for record in records), end]
    return [json.dumps(item).encode() + b"\n" for item in lines]


def test_memory_history_and_audit_commands(key_caller: Caller) -> None:
    with clock.frozen(AT):
        first = memory_remember(caller=key_caller, content="Deploys run on Fridays.", project=REPO)
        memory_forget(caller=Caller(agent="kenfold-cli"), memory_id=first.id)
    with clock.frozen(AT - timedelta(days=10)):
        old = memory_remember(caller=Caller(agent="codex"), content="An old fact.")
    key_prefix = run("key", "list").splitlines()[1].split()[1]

    text = run("memory", "history", first.id)
    lines = text.splitlines()
    assert "Deploys" not in text, "history shows who and what, never the content"
    assert lines[1].startswith("2026-12-06 10:15:42  created") and f"key {key_prefix}" in lines[1]
    assert "forgotten   kenfold-cli  no credential" in lines[2]
    events = [json.loads(line) for line in run("memory", "history", first.id, "--json").splitlines()]
    assert [(e["action"], e["credential"]) for e in events] == [
        ("created", key_caller.credential),
        ("forgotten", None),
    ]
    with pytest.raises(CommandError, match="has no recorded history"):
        run("memory", "history", "019ae3c0-0000-7000-8000-0000000000ff")

    with clock.frozen(AT + timedelta(hours=1)):
        listing = run("audit", "--days", "7")
        by_key = [
            json.loads(line) for line in run("audit", "--credential", key_prefix, "--json").splitlines()
        ]
        by_agent = run("audit", "--agent", "codex", "--days", "30", "--json").splitlines()
    assert f"key {key_prefix} ({key_caller.credential})" in listing and "1 created" in listing
    assert str(old.id) not in listing, "older than --days"
    assert [(e["memory_id"], e["action"], e["credential_label"]) for e in by_key] == [
        (first.id, "created", f"key {key_prefix}")
    ]
    assert [json.loads(line)["memory_id"] for line in by_agent] == [old.id]
    with pytest.raises(CommandError, match="key:<id>, grant:<id>"):
        run("audit", "--credential", "laptop")
