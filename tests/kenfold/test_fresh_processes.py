"""Every management command and every scheduled job, run as a user or the worker runs them: in a new
process, on a new database connection (issue 34, item 4).

The in-process tests run on the test's warm connection, where an earlier query may have loaded what a new
session lacks: `consolidate run` passed there and crashed in a new process (pg_trgm's settings exist only
once a session has run a trigram query). Here each command is a `manage.py` child process, and each job is
run through django-q2's own worker function in a child process, against this test's database
(KENFOLD_DATABASE_URL). The tests commit (transaction=True) so that the children see what they set up.
Chat and embeddings come from the small real servers of tests/provider_servers.py.
"""

import importlib.util
import inspect
import io
import json
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from django.apps import apps
from django.conf import settings
from django.core.management import call_command, get_commands, load_command_class
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.utils import timezone
from oauth2_provider.models import get_application_model

from access import keys
from access.caller import Caller
from access.models import ApiKey, Owner
from bench.support.processes import REPO, kenfold_env, manage
from coderefs.schemas import CheckInput, CheckResult
from coderefs.services import refs_check
from consolidation.models import Consolidation
from evals.models import EvalRun, GoldenQuestion
from evals.services import EVAL_TASK, question_add
from kenfold import clock
from kenfold.embedded_db import EmbeddedCluster
from memories.capture import extraction
from memories.models import Extraction, Memory, MemoryEmbedding, ServedCall
from memories.services.remember import memory_remember
from oauth.models import OAuthGrant
from tests.mcp.support import stdio_tool_calls
from tests.provider_servers import Received, Reply, chat_reply, openai_embeddings, provider_server

pytestmark = pytest.mark.django_db(transaction=True)

PROJECT = "github.com/kenfold/kenfold"
SCOPE = f"project:{PROJECT}"
FLY = "Deploys go to Fly.io from the main branch."
RENDER = "Deploys go to Render from the main branch."
EXTRACTED = "The kenfold repository uses pnpm, never npm."
GITHUB_TOKEN = "ghp" + "_" + ("aB3dE5fG7h" * 4)[:36]  # assembled here: the repository holds no credential

# What the chat model answers, by the JSON schema each request names.
CHAT_ANSWERS = {
    "extraction": {
        "items": [
            {
                "category": "project_rule",
                "content": EXTRACTED,
                "evidence": "We use pnpm in this repo, never npm.",
                "basis": "stated",
            }
        ]
    },
    "consolidation_judgement": {"relation": "conflict", "keep": "B", "reason": "The deploy target changed."},
    "consolidation_digest": {"digest": "- Fixed retries."},
    "classification": {"type": "project", "confidence": 0.9},
}


def answer_chat(received: Received) -> Reply:
    return chat_reply(CHAT_ANSWERS[received.json["response_format"]["json_schema"]["name"]])


