"""The rules of remember, recall, get_context, handoff, resume and forget, at the service layer."""

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta

import pytest

from access.caller import Caller
from kenfold import clock
from kenfold_common.errors import Conflict, InvalidInput, NotFound, PermissionDenied, SecretDetected
from memories import selectors
from memories.models import Memory
from memories.schemas import MemoryView, RememberOutput
from memories.services.handoff import handoff_create, handoff_resume
from memories.services.remember import memory_remember
from memories.services.review import memory_approve, memory_forget, memory_reject
from tests.provider_servers import Received, Reply, openai_embeddings, provider_server

pytestmark = pytest.mark.django_db

CLAUDE = Caller(agent="claude-code")
CODEX = Caller(agent="codex")
REPO = "https://github.com/kenfold/kenfold.git"
SCOPE = "project:github.com/kenfold/kenfold"
FAKE_AWS_KEY = "AKIA" + "Q7ZL" * 4


def remember(content: str, **kwargs: object) -> RememberOutput:
    kwargs.setdefault("caller", CLAUDE)
    return memory_remember(content=content, **kwargs)


def recall_ids(query: str, **kwargs: object) -> list[str]:
    kwargs.setdefault("caller", CODEX)
    return [m.id for m in selectors.memory_recall(query=query, **kwargs).memories]


# --- remember ---------------------------------------------------------------------------------------


def test_remember_defaults_type_from_scope_and_records_provenance() -> None:
    in_project = remember("The API is versioned under /api/v1.", project=REPO, session_id="s-1")
    user_wide = remember("The owner's time zone is Asia/Seoul.")
    assert (in_project.type, in_project.status, in_project.deduplicated) == ("project", "active", False)
    assert user_wide.type == "semantic"
    memory = Memory.objects.get(pk=in_project.id)
    assert (memory.scope, memory.source_agent, memory.source_session) == (SCOPE, "claude-code", "s-1")
    assert memory.attrs == {"type_source": "default"} and memory.trust == "agent"


@pytest.mark.parametrize(
    "variant",
    [
        "the api is versioned under /api/v1",
        "  The   API is versioned\nunder /api/v1!!  ",
        "THE API IS VERSIONED UNDER /API/V1。",
    ],
)
def test_normalized_duplicates_return_the_existing_memory(variant: str) -> None:
    first = remember("The API is versioned under /api/v1.", project=REPO)
    again = remember(variant, project="git@github.com:kenfold/kenfold")
    assert (again.id, again.deduplicated) == (first.id, True)
    assert Memory.objects.count() == 1


def test_dedup_respects_type_scope_and_status() -> None:
    first = remember("Builds run on Fridays.", project=REPO, type="project")
    assert remember("Builds run on Fridays.", project=REPO).id == first.id, "untyped: any type matches"
    assert remember("Builds run on Fridays.", project=REPO, type="codebase").deduplicated is False
    assert remember("Builds run on Fridays.").deduplicated is False, "user scope is another scope"
    memory_forget(caller=CLAUDE, memory_id=first.id)
    assert remember("Builds run on Fridays.", project=REPO, type="project").deduplicated is False


