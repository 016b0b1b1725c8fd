"""Per-scope HNSW indexes (memories.search.scope_indexes): built outside any request without blocking writers,
searched only when every scope a search reads has a valid one, and finding what the model-wide graph
finds (on a store this small both searches are exact)."""

from collections.abc import Callable, Iterator
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection, transaction

from access.caller import Caller
from kenfold import clock
from kenfold.db_functions import PgVector, server_bound
from memories import selectors, tasks
from memories.search import scope_indexes
from memories.search.embedding_store import model_index_name, stored_dimensions
from memories.search.retrieval import SearchOptions
from memories.search.scope_indexes import build_scope_indexes, index_name
from memories.search.vector import _nearest_sql, _vector_conditions, vector_hits
from memories.services.remember import memory_remember
from tests.provider_servers import fake_embedding, openai_embeddings, provider_server
from tests.threads import held_open

pytestmark = pytest.mark.django_db(transaction=True)

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/payments"
PROJECT_SCOPE = "project:github.com/acme/payments"
MODEL = "fake-embed"
PROJECT_FACTS = [
    "Payments are idempotent on the event id.",
    "Refunds go back to the original card within five business days.",
    "The payments webhook retries three times with exponential backoff.",
    "Currency amounts are stored as integer minor units.",
]
USER_FACTS = [
    "I prefer small commits with a test in each.",
    "Use tabs, not spaces, in Makefiles.",
    "Answer in English even when I write Korean.",
]
QUESTIONS = ["how do we avoid charging twice", "refund card timing", "webhook retry policy", "commit style"]


@pytest.fixture
def store(provider_env: Callable[..., None]) -> Iterator[None]:
    """A project and the user's scope with a few memories each, embedded by a scripted HTTP model; the
    per-scope indexes the test built are dropped afterwards (indexes outlive a transactional test)."""
    with provider_server(openai_embeddings) as server:
        provider_env(
            KENFOLD_EMBED_URL=server.url,
            KENFOLD_EMBED_MODEL="fake",
            KENFOLD_EMBED_NAME=MODEL,
            KENFOLD_EMBED=None,
        )
        for content in PROJECT_FACTS:
            memory_remember(caller=AGENT, content=content, project=REPO, type="semantic")
        for content in USER_FACTS:
            memory_remember(caller=AGENT, content=content, type="semantic")
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                for name in scope_indexes._catalog_indexes(valid_only=False):
                    cursor.execute(f"DROP INDEX IF EXISTS {name}")
            scope_indexes.forget_cached()


def recall(query: str) -> list[str]:
    result = selectors.memory_recall(caller=AGENT, query=query, project=REPO, options=SearchOptions())
    return [memory.id for memory in result.memories]


def vector_ids(query: str) -> list[str]:
    hits = vector_hits(
        vector=fake_embedding(query),
        model=MODEL,
        scopes=selectors.read_scopes(REPO),
        types=None,
        now=clock.now(),
        limit=30,
        max_distance=2.0,
    )
    return [str(hit.memory_id) for hit in hits]


def dimensions() -> int:
    found = stored_dimensions(MODEL)
    assert found is not None
    return found


def name_of(scope: str) -> str:
    return index_name(model=MODEL, dimensions=dimensions(), scope=scope)


def plan_of(query: str) -> str:
    """EXPLAIN of the vector search's statement as it is built now: whether the planner can prove the
    per-scope indexes' predicates. On a few rows the model-wide graph costs the planner the same and
    sorting the scope's rows costs less, so both are taken away for the EXPLAIN (the DROP is rolled back).
    At 100,000 memories every per-scope part used its scope's graph with both there (docs/benchmarks.md)."""
    conditions, params = _vector_conditions(types=None, now=clock.now())
    scopes = selectors.read_scopes(REPO)
    vector = fake_embedding(query)
    sql = _nearest_sql(vector=vector, model=MODEL, scopes=scopes, conditions=conditions, limit=30)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off")
            cursor.execute(f"DROP INDEX IF EXISTS {model_index_name(MODEL, dimensions())}")
        rows = server_bound(
            "EXPLAIN " + sql, params | {"scopes": scopes, "query": PgVector(vector)}, prepare=False
        )
        transaction.set_rollback(True)
    return "\n".join(row[0] for row in rows)