@dataclass(frozen=True)
class Fresh:
    """Runs children on this test's database, with the chat and embeddings servers."""

    home: Path
    env: dict[str, str]

    def manage(
        self, *args: str, input: str | None = None, check: bool = True, **extra: str
    ) -> subprocess.CompletedProcess[str]:
        return manage(self.home, *args, input=input, check=check, **(self.env | extra))

    def job(self, func: str, kwargs: dict[str, str] | None = None, **extra: str) -> dict[str, object]:
        """``func`` as the scheduler names it (with the schedule's ``kwargs``), run by django-q2's own worker
        function (sync mode runs the worker and result monitor in this one child), which stores the
        task's result as the worker does."""
        code = (
            "import django, json; django.setup()\n"
            "from django_q.tasks import async_task, fetch\n"
            f"task = fetch(async_task({func!r}, sync=True, **{kwargs or {}!r}))\n"
            "print(json.dumps({'success': task.success, 'result': task.result}, default=str))"
        )
        child = subprocess.run(
            [sys.executable, "-c", code],
            cwd=REPO,
            env=kenfold_env(self.home, **(self.env | extra)),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert child.returncode == 0, child.stderr[-3000:]
        return json.loads(child.stdout.splitlines()[-1])


def database_url() -> tuple[str, str]:
    """KENFOLD_DATABASE_URL (and password) of the database this test uses: the test database, not the
    cluster's own `kenfold` database a child would otherwise open."""
    params = connection.get_connection_params()
    host = quote(str(params.get("host") or ""), safe="")
    url = f"postgres://{quote(params['user'])}@/{quote(params['dbname'])}?host={host}"
    if params.get("port"):
        url += f"&port={params['port']}"
    return url, str(params.get("password") or "")


@pytest.fixture
def fresh(tmp_path: Path, provider_env: Callable[..., None]) -> Iterator[Fresh]:
    # This process writes without models: memories get no vector here (reindex and the backfill have
    # work) and no classification call. The children have both servers.
    provider_env(KENFOLD_EMBED="off", KENFOLD_EMBED_URL=None, KENFOLD_CHAT_URL=None)
    url, password = database_url()
    with provider_server(answer_chat) as chat, provider_server(openai_embeddings) as embed:
        env = {
            "KENFOLD_DATABASE_URL": url,
            "KENFOLD_CHAT_URL": f"{chat.url}/v1",
            "KENFOLD_EMBED_URL": f"{embed.url}/v1",
        }
        if password:
            env["KENFOLD_DATABASE_PASSWORD"] = password
        yield Fresh(home=tmp_path / "home", env=env)


def remember(content: str, *, type: str = "project", age: timedelta = timedelta(days=1), **fields) -> Memory:
    memory = Memory.objects.create(
        content=content, scope=SCOPE, type=type, source_agent="claude-code", **fields
    )
    Memory.objects.filter(pk=memory.pk).update(created_at=clock.now() - age)
    return Memory.objects.get(pk=memory.pk)


def status(memory: Memory) -> str:
    return Memory.objects.get(pk=memory.pk).status


# --- the commands, one scenario for each command and subcommand --------------------------------------


def db_status(fresh: Fresh) -> None:
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    if cluster is None:  # the suite runs against another server (KENFOLD_TEST_DATABASE_URL)
        out = fresh.manage("db", "status").stdout
        assert f"database {connection.settings_dict['NAME']}" in out
        return
    # The embedded server this test runs on, as its owner sees it from its home.
    out = fresh.manage("db", "status", KENFOLD_HOME=str(cluster.home), KENFOLD_DATABASE_URL="").stdout
    assert f"embedded PostgreSQL: running (pid {cluster.status().pid})" in out
    assert f"socket: {cluster.socket_dir}" in out


def db_start(fresh: Fresh) -> None:
    cluster = getattr(settings, "EMBEDDED_CLUSTER", None)
    if cluster is None:
        result = fresh.manage("db", "start", check=False)
        assert result.returncode == 1 and "Kenfold does not start or stop that server" in result.stderr
        return
    result = fresh.manage("db", "start", KENFOLD_HOME=str(cluster.home), KENFOLD_DATABASE_URL="")
    assert result.stdout.strip() == "already running"


def db_stop(fresh: Fresh) -> None:
    # Not this test's server: a home whose server never ran (stopping a running one, and the server's
    # answer to it: tests/kenfold/test_embedded_db.py and test_serving.py, also in child processes).
    home = fresh.home / "never-started"
    result = fresh.manage("db", "stop", KENFOLD_HOME=str(home), KENFOLD_DATABASE_URL="")
    assert result.stdout.strip() == "not running"
    assert not EmbeddedCluster(home=home).status().initialized, "nothing was created"


def key_create(fresh: Fresh) -> None:
    raw = fresh.manage("key", "create", "codex", "--read-only").stdout.strip()
    key = ApiKey.objects.get(agent="codex")
    assert raw.startswith(key.prefix) and key.read_only and keys.api_key_authenticate(token=raw) == key


def key_list(fresh: Fresh) -> None:
    key, _ = keys.api_key_create(agent="claude-code")
    out = fresh.manage("key", "list").stdout
    assert f"{key.id}  {key.prefix}" in out and "claude-code" in out and "active" in out


def key_projects(fresh: Fresh) -> None:
    key, _ = keys.api_key_create(agent="chatgpt", projects=["github.com/acme/shop"])
    out = fresh.manage("key", "projects", key.prefix, "--add", "git@github.com:acme/docs.git").stdout
    assert "now reaches only github.com/acme/docs, github.com/acme/shop." in out
    key.refresh_from_db()
    assert key.projects == ["github.com/acme/docs", "github.com/acme/shop"]


def key_revoke(fresh: Fresh) -> None:
    key, _ = keys.api_key_create(agent="claude-code")
    out = fresh.manage("key", "revoke", key.prefix).stdout
    assert f"Revoked key {key.prefix}… (id {key.id}) of agent claude-code." in out
    assert ApiKey.objects.get(pk=key.pk).revoked_at is not None


def key_quota(fresh: Fresh) -> None:
    key, _ = keys.api_key_create(agent="claude-code")
    out = fresh.manage("key", "quota", key.prefix, "--writes-per-minute", "7").stdout
    assert out.strip() == (
        f"Key {key.prefix}… of agent claude-code: 7 writes per minute (its own), "
        "2000 memories per day (the default)."
    )


def memory_history(fresh: Fresh) -> None:
    memory_id = memory_remember(caller=Caller(agent="codex"), content=FLY, project=PROJECT).id
    events = [
        json.loads(line)
        for line in fresh.manage("memory", "history", memory_id, "--json").stdout.splitlines()
    ]
    assert [(event["action"], event["agent"]) for event in events] == [("created", "codex")]


def memory_guidelines(fresh: Fresh) -> None:
    rules = fresh.home.parent / "KENFOLD.md"
    rules.write_text("# Memory here\n\nRemember deploy decisions; never store customer names.\n")
    out = fresh.manage("memory", "guidelines", "set", "--project", PROJECT, "--file", str(rules)).stdout
    assert out.startswith("set ")
    shown = fresh.manage("memory", "guidelines", "show", "--project", PROJECT).stdout
    assert "never store customer names" in shown
    assert fresh.manage("memory", "guidelines", "clear", "--project", PROJECT).stdout.startswith("cleared ")


def audit(fresh: Fresh) -> None:
    memory_remember(caller=Caller(agent="codex"), content=FLY, project=PROJECT)
    out = fresh.manage("audit", "--agent", "codex").stdout
    assert "Last 7 days, per credential:" in out and "1 created" in out


def memory_list(fresh: Fresh) -> None:
    memory = remember(FLY)
    out = fresh.manage("memory", "list").stdout
    assert str(memory.id) in out and FLY in out


def memory_review(fresh: Fresh) -> None:
    # The review shows similar memories: the trigram lookup of a new session.
    active = remember(FLY)
    proposed = remember(RENDER, status="proposed")
    out = fresh.manage("memory", "review", input="1\n").stdout
    assert f"similar #1: {FLY}" in out and f"approved, replacing {active.id}" in out
    assert (status(proposed), status(active)) == ("active", "superseded")


def memory_approve(fresh: Fresh) -> None:
    proposed = remember(RENDER, status="proposed")
    assert fresh.manage("memory", "approve", str(proposed.id)).stdout.strip() == f"approved {proposed.id}"
    assert status(proposed) == "active"


def memory_reject(fresh: Fresh) -> None:
    proposed = remember(RENDER, status="proposed")
    out = fresh.manage("memory", "reject", str(proposed.id), "--reason", "wrong").stdout
    assert out.strip() == f"rejected {proposed.id}"
    assert status(proposed) == "deleted"


def memory_forget(fresh: Fresh) -> None:
    memory = remember(FLY)
    assert fresh.manage("memory", "forget", str(memory.id)).stdout.strip() == f"{memory.id} deleted"
    assert status(memory) == "deleted"


def refs_status(fresh: Fresh) -> None:
    # Written through remember, which records the memory's code references; then the symbol goes.
    memory_id = memory_remember(
        caller=Caller(agent="claude-code"),
        content="Deploys run `ship_release` in app/ship.py.",
        project=PROJECT,
    ).id
    for commit, result in (
        ("a" * 40, CheckResult(path="app/ship.py", symbol="ship_release", found=True, hash="sym:1")),
        (
            "b" * 40,
            CheckResult(path="app/ship.py", symbol="ship_release", anchor_commit="a" * 40, found=False),
        ),
    ):
        refs_check(
            caller=Caller(agent="refs-sync"),
            check=CheckInput(project=PROJECT, commit=commit, results=[result]),
        )
    out = fresh.manage("refs", "status").stdout
    assert f"{memory_id}  ship_release in app/ship.py missing" in out


def export(fresh: Fresh) -> None:
    memories = [remember(FLY), remember(RENDER)]
    archive = fresh.home.parent / "all.jsonl"
    out = fresh.manage("export", "--out", str(archive)).stdout
    assert "Exported 2 memories, 0 edges and 0 code references" in out
    lines = [json.loads(line) for line in archive.read_text().splitlines()]
    assert {line["memory"]["id"] for line in lines if "memory" in line} == {str(m.id) for m in memories}


def import_(fresh: Fresh) -> None:
    kept, lost = remember(FLY), remember(RENDER)
    archive = fresh.home.parent / "all.jsonl"
    call_command("export", "--out", str(archive), stdout=io.StringIO())
    Memory.objects.filter(pk=lost.pk).delete()
    out = fresh.manage("import", str(archive)).stdout
    assert "Imported 1 memories" in out and "Already here, left as they are: 1 memories" in out
    assert Memory.objects.get(pk=lost.pk).content == RENDER and Memory.objects.filter(pk=kept.pk).exists()


def scan(fresh: Fresh) -> None:
    # Stored before a rule caught it: written past remember, which would have redacted it.
    leaked = remember(f"the deploy token is {GITHUB_TOKEN}, keep it handy")
    out = fresh.manage("scan", "--redact").stdout
    assert f"{leaked.id}  active" in out and GITHUB_TOKEN not in out
    assert "Redacted 1 of 1 memories scanned" in out
    content = Memory.objects.get(pk=leaked.pk).content
    assert GITHUB_TOKEN not in content and "[REDACTED:" in content


def reindex(fresh: Fresh) -> None:
    memories = [remember(FLY), remember(RENDER)]
    out = fresh.manage("reindex").stdout
    assert "Embedded 2 memories with " in out and "0 failed" in out
    assert MemoryEmbedding.objects.filter(memory__in=memories).count() == 2


def summary(*, age: timedelta) -> Memory:
    return remember(
        "Session summary: we use pnpm in this repo, never npm.",
        type="episodic",
        age=age,
        source_session="s-1",
    )


def extract_status(fresh: Fresh) -> None:
    summary(age=timedelta(hours=1))
    assert json.loads(fresh.manage("extract", "status", "--json").stdout)["pending"] == 1


def extract_run(fresh: Fresh) -> None:
    source = summary(age=timedelta(seconds=0))
    out = fresh.manage("extract", "run").stdout
    assert "processed 1 summaries, stored 1 proposed memories, 0 failed" in out
    assert Extraction.objects.get(source=source).status == "done"
    assert Memory.objects.get(source_agent=extraction.EXTRACTOR_AGENT).content == EXTRACTED


def conflict() -> Consolidation:
    older = remember(FLY, age=timedelta(days=5))
    newer = remember(RENDER, age=timedelta(days=2))
    return Consolidation.objects.create(
        kind="conflict",
        scope=SCOPE,
        member_ids=sorted([older.id, newer.id]),
        keep_id=newer.id,
        model="qwen3.5:4b",
        reason="The deploy target changed.",
    )


def consolidate_run(fresh: Fresh) -> None:
    # Trigrams alone (no vectors) find the pair: the pg_trgm setting is read on a new connection.
    older, newer = remember(FLY, age=timedelta(days=5)), remember(RENDER, age=timedelta(days=2))
    out = fresh.manage("consolidate", "run", KENFOLD_EMBED="off").stdout
    assert "Judged 1 pairs; 1 new proposals" in out
    proposal = Consolidation.objects.get()
    assert (proposal.kind, proposal.keep_id, proposal.status) == ("conflict", newer.id, "pending")
    assert sorted(proposal.member_ids) == sorted([older.id, newer.id])


def consolidate_status(fresh: Fresh) -> None:
    conflict()
    out = json.loads(fresh.manage("consolidate", "status", "--json").stdout)
    assert out["pending"] == 1 and out["worker"] is True


def consolidate_list(fresh: Fresh) -> None:
    proposal = conflict()
    out = fresh.manage("consolidate", "list").stdout
    assert f"{proposal.id}  conflict  pending  {SCOPE}" in out and f"keep   {proposal.keep_id}" in out


def consolidate_apply(fresh: Fresh) -> None:
    proposal = conflict()
    out = fresh.manage("consolidate", "apply", str(proposal.id)).stdout
    assert f"kept {proposal.keep_id}." in out
    retired = next(member for member in proposal.member_ids if member != proposal.keep_id)
    assert Memory.objects.get(pk=retired).status == "superseded"


def consolidate_reject(fresh: Fresh) -> None:
    proposal = conflict()
    out = fresh.manage("consolidate", "reject", str(proposal.id), "--reason", "both hold").stdout
    assert f"Rejected {proposal.id}" in out
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decision_note) == ("rejected", "both hold")