def test_expired_memories_do_not_deduplicate() -> None:
    start = clock.now()
    with clock.frozen(start):
        first = remember("Staging is frozen.", project=REPO, type="temporary", ttl_seconds=60)
    with clock.frozen(start + timedelta(seconds=61)):
        again = remember("Staging is frozen.", project=REPO, type="temporary", ttl_seconds=60)
    assert again.id != first.id and again.deduplicated is False


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"content": "   "}, "content must not be empty"),
        ({"content": "x" * 8001}, "content is 8001 characters; the limit is 8000"),
        ({"content": "a\x00b"}, "NUL character"),
        ({"content": "ok", "type": "opinion"}, "is not one of"),
        ({"content": "ok", "type": "temporary"}, "temporary memories need ttl_seconds"),
        ({"content": "ok", "ttl_seconds": -1}, "must not be negative"),
        ({"content": "ok", "ttl_seconds": 366 * 86400}, "the limit is 365 days"),
        ({"content": "ok", "project": "/home/me/repo"}, "is a local path"),
        ({"content": "ok", "supersedes": "42"}, "is not a memory id"),
        ({"content": f"The deploy key is {FAKE_AWS_KEY}"}, "content appears to contain an AWS access key"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as caught:
        memory_remember(caller=CLAUDE, **kwargs)
    assert FAKE_AWS_KEY not in str(caught.value)
    assert Memory.objects.count() == 0


def test_secret_rejection_is_its_own_error_kind() -> None:
    with pytest.raises(SecretDetected):
        remember(f"export AWS_ACCESS_KEY_ID={FAKE_AWS_KEY}")


def test_read_only_callers_cannot_write() -> None:
    reader = Caller(agent="search-bot", read_only=True)
    for call in (
        lambda: memory_remember(caller=reader, content="x"),
        lambda: handoff_create(caller=reader, summary="x"),
        lambda: handoff_resume(caller=reader),
        lambda: memory_forget(caller=reader, memory_id="01a22cd3-fb12-7f08-8738-778c8375fde5"),
    ):
        with pytest.raises(PermissionDenied, match="read-only access"):
            call()
    assert selectors.memory_recall(caller=reader, query="anything").memories == []


# --- supersede --------------------------------------------------------------------------------------


def test_supersede_retires_the_old_memory_and_keeps_it_as_history() -> None:
    old = remember("Deploys go through Jenkins.", project=REPO)
    new = remember("Deploys go through GitHub Actions.", project=REPO, supersedes=old.id)
    assert new.type == "project"
    assert Memory.objects.get(pk=new.id).attrs["type_source"] == "superseded"
    assert Memory.objects.get(pk=old.id).status == "superseded"
    assert Memory.objects.get(pk=new.id).supersedes_id == Memory.objects.get(pk=old.id).pk
    assert recall_ids("deploys", project=REPO) == [new.id]
    with pytest.raises(Conflict, match=r"no longer active.*use recall"):
        remember("Deploys go through Buildkite.", project=REPO, supersedes=old.id)


def test_supersede_with_the_same_statement_is_a_no_op() -> None:
    old = remember("Deploys go through Jenkins.", project=REPO)
    again = remember("deploys go through jenkins", project=REPO, supersedes=old.id)
    assert (again.id, again.deduplicated) == (old.id, True)
    assert Memory.objects.get(pk=old.id).status == "active"


def test_supersede_across_scopes_or_of_unknown_ids_is_refused() -> None:
    user_wide = remember("Prefers short answers.", type="semantic")
    with pytest.raises(InvalidInput, match="pass the same project"):
        remember("Prefers long answers.", project=REPO, supersedes=user_wide.id)
    with pytest.raises(NotFound, match="does not exist"):
        remember("x", supersedes="01a22cd3-fb12-7f08-8738-778c8375fde5")
    assert Memory.objects.get(pk=user_wide.id).status == "active"


def test_proposed_replacement_waits_for_approval() -> None:
    old_pref = remember("Answer in English.", type="preference")
    memory_approve(memory_id=old_pref.id)
    new_pref = remember("Answer in Korean.", type="preference", supersedes=old_pref.id)
    assert new_pref.status == "proposed"
    assert Memory.objects.get(pk=old_pref.id).status == "active", "the old one serves until approval"
    memory_approve(memory_id=new_pref.id)
    assert Memory.objects.get(pk=old_pref.id).status == "superseded"
    approved = Memory.objects.get(pk=new_pref.id)
    assert (approved.status, approved.trust) == ("active", "user")
    memory_approve(memory_id=new_pref.id)  # approving twice is a no-op
    with pytest.raises(InvalidInput, match="not proposed"):
        memory_approve(memory_id=old_pref.id)


@pytest.mark.parametrize("type", [None, "semantic", "project"])
def test_an_agent_replacing_what_the_owner_approved_is_proposed_and_reviewed(type: str | None) -> None:
    approved = remember("Answer in English.", type="preference")
    memory_approve(memory_id=approved.id)
    rule = remember("Releases are tagged by the owner.", project=REPO)
    Memory.objects.filter(pk=rule.id).update(trust="user")  # as an approved extracted rule is

    for old, project in ((approved, None), (rule, REPO)):
        new = remember(
            "Anything goes from now on.", type=type, project=project, supersedes=old.id, caller=CODEX
        )
        assert new.status == "proposed", "review is never skipped"
        assert Memory.objects.get(pk=old.id).status == "active", "the owner's word serves until approval"
    context = selectors.context_get(caller=CLAUDE, project=REPO)
    assert [view.id for view in context.preferences] == [approved.id]
    assert rule.id in {view.id for view in context.project}

    items = {str(item.memory.id): item for item in selectors.memory_review_queue()}
    replaced = {str(item.replaces.id) for item in items.values() if item.replaces is not None}
    assert replaced == {approved.id, rule.id}, "the review shows what each proposal replaces"
    proposal = next(key for key, item in items.items() if item.replaces and str(item.replaces.id) == rule.id)
    memory_approve(memory_id=proposal)
    assert Memory.objects.get(pk=rule.id).status == "superseded"


def test_replacing_an_agents_memory_is_served_at_once() -> None:
    old = remember("Deploys go through Jenkins.", project=REPO)
    new = remember("Deploys go through Actions.", project=REPO, supersedes=old.id, caller=CODEX)
    assert new.status == "active" and Memory.objects.get(pk=old.id).status == "superseded"


def test_approve_replacing_and_reject() -> None:
    rule = remember("Use black for formatting.", project=REPO)
    proposal = remember("Use ruff format for formatting.", project=REPO, type="preference")
    memory_approve(memory_id=proposal.id, replaces=rule.id)
    assert Memory.objects.get(pk=rule.id).status == "superseded"
    assert str(Memory.objects.get(pk=proposal.id).supersedes_id) == rule.id
    refused = remember("Always answer in French.", type="preference")
    memory_reject(memory_id=refused.id, reason="not true")
    memory = Memory.objects.get(pk=refused.id)
    assert memory.status == "deleted" and memory.attrs["forget_reason"] == "not true"
    with pytest.raises(InvalidInput, match="not proposed"):
        memory_reject(memory_id=refused.id)


def test_session_summary_replaces_the_previous_one_of_the_same_agent_and_session() -> None:
    first = remember("Session summary: 1 request.", project=REPO, type="episodic", session_id="s-9")
    second = remember("Session summary: 2 requests.", project=REPO, type="episodic", session_id="s-9")
    other_agent = remember(
        "Session summary: 2 requests.", project=REPO, type="episodic", session_id="s-9", caller=CODEX
    )
    assert Memory.objects.get(pk=first.id).status == "superseded"
    assert str(Memory.objects.get(pk=second.id).supersedes_id) == first.id
    assert Memory.objects.get(pk=other_agent.id).status == "active"
    assert second.similar is None, "session summaries get no similarity hints"


def test_similar_memories_are_hinted_in_the_same_scope_only() -> None:
    base = remember("The payments service retries webhooks three times.", project=REPO)
    remember("The payments service retries webhooks three times.", project="github.com/other/repo")
    close = remember("The payments service retries webhooks five times.", project=REPO)
    assert close.similar is not None and [m.id for m in close.similar] == [base.id]
    assert 0.5 <= close.similar[0].score <= 1


def test_similar_ranks_text_matches_among_vector_matches_when_those_fill_the_list(
    provider_env: Callable[..., None],
) -> None:
    """Three vector matches are enough for similar[], yet a text match more similar than the third of
    them still takes its place (remember looks text matches up after the vector ones, above the third's
    similarity)."""
    new = "The nightly export job writes parquet files to the archive bucket at 02:00 UTC."
    near_text = {  # trigram similarity to `new`: 0.94, 0.84, 0.55 (pg_trgm); vectors unrelated to it
        "hour": "The nightly export job writes parquet files to the archive bucket at 03:00 UTC.",
        "no hour": "The nightly export job writes parquet files to the archive bucket.",
        "csv": "The nightly export job writes CSV files to the reports bucket.",
    }
    near_vector = {  # cosine similarity of their vectors to `new`'s; their words share little with it
        "Backups are verified every Sunday by restoring one table.": 0.99,
        "Grafana alerts page the on-call engineer after five minutes.": 0.90,
        "Feature flags are cleaned up at the end of each quarter.": 0.86,
    }

    def vector_of(text: str) -> list[float]:
        vector = [0.0] * 8
        if text == new:
            vector[0] = 1.0
        elif text in near_vector:
            vector[0] = near_vector[text]
            vector[1] = (1 - near_vector[text] ** 2) ** 0.5
        else:
            vector[2] = 1.0
        return vector

    def embeddings(received: Received) -> Reply:
        data = [{"index": i, "embedding": vector_of(text)} for i, text in enumerate(received.json["input"])]
        return Reply(json={"object": "list", "data": data, "model": received.json["model"]})

    with provider_server(embeddings) as server:
        provider_env(
            KENFOLD_EMBED=None,
            KENFOLD_EMBED_URL=server.url,
            KENFOLD_EMBED_MODEL="scripted",
            KENFOLD_EMBED_NAME="scripted-embed",
        )
        ids = {text: remember(text, project=REPO).id for text in [*near_text.values(), *near_vector]}
        result = remember(new, project=REPO)

    assert result.similar is not None
    hinted = [(m.id, m.score) for m in result.similar]
    backups, grafana, _flags = near_vector
    assert [memory_id for memory_id, _score in hinted] == [ids[backups], ids[near_text["hour"]], ids[grafana]]
    assert [score for _id, score in hinted] == pytest.approx([0.99, 0.9444, 0.90], abs=1e-4)


def test_preferences_are_proposed_and_not_served_until_approved() -> None:
    pref = remember("Always write commit messages in English.", type="preference")
    assert pref.status == "proposed"
    assert selectors.context_get(caller=CODEX).preferences == []
    assert recall_ids("commit messages") == []
    memory_approve(memory_id=pref.id)
    served = selectors.context_get(caller=CODEX).preferences
    assert [p.id for p in served] == [pref.id] and served[0].trust == "user"


# --- recall -----------------------------------------------------------------------------------------


def test_recall_scopes_user_wide_in_other_projects_out_and_expired_hidden() -> None:
    mine = remember("Migrations are written by hand.", project=REPO)
    user_wide = remember("Migrations should be reviewed twice.")
    remember("Migrations are generated.", project="github.com/other/repo")
    start = clock.now()
    with clock.frozen(start):
        note = remember("Migrations are paused today.", project=REPO, type="temporary", ttl_seconds=3600)
    with clock.frozen(start + timedelta(minutes=30)):
        assert set(recall_ids("migrations", project=REPO)) == {mine.id, user_wide.id, note.id}
    with clock.frozen(start + timedelta(hours=2)):
        assert set(recall_ids("migrations", project=REPO)) == {mine.id, user_wide.id}
    assert recall_ids("migrations") == [user_wide.id]


def test_recall_ranks_by_shared_words_with_top_score_one_and_filters_types(
    django_capture_on_commit_callbacks: Callable[..., AbstractContextManager[object]],
) -> None:
    # Committed, so the second local model's vectors (queued on commit) are there: top in every ranking.
    with django_capture_on_commit_callbacks(execute=True):
        both = remember("Webhook retries use exponential backoff.", project=REPO)
        one = remember("Retries are logged.", project=REPO, type="codebase")
    results = selectors.memory_recall(
        caller=CODEX, query="how do webhook retries work?", project=REPO
    ).memories
    assert [m.id for m in results] == [both.id, one.id]
    assert results[0].score == 1.0 and 0 < results[1].score < 1
    assert recall_ids("webhook retries", project=REPO, types=["codebase"]) == [one.id]
    with pytest.raises(InvalidInput, match=r"types\[0\] is not a memory type"):
        recall_ids("x", types=["opinion"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # Query syntax (tsquery operators, SQL, LIKE wildcards) is text: only its words are searched.
        ("!!!", []),
        ("(((", []),
        ("*:", []),
        ("<->", []),
        ("\\", []),
        ("%", []),
        ("_", []),
        ("a & b | !c", []),
        ("' OR 1=1 --", []),
        ("'); DROP TABLE memory; --", ["migration"]),
        ("drop:* & table", ["migration"]),
        ("signature:A", ["webhook"]),
        ("웹훅", ["korean"]),
        ("웹훅:*", ["korean"]),
    ],
)
def test_hostile_or_odd_queries_are_safe(query: str, expected: list[str]) -> None:
    ids = {
        "korean": remember("웹훅 서명은 검증한다.", project=REPO).id,
        "migration": remember("Never DROP a TABLE in a migration; rename the column first.", project=REPO).id,
        "webhook": remember("Webhook signatures are checked with HMAC-SHA256.", project=REPO).id,
    }
    before = list(Memory.objects.order_by("id").values())
    # The words alone decide the lexical ranking; vectors would add neighbours whatever the query is.
    lexical = selectors.memory_recall(
        caller=CODEX, query=query, project=REPO, options=selectors.SearchOptions(vectors=False)
    ).memories
    assert [m.id for m in lexical] == [ids[name] for name in expected]
    assert {ids[name] for name in expected} <= set(recall_ids(query, project=REPO))
    assert list(Memory.objects.order_by("id").values()) == before


def test_recall_limits_and_empty_query() -> None:
    for n in range(55):
        remember(f"Fact number {n} about caching.", project=REPO)
    assert len(recall_ids("caching", project=REPO)) == 10
    assert len(recall_ids("caching", project=REPO, limit=100)) == 50
    with pytest.raises(InvalidInput, match="query must not be empty"):
        recall_ids("   ")


def test_secrets_in_queries_are_redacted_not_refused(provider_env: Callable[..., None]) -> None:
    """Queries go to the embedding and rerank providers: a secret in one must never leave the server."""

    def rerank(received: Received) -> Reply:
        scores = [1.0 if "staging" in document else 0.1 for document in received.json["documents"]]
        return Reply(json={"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]})

    with provider_server(openai_embeddings) as embeddings, provider_server(rerank) as reranker:
        provider_env(
            KENFOLD_EMBED=None,
            KENFOLD_EMBED_URL=embeddings.url,
            KENFOLD_EMBED_MODEL="fake",
            KENFOLD_EMBED_NAME="fake-embed",
            KENFOLD_RERANK_URL=reranker.url,
        )
        # Codebase facts, not project rules: get_context lists rules on their own, never in relevant.
        staging = remember("The staging database is on port 5433.", project=REPO, type="codebase")
        remember("The docs site uses dark mode.", project=REPO, type="codebase")
        embedded_before = len(embeddings.received)
        query = f"staging database {FAKE_AWS_KEY}"
        assert recall_ids(query, project=REPO)[0] == staging.id
        context = selectors.context_get(caller=CODEX, task=f"fix the {query}", project=REPO)
        assert [m.id for m in context.relevant][:1] == [staging.id]

        sent = [r.json for r in embeddings.received[embedded_before:]] + [r.json for r in reranker.received]
        assert len(sent) == 4, "recall and get_context each embedded and reranked their query"
        assert not any(FAKE_AWS_KEY in json.dumps(body) for body in sent), "the secret never left"
        queries = [body["input"][0] for body in sent if "input" in body] + [
            body["query"] for body in sent if "query" in body
        ]
        assert all("[REDACTED:aws-access-key]" in query for query in queries) and len(queries) == 4


# --- get_context ------------------------------------------------------------------------------------


def test_context_sections_in_priority_order_each_memory_once() -> None:
    pref = remember("Prefer small pull requests.", type="preference")
    memory_approve(memory_id=pref.id)
    rule = remember("Database access goes through selectors.", project=REPO)
    summary = remember("Session summary: " + "worked on selectors " * 60, project=REPO, type="episodic")
    related = remember("Selectors live in memories/selectors.py.", type="semantic")
    handoff = handoff_create(
        caller=CLAUDE, summary="Selectors half done", next_steps=["finish recall"], project=REPO
    )

    context = selectors.context_get(caller=CODEX, task="work on the selectors", project=REPO)
    assert [m.id for m in context.preferences] == [pref.id]
    assert context.handoff is not None and context.handoff.id == handoff.id
    assert context.handoff.next_steps == ["finish recall"]
    assert [m.id for m in context.recent] == [summary.id]
    assert len(context.recent[0].content) == 801 and context.recent[0].content.endswith("…")
    assert [m.id for m in context.project] == [rule.id]
    relevant = [m.id for m in context.relevant]
    assert related.id in relevant and rule.id not in relevant, "a project rule is not repeated in relevant"
    assert context.truncated is None


def test_context_budget_is_never_exceeded_and_truncation_is_flagged() -> None:
    for n in range(30):
        remember(f"Rule {n}: " + "keep the modules small and well named. " * 10, project=REPO)
    remember("Tiny rule.", project=REPO)
    context = selectors.context_get(caller=CODEX, project=REPO, budget_tokens=1)  # clamped up to 200
    used = sum(selectors.estimate_tokens(m) for m in context.project)
    assert context.truncated is True and 0 < used <= 200
    assert "Tiny rule." in [m.content for m in context.project], "smaller later items still fit"
    with pytest.raises(InvalidInput, match="must not be negative"):
        selectors.context_get(caller=CODEX, budget_tokens=-5)


def test_budget_estimate_counts_utf8_bytes_scope_and_steps() -> None:
    view = MemoryView(
        id="x",
        type="temporary",
        scope="user",
        content="가나다",
        source_agent="a",
        trust="agent",
        created_at=clock.now(),
        next_steps=["ab", "다"],
    )
    assert selectors.estimate_tokens(view) == (9 + 4 + (2 + 4) + (3 + 4)) // 3 + 40


# --- handoff / resume / forget ------------------------------------------------------------------------


def test_handoff_lifecycle_one_active_per_project_first_resumer_kept() -> None:
    first = handoff_create(caller=CLAUDE, summary="Step one done", project=REPO)
    memory = Memory.objects.get(pk=first.id)
    assert memory.expires_at - memory.created_at == timedelta(days=7)
    second = handoff_create(
        caller=CLAUDE, summary="Step two done", next_steps=["  ship it ", "", "tell the team"], project=REPO
    )
    assert Memory.objects.get(pk=first.id).status == "superseded"
    assert str(Memory.objects.get(pk=second.id).supersedes_id) == first.id

    resumed = handoff_resume(caller=CODEX, project=REPO).handoff
    assert resumed is not None and resumed.id == second.id
    assert (resumed.resumed_by, resumed.next_steps) == ("codex", ["ship it", "tell the team"])
    assert handoff_resume(caller=CLAUDE, project=REPO).handoff.resumed_by == "codex"
    assert selectors.context_get(caller=CLAUDE, project=REPO).handoff is None
    assert handoff_resume(caller=CLAUDE).handoff is None, "other scope"


def test_expired_handoffs_are_not_resumed() -> None:
    start = clock.now()
    with clock.frozen(start):
        handoff_create(caller=CLAUDE, summary="Short-lived", project=REPO, ttl_seconds=60)
    with clock.frozen(start + timedelta(minutes=2)):
        assert handoff_resume(caller=CODEX, project=REPO).handoff is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"summary": ""}, "summary must not be empty"),
        ({"summary": "ok", "next_steps": ["x"] * 21}, "21 steps; the limit is 20"),
        ({"summary": "ok", "next_steps": ["x" * 1001]}, r"next_steps\[0\] is 1001 characters"),
        (
            {"summary": "ok", "next_steps": ["fine", f"use {FAKE_AWS_KEY}"]},
            r"next_steps\[1\] appears to contain",
        ),
        ({"summary": "ok", "ttl_seconds": 31 * 86400}, "the limit is 30 days"),
    ],
)
def test_bad_handoffs_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        handoff_create(caller=CLAUDE, **kwargs)
    assert Memory.objects.count() == 0


def test_forget_soft_deletes_and_keeps_the_first_record() -> None:
    memory = remember("Old fact.", project=REPO)
    result = memory_forget(caller=CODEX, memory_id=memory.id, reason=f"wrong; key {FAKE_AWS_KEY}")
    assert (result.id, result.status) == (memory.id, "deleted")
    memory_forget(caller=CLAUDE, memory_id=memory.id.upper(), reason="again")
    row = Memory.objects.get(pk=memory.id)
    assert row.attrs["forgotten_by"] == "codex"
    assert row.attrs["forget_reason"] == "wrong; key [REDACTED:aws-access-key]"
    assert recall_ids("old fact", project=REPO) == []
    with pytest.raises(NotFound):
        memory_forget(caller=CODEX, memory_id="01a22cd3-fb12-7f08-8738-778c8375fde5")
    with pytest.raises(InvalidInput, match="is not a memory id"):
        memory_forget(caller=CODEX, memory_id="{01a22cd3-fb12-7f08-8738-778c8375fde5}")