def test_built_indexes_serve_the_searches_and_find_the_same(store: None) -> None:
    before = {question: (recall(question), vector_ids(question)) for question in QUESTIONS}
    scopes = selectors.read_scopes(REPO)
    assert not scope_indexes.covers(model=MODEL, dimensions=dimensions(), scopes=scopes)

    report = build_scope_indexes(min_model_vectors=1)

    assert (report.built, report.present, report.dropped, report.left, report.busy) == (2, 0, 0, 0, False)
    assert scope_indexes.covers(model=MODEL, dimensions=dimensions(), scopes=scopes)
    plan = plan_of(QUESTIONS[0])
    assert name_of("user") in plan and name_of(PROJECT_SCOPE) in plan, plan
    after = {question: (recall(question), vector_ids(question)) for question in QUESTIONS}
    assert after == before, "the per-scope graphs change how fast, never what is found"
    assert all(ids for ids, _vectors in after.values())

    again = build_scope_indexes(min_model_vectors=1)
    assert (again.built, again.present) == (0, 2), "a second run finds them built"


def test_a_model_below_the_minimum_gets_no_per_scope_index(store: None) -> None:
    report = build_scope_indexes()  # the default minimum: far more vectors than this store holds
    assert (report.built, report.present) == (0, 0)
    assert scope_indexes._catalog_indexes(valid_only=False) == []


def test_a_search_with_a_scope_lacking_its_index_walks_the_model_wide_graph(store: None) -> None:
    before = {question: vector_ids(question) for question in QUESTIONS}
    build_scope_indexes(min_model_vectors=1)
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name_of('user')}")
    scope_indexes.forget_cached()

    assert not scope_indexes.covers(model=MODEL, dimensions=dimensions(), scopes=selectors.read_scopes(REPO))
    assert name_of(PROJECT_SCOPE) not in plan_of(QUESTIONS[0]), "one scope unindexed: no per-scope parts"
    assert {question: vector_ids(question) for question in QUESTIONS} == before


def test_an_interrupted_build_is_ignored_then_dropped_and_built_again(store: None) -> None:
    """A build cut off (here by a statement timeout while a writer's open transaction holds the table, which
    a concurrent build waits for) leaves an invalid index. Searches ignore it; the next run drops it and
    builds it again."""
    with held_open("LOCK TABLE memory_embedding IN ROW EXCLUSIVE MODE"):
        with connection.cursor() as cursor:
            cursor.execute("SET statement_timeout = '300ms'")
        try:
            with pytest.raises(OperationalError):
                build_scope_indexes(min_model_vectors=1)
        finally:
            with connection.cursor() as cursor:
                cursor.execute("RESET statement_timeout")
    left = scope_indexes._catalog_indexes(valid_only=False)
    assert len(left) == 1 and scope_indexes._catalog_indexes(valid_only=True) == []
    scopes = selectors.read_scopes(REPO)
    assert not any(
        scope_indexes.covers(model=MODEL, dimensions=dimensions(), scopes=[scope]) for scope in scopes
    )

    report = build_scope_indexes(min_model_vectors=1)

    assert (report.built, report.dropped) == (2, 1)
    assert sorted(scope_indexes._catalog_indexes(valid_only=True)) == sorted(
        [name_of("user"), name_of(PROJECT_SCOPE)]
    )
    assert scope_indexes.covers(model=MODEL, dimensions=dimensions(), scopes=scopes)


def test_one_builder_at_a_time(store: None) -> None:
    with held_open("SELECT pg_advisory_xact_lock(hashtextextended('kenfold.scope_indexes', 0))"):
        report = build_scope_indexes(min_model_vectors=1)
    assert report.busy and report.built == 0
    assert scope_indexes._catalog_indexes(valid_only=False) == []


def test_building_refuses_to_run_inside_a_transaction(store: None) -> None:
    with transaction.atomic():
        with pytest.raises(RuntimeError, match="outside a transaction"):
            build_scope_indexes(min_model_vectors=1)
        # With nothing to build it runs anywhere: the worker's task in tests, small stores.
        assert build_scope_indexes().built == 0


def test_the_worker_and_reindex_build_them(store: None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "per-scope vector indexes: built 0, 0 present" in tasks.embeddings_backfill()
    monkeypatch.setattr(scope_indexes, "MIN_MODEL_VECTORS", 1)
    assert "per-scope vector indexes: built 2, 0 present" in tasks.embeddings_backfill()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX {name_of('user')}")
    out = StringIO()
    call_command("reindex", stdout=out, stderr=StringIO())
    assert (
        "Per-scope vector indexes: built 1 (0 left invalid by an interrupted build were rebuilt), "
        "1 already present." in out.getvalue()
    )