def golden() -> GoldenQuestion:
    memory = remember(FLY)
    return question_add(
        project=PROJECT, query="where do deploys go?", expected=[str(memory.id)], actor="kenfold-cli"
    )


def eval_add(fresh: Fresh) -> None:
    memory = remember(FLY)
    out = fresh.manage(
        "eval", "add", "--project", PROJECT, "--query", "where do deploys go?", "--expect", str(memory.id)
    )
    assert f"to {SCOPE}: 1 expected in the top 5" in out.stdout
    assert GoldenQuestion.objects.get().expected_ids == [memory.id]


def eval_list(fresh: Fresh) -> None:
    question = golden()
    assert f"  {question.id}  k=5  where do deploys go?" in fresh.manage("eval", "list").stdout


def eval_run(fresh: Fresh) -> None:
    golden()
    out = fresh.manage("eval", "run").stdout
    assert f"{SCOPE}: recall@k 1.000, MRR 1.000, 1 of 1 questions passed; no previous run" in out
    assert EvalRun.objects.get().trigger == "manual"


def eval_remove(fresh: Fresh) -> None:
    question = golden()
    assert (
        f"Removed golden question {question.id}." in fresh.manage("eval", "remove", str(question.id)).stdout
    )
    assert not GoldenQuestion.objects.exists()


def grant(*, agent: str = "remote-agent") -> OAuthGrant:
    application = get_application_model().objects.create(
        name="Some Client", client_type="public", authorization_grant_type="authorization-code"
    )
    return OAuthGrant.objects.create(
        application=application,
        agent=agent,
        scope="memory:read",
        resource="http://localhost/mcp",
        code_checksum=uuid.uuid4().hex * 2,
        code_challenge="c",
        code_redeemed_at=timezone.now(),
    )


def oauth_clients(fresh: Fresh) -> None:
    granted = grant()
    rows = [json.loads(line) for line in fresh.manage("oauth", "clients", "--json").stdout.splitlines()]
    assert [(row["grant"], row["client"], row["agent"]) for row in rows] == [
        (str(granted.id), "Some Client", "remote-agent")
    ]


def oauth_revoke(fresh: Fresh) -> None:
    granted = grant()
    out = fresh.manage("oauth", "revoke", str(granted.id)[:8]).stdout
    assert f"Revoked grant {granted.id} (agent remote-agent)" in out
    assert OAuthGrant.objects.get(pk=granted.pk).revoke_reason == "revoked by the owner"


def oauth_quota(fresh: Fresh) -> None:
    granted = grant()
    out = fresh.manage("oauth", "quota", str(granted.id)[:8], "--memories-per-day", "0").stdout
    assert out.strip() == (
        f"Grant {granted.id} (agent remote-agent): 120 writes per minute (the default), no limit (its own)."
    )


def password(fresh: Fresh) -> None:
    result = fresh.manage("password", "--stdin", input="a long owner password\n")
    assert "Owner password set" in result.stderr
    assert Owner.objects.get().password_hash.startswith("$argon2id$")


def mcp(fresh: Fresh) -> None:
    env = kenfold_env(fresh.home, **fresh.env, KENFOLD_AGENT="codex")
    exchange = stdio_tool_calls([("remember", {"content": FLY, "project": PROJECT})], env=env)
    assert exchange.returncode == 0, exchange.stderr[-3000:]
    assert [reply["id"] for reply in exchange.replies] == [1, 2]
    assert exchange.replies[1]["result"]["isError"] is False
    stored = Memory.objects.get()
    assert (stored.content, stored.scope, stored.source_agent) == (FLY, SCOPE, "codex")


def serve(fresh: Fresh) -> None:
    # Serving itself runs in child processes in tests/kenfold/test_serving.py and tests/mcp.
    out = fresh.manage("serve", "--help").stdout
    assert "--migrate" in out and "--with-worker" in out


COMMANDS: dict[tuple[str, str | None], Callable[[Fresh], None]] = {
    ("db", "status"): db_status,
    ("db", "start"): db_start,
    ("db", "stop"): db_stop,
    ("key", "create"): key_create,
    ("key", "list"): key_list,
    ("key", "projects"): key_projects,
    ("key", "revoke"): key_revoke,
    ("key", "quota"): key_quota,
    ("memory", "list"): memory_list,
    ("memory", "review"): memory_review,
    ("memory", "approve"): memory_approve,
    ("memory", "reject"): memory_reject,
    ("memory", "forget"): memory_forget,
    ("memory", "history"): memory_history,
    ("memory", "guidelines"): memory_guidelines,
    ("audit", None): audit,
    ("refs", "status"): refs_status,
    ("export", None): export,
    ("import", None): import_,
    ("scan", None): scan,
    ("reindex", None): reindex,
    ("extract", "status"): extract_status,
    ("extract", "run"): extract_run,
    ("consolidate", "run"): consolidate_run,
    ("consolidate", "status"): consolidate_status,
    ("consolidate", "list"): consolidate_list,
    ("consolidate", "apply"): consolidate_apply,
    ("consolidate", "reject"): consolidate_reject,
    ("eval", "add"): eval_add,
    ("eval", "list"): eval_list,
    ("eval", "run"): eval_run,
    ("eval", "remove"): eval_remove,
    ("oauth", "clients"): oauth_clients,
    ("oauth", "revoke"): oauth_revoke,
    ("oauth", "quota"): oauth_quota,
    ("password", None): password,
    ("mcp", None): mcp,
    ("serve", None): serve,
}


@pytest.mark.parametrize("command", COMMANDS, ids=lambda key: " ".join(filter(None, key)))
def test_the_command_works_in_a_new_process(fresh: Fresh, command: tuple[str, str | None]) -> None:
    COMMANDS[command](fresh)


def kenfold_apps() -> set[str]:
    return {config.name for config in apps.get_app_configs() if Path(config.path).parent == REPO}


def kenfold_commands() -> set[tuple[str, str | None]]:
    """Kenfold's commands, and each one's subcommands (an argparse sub-parser or a positional choice)."""
    found: set[tuple[str, str | None]] = set()
    for name, app in get_commands().items():
        if app not in kenfold_apps():
            continue
        parser = load_command_class(app, name).create_parser("manage.py", name)
        subcommands = [
            choice
            for action in parser._actions
            if not action.option_strings and action.choices
            for choice in action.choices
        ]
        found |= {(name, sub) for sub in subcommands} or {(name, None)}
    return found


def test_every_command_and_subcommand_is_run_above() -> None:
    assert kenfold_commands() == set(COMMANDS)


# --- the scheduled jobs ----------------------------------------------------------------------------


def embeddings_backfill(fresh: Fresh, job: str) -> None:
    memories = [remember(FLY), remember(RENDER)]
    task = fresh.job(job)
    assert task["success"] is True and "embedded 2, failed 0, remaining 0" in str(task["result"])
    assert MemoryEmbedding.objects.filter(memory__in=memories).count() == 2


def extraction_drain(fresh: Fresh, job: str) -> None:
    source = summary(age=extraction.SETTLE + timedelta(minutes=1))
    assert fresh.job(job) == {"success": True, "result": "processed 1, stored 1, failed 0"}
    assert Extraction.objects.get(source=source).status == "done"


def consolidation_tick(fresh: Fresh, job: str) -> None:
    # The worker's first run after a restart is a new session too.
    remember(FLY, age=timedelta(days=5))
    newer = remember(RENDER, age=timedelta(days=2))
    task = fresh.job(job, KENFOLD_EMBED="off")
    assert task == {"success": True, "result": "judged 1 pairs; 1 new proposals; 0 stale"}
    assert Consolidation.objects.get().keep_id == newer.id


def prune_expired(fresh: Fresh, job: str) -> None:
    applications = get_application_model().objects
    abandoned = applications.create(
        name="never finished", client_type="public", authorization_grant_type="authorization-code"
    )
    applications.filter(pk=abandoned.pk).update(created=timezone.now() - timedelta(days=2))
    kept = grant()
    task = fresh.job(job)
    assert task["success"] is True and task["result"]["clients"] == 1
    assert (
        not applications.filter(pk=abandoned.pk).exists() and OAuthGrant.objects.filter(pk=kept.pk).exists()
    )


def usage_prune_old(fresh: Fresh, job: str) -> None:
    old = ServedCall.objects.create(
        served_at=clock.now() - timedelta(days=40), tool="recall", agent="codex", memory_ids=[uuid.uuid4()]
    )
    recent = ServedCall.objects.create(
        served_at=clock.now(), tool="recall", agent="codex", memory_ids=[uuid.uuid4()]
    )
    task = fresh.job(job)
    assert task == {"success": True, "result": "deleted 1 usage records"}
    assert list(ServedCall.objects.values_list("pk", flat=True)) == [recent.pk] != [old.pk]


def golden_questions_run(fresh: Fresh, job: str) -> None:
    golden()
    task = fresh.job(job, kwargs={"trigger": "import"})
    assert task == {"success": True, "result": f"{SCOPE}: recall@k 1.000, MRR 1.000, 1/1 passed"}
    assert EvalRun.objects.get().trigger == "import"


# Keyed by the dotted path the schedule names, which the job is run by.
JOBS: dict[str, Callable[[Fresh, str], None]] = {
    "memories.tasks.embeddings_backfill": embeddings_backfill,
    "memories.tasks.extraction_drain": extraction_drain,
    "consolidation.tasks.consolidation_tick": consolidation_tick,
    "memories.tasks.usage_prune_old": usage_prune_old,
    "oauth.tasks.prune_expired": prune_expired,
    "evals.tasks.golden_questions_run": golden_questions_run,
}


@pytest.mark.parametrize("job", JOBS)
def test_the_scheduled_job_works_in_a_new_process(fresh: Fresh, job: str) -> None:
    JOBS[job](fresh, job)


def test_every_job_and_every_schedule_is_run_above() -> None:
    # The jobs: the functions of the apps' tasks modules. The schedules: each migration that creates one
    # names its function in TASK; the golden questions' run is scheduled by a change (evals.services).
    jobs = {
        f"{module.__name__}.{name}"
        for app in kenfold_apps()
        if importlib.util.find_spec(f"{app}.tasks") is not None
        for module in [importlib.import_module(f"{app}.tasks")]
        for name, function in inspect.getmembers(module, inspect.isfunction)
        # A leading underscore marks a helper of the module's jobs, not a job.
        if function.__module__ == module.__name__ and not name.startswith("_")
    }
    loader = MigrationLoader(None, ignore_no_migrations=True)
    scheduled = {
        task
        for (app, _), migration in loader.disk_migrations.items()
        if app in kenfold_apps() and (task := getattr(sys.modules[type(migration).__module__], "TASK", None))
    }
    assert scheduled | {EVAL_TASK} == jobs == set(JOBS)
