"""The retrieval pipeline against real local provider servers: vectors, fusion, rerank, graph, signals."""

import hashlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import numpy
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from access.caller import Caller
from kenfold import clock
from memories import selectors
from memories.models import Memory, MemoryEdge, MemoryEmbedding
from memories.providers import configured
from memories.search import fulltext, learned_rank, retrieval
from memories.search.embedding_store import backfill, store_vectors
from memories.search.hits import WHOLE_TEXT
from memories.search.retrieval import SearchOptions, has_recency_intent
from memories.search.vector import vector_hits, vector_search
from memories.services import delivery
from memories.services.remember import memory_remember
from memories.services.review import memory_forget
from tests.provider_servers import ProviderServer, Received, Reply, openai_embeddings, provider_server

pytestmark = pytest.mark.django_db

AGENT = Caller(agent="claude-code")
REPO = "github.com/acme/payments"
IDEMPOTENT = "Payments are idempotent on the event id."
DARK_MODE = "The docs site uses dark mode."
VECTOR_ONLY_QUERY = "how do we avoid charging twice"


@contextmanager
def embedding_server() -> Iterator[ProviderServer]:
    with provider_server(openai_embeddings) as server:
        yield server


def remember(content: str, **kwargs: object) -> str:
    return memory_remember(caller=AGENT, content=content, project=REPO, **kwargs).id


def recall(query: str, **options: object) -> list[str]:
    result = selectors.memory_recall(
        caller=AGENT, query=query, project=REPO, options=SearchOptions(**options)
    )
    return [m.id for m in result.memories]


def use_embedder(provider_env: Callable[..., None], url: str, name: str = "fake-embed") -> None:
    provider_env(
        KENFOLD_EMBED_URL=url, KENFOLD_EMBED_MODEL="fake", KENFOLD_EMBED_NAME=name, KENFOLD_EMBED=None
    )


def test_vector_only_match_and_distance_cutoff(provider_env: Callable[..., None], settings) -> None:
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        target = remember(IDEMPOTENT)
        remember(DARK_MODE)
        assert recall(VECTOR_ONLY_QUERY, vectors=False) == [], "no word in common"
        assert recall(VECTOR_ONLY_QUERY)[0] == target
        assert MemoryEmbedding.objects.filter(model="fake-embed").count() == 2
        settings.RETRIEVAL = {**settings.RETRIEVAL, "max_distance": 0.01}
        assert recall(VECTOR_ONLY_QUERY) == [], "matches beyond the cutoff are dropped"


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_vector_search_runs_beside_the_lexical_one(
    provider_env: Callable[..., None],
) -> None:
    """As served (no transaction around a tool call), the query is embedded on a worker thread beside the
    lexical search, once per model and text (later searches reuse the vector). A search alone in its
    process runs the vector search in that thread too, on a pooled connection of its own; while another
    search runs, on the request's connection. Both find the same. Another embedding server (a settings
    change) starts with no cached vectors."""
    from django.db import connection

    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        target = remember(IDEMPOTENT)
        other = remember(DARK_MODE)
        assert not connection.in_atomic_block
        assert recall(VECTOR_ONLY_QUERY)[0] == target
        assert recall("dark mode docs")[0] == other
        for _ in range(20):  # connections go back to the pool: repeated searches never exhaust it
            assert recall(VECTOR_ONLY_QUERY)[0] == target
        alone = [recall(VECTOR_ONLY_QUERY), recall("dark mode docs")]
        with retrieval._search_slot() as first:  # as if another request were searching
            assert first
            busy = [recall(VECTOR_ONLY_QUERY), recall("dark mode docs")]
        assert busy == alone
        received = [r for r in server.received if "input" in (r.json or {})]
        embedded = [r for r in received if VECTOR_ONLY_QUERY in str(r.json["input"])]
        assert len(embedded) == 1, "the query was embedded once, then its vector reused"
    with provider_server(lambda r: Reply(status=503, json={"error": "loading model"})) as down:
        use_embedder(provider_env, down.url)
        assert recall(VECTOR_ONLY_QUERY) == [], "no vector of the previous server is used"
        assert recall("idempotent payments") == [target], "a failing embedder still leaves full-text"


@pytest.mark.django_db(transaction=True)
def test_the_admission_gate_count_decides_whether_the_vector_search_runs_beside(
    provider_env: Callable[..., None],
) -> None:
    """The HTTP server's adapters hand recall and get_context the admission gate's count of requests at
    work. With only the search's own request at work, the vector search runs on a pooled connection of
    its own beside the lexical one; with another request at work, on the request's connection. Without
    a count (stdio, commands), a search alone in its process runs beside. The answers are the same."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        # Facts, not project rules: get_context lists those in `project`, not among the task's `relevant`.
        target = remember(IDEMPOTENT, type="semantic")
        remember(DARK_MODE, type="semantic")
        counted: list[int] = []

        def at_work(count: int) -> Callable[[], int]:
            def running() -> int:
                counted.append(count)
                return count

            return running

        def vector_searches_on_this_connection(
            search: Callable[[Callable[[], int] | None], list[str]], count: int | None
        ) -> int:
            with CaptureQueriesContext(connection) as queries:
                assert search(None if count is None else at_work(count))[0] == target
            return sum("<=>" in query["sql"] for query in queries.captured_queries)

        def recall_ids(requests_running: Callable[[], int] | None) -> list[str]:
            found = selectors.memory_recall(
                caller=AGENT, query=VECTOR_ONLY_QUERY, project=REPO, requests_running=requests_running
            )
            return [m.id for m in found.memories]

        def context_ids(requests_running: Callable[[], int] | None) -> list[str]:
            context = delivery.context_deliver(
                caller=AGENT, task=VECTOR_ONLY_QUERY, project=REPO, requests_running=requests_running
            )
            return [m.id for m in context.relevant]

        for search_ids in (recall_ids, context_ids):
            assert vector_searches_on_this_connection(search_ids, 1) == 0, "alone: beside, in a thread"
            assert vector_searches_on_this_connection(search_ids, 2) >= 1, "busy: on the request's connection"
            assert vector_searches_on_this_connection(search_ids, None) == 0, "no gate: alone"
        assert counted == [1, 2, 1, 2], "the count is read once per search, as it starts"


@pytest.mark.django_db(transaction=True)
def test_local_models_find_a_memory_written_in_the_other_language(provider_env: Callable[..., None]) -> None:
    """Both local models embed every write; the multilingual one's ranking finds an English memory for a
    Korean question that shares no word with it, and the backfill fills in a model that is missing."""
    provider_env(KENFOLD_EMBED="local", KENFOLD_EMBED_URL=None)
    english = remember("Refunds are paid back to the original card within five business days.")
    remember("The staging database is reset every Sunday night.")
    remember("Use tabs, not spaces, in the Makefile.")
    models = set(MemoryEmbedding.objects.filter(memory_id=english).values_list("model", flat=True))
    assert models == {"all-minilm-l6-v2-int8", "use-multilingual-v3"}
    korean_question = "환불은 언제 카드로 돌아와?"
    assert recall(korean_question, vectors=False) == [], "no word in common"
    # MiniLM reads Korean as noise: alone it does not even return the memory; beside the multilingual
    # model its ranking of a Korean question is left out, so its noise cannot outvote the right answer.
    provider_env(KENFOLD_EMBED="local-english", KENFOLD_EMBED_URL=None)
    assert english not in recall(korean_question)[:1]
    provider_env(KENFOLD_EMBED="local", KENFOLD_EMBED_URL=None)
    assert recall(korean_question)[0] == english

    MemoryEmbedding.objects.filter(model="use-multilingual-v3").delete()
    reports = [backfill(embedder=embedder) for embedder in configured.embedders()]
    assert [r.embedded for r in reports] == [0, 3], "only the missing model's vectors are written"
    assert recall(korean_question)[0] == english


@pytest.mark.django_db(transaction=True)
def test_an_asymmetric_http_model_is_told_queries_from_passages(
    provider_env: Callable[..., None], settings
) -> None:
    """Memories are embedded as passages and questions as queries: each side with its configured prefix
    and input_type, as e5-style servers expect; the stored content itself never carries the prefix."""
    # The scripted server hashes the prefixes as words too, which pushes the pair past the 0.55 cutoff.
    settings.RETRIEVAL = {**settings.RETRIEVAL, "max_distance": 1.0}
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        provider_env(
            KENFOLD_EMBED_QUERY_PREFIX="query: ",
            KENFOLD_EMBED_PASSAGE_PREFIX="passage: ",
            KENFOLD_EMBED_INPUT_TYPE="search_query,search_document",
        )
        target = remember(IDEMPOTENT)
        assert recall(VECTOR_ONLY_QUERY)[0] == target
        sent = [(r.json["input"], r.json.get("input_type")) for r in server.received]
    assert sent == [
        ([f"passage: {IDEMPOTENT}"], "search_document"),
        ([f"query: {VECTOR_ONLY_QUERY}"], "search_query"),
    ]
    assert Memory.objects.get(id=target).content == IDEMPOTENT


@pytest.mark.django_db(transaction=True)
def test_http_plus_local_ranks_with_the_served_model_beside_both_local_ones(
    provider_env: Callable[..., None],
) -> None:
    """KENFOLD_EMBED=http+local: every write gets the served model's vector and both local ones; each is
    its own ranking, so a search still finds by vector when the server is down."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        provider_env(KENFOLD_EMBED="http+local")
        english = remember("Refunds are paid back to the original card within five business days.")
        target = remember(IDEMPOTENT)
        remember(DARK_MODE)
        models = set(MemoryEmbedding.objects.filter(memory_id=target).values_list("model", flat=True))
        assert models == {"fake-embed", "all-minilm-l6-v2-int8", "use-multilingual-v3"}
        assert recall(VECTOR_ONLY_QUERY)[0] == target, "the served model's synonyms match"
        assert len([r for r in server.received if VECTOR_ONLY_QUERY in str(r.json["input"])]) == 1
    with provider_server(lambda r: Reply(status=503, json={"error": "loading model"})) as down:
        use_embedder(provider_env, down.url)
        provider_env(KENFOLD_EMBED="http+local")
        assert recall("환불은 언제 카드로 돌아와?")[0] == english, "the local multilingual model still ranks"


def test_cross_language_fusion_stops_counting_blind_rankings_against_a_memory(
    provider_env: Callable[..., None], settings
) -> None:
    """A Korean question: full-text search finds the Korean summary (shared words) and cannot read the
    English rule; the vector ranking puts the rule first. Plain fusion counts the full-text search's
    silence against the rule; cross-language fusion does not, and the rule comes first."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        rule = remember("Payments are idempotent on the event id.")
        summary = remember("세션 요약: 결제 중복 문제 웹훅 재시도 확인 완료")
        settings.RETRIEVAL = {**settings.RETRIEVAL, "learned_rank": False, "cross_language": 0.0}
        assert recall("결제 중복") == [summary, rule]
        settings.RETRIEVAL = {**settings.RETRIEVAL, "cross_language": 1.0}
        assert recall("결제 중복") == [rule, summary]
        assert recall("payments idempotent")[0] == rule, "same-script questions are unchanged"


def test_script_weight_lets_the_multilingual_ranking_decide_for_korean_questions(
    provider_env: Callable[..., None], settings
) -> None:
    """A Korean question: full-text search finds the Korean summary, the multilingual ranking puts the
    English rule first. Weighted up for questions in Korean, the multilingual ranking outweighs the
    full-text search; at 1 (off) the summary stays first; English questions are not weighted."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        rule = remember("Payments are idempotent on the event id.")
        summary = remember("세션 요약: 결제 중복 문제 웹훅 재시도 확인 완료")
        settings.RETRIEVAL = {
            **settings.RETRIEVAL,
            "learned_rank": False,
            "cross_language": 0.0,
            "bridge_weight": 0.0,
            "script_weight": 1.0,
        }
        assert recall("결제 중복") == [summary, rule]
        english = recall("payments idempotent")
        settings.RETRIEVAL = {**settings.RETRIEVAL, "script_weight": 6.0}
        assert recall("결제 중복") == [rule, summary]
        assert recall("payments idempotent") == english


def test_bridge_ranking_finds_a_korean_rule_for_an_english_question_and_can_be_switched_off(
    provider_env: Callable[..., None], settings
) -> None:
    """An English question about production deploys shares no word with the Korean rule that answers it;
    a Korean session summary names `production` beside `운영 배포`, so the bridge ranking (English
    questions, the local multilingual model) lifts the rule, which shares those words. At weight 0 the
    plain order returns; the same store always answers the same; Korean questions are left alone."""
    provider_env(KENFOLD_EMBED="local-multilingual", KENFOLD_EMBED_URL=None)
    remember("Production logs are kept for 30 days in the logs bucket.")
    remember("Production database backups run every night at 03:00 UTC.")
    remember("Production alerts for the shop go to the on-call channel.")
    remember("The staging cluster is rebuilt every night from the main branch.")
    rule = remember("운영 배포는 화요일과 목요일 오후 2시에만 수동 승인으로 진행한다.")
    summary = remember("세션 요약: production 잡을 수동 승인 방식으로 바꾸고 운영 배포 창을 정했다.")
    remember("장바구니 조회 API 성능 개선 중, 남은 작업은 캐시 적용.")
    query = "On which days can the shop go to production?"
    settings.RETRIEVAL = {**settings.RETRIEVAL, "learned_rank": False, "bridge_weight": 0.0}
    off = recall(query)
    korean_off = recall("운영 배포는 언제 해?")
    # A weight above the default's, so that in this seven-memory store the bridge alone decides.
    settings.RETRIEVAL = {**settings.RETRIEVAL, "bridge_weight": 2.0}
    on = recall(query)
    assert off.index(rule) > 1, "without the bridge, English memories sharing `production` come first"
    assert on[0] == rule, "the summary holding `production` bridges to the rule's Korean words"
    assert on.index(summary) > 0, "the summary gets no credit from its own words"
    assert recall(query) == on, "deterministic"
    assert recall("운영 배포는 언제 해?") == korean_off


def test_learned_order_reads_every_candidate_and_can_be_switched_off(
    provider_env: Callable[..., None], settings
) -> None:
    """With the learned order, search scores the first stage's candidates by the shipped model: scores are
    its probabilities, in (0, 1), best first. Switched off, the plain fusion order and scores return (first
    in every ranking scores 1.0)."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        target = remember(IDEMPOTENT)
        remember("Payment retries use exponential backoff.")
        remember(DARK_MODE)
        query = "are payments idempotent on the event id"

        def scored(**retrieval: object) -> list[tuple[str, float]]:
            settings.RETRIEVAL = {**settings.RETRIEVAL, **retrieval}
            result = selectors.memory_recall(caller=AGENT, query=query, project=REPO)
            return [(m.id, m.score) for m in result.memories]

        plain = scored(learned_rank=False)
        assert plain[0] == (target, 1.0)
        learned = scored(learned_rank=True)
        assert learned[0][0] == target
        assert {memory_id for memory_id, _ in learned} == {memory_id for memory_id, _ in plain}
        scores = [score for _, score in learned]
        assert all(0 < score < 1 for score in scores) and scores == sorted(scores, reverse=True)
        trace: list = []
        selectors.memory_recall(
            caller=AGENT, query=query, project=REPO, options=SearchOptions(trace=trace, learned_rank=False)
        )
        assert [len(vector) for vector in trace[0].values()] == [len(learned_rank.FEATURES)] * len(plain)


def test_other_model_vectors_are_ignored_until_the_backfill_reembeds(
    provider_env: Callable[..., None],
) -> None:
    with embedding_server() as server:
        use_embedder(provider_env, server.url, name="model-a")
        target = remember(IDEMPOTENT)
        # Switch models: no migration, the old vectors just stop counting.
        use_embedder(provider_env, server.url, name="model-b")
        assert recall(VECTOR_ONLY_QUERY) == []
        report = backfill(embedder=configured.embedders()[0])
        assert (report.embedded, report.failed, report.remaining) == (1, 0, 0)
        assert recall(VECTOR_ONLY_QUERY) == [target]
        assert set(MemoryEmbedding.objects.values_list("model", flat=True)) == {"model-a", "model-b"}


def test_provider_down_keeps_full_text_and_the_backfill_catches_up(provider_env: Callable[..., None]) -> None:
    with provider_server(lambda r: Reply(status=503, json={"error": "loading model"})) as down:
        use_embedder(provider_env, down.url)
        target = remember(IDEMPOTENT)
        assert MemoryEmbedding.objects.count() == 0
        assert recall("idempotent payments") == [target], "full-text still answers"
        assert recall(VECTOR_ONLY_QUERY) == []
    with embedding_server() as up:
        use_embedder(provider_env, up.url)
        assert backfill(embedder=configured.embedders()[0]).embedded == 1
        assert recall(VECTOR_ONLY_QUERY) == [target]


def test_backfill_skips_inputs_the_provider_refuses_and_never_restores_changed_content(
    provider_env: Callable[..., None],
) -> None:
    def picky(received: Received) -> Reply:
        if any("poison" in text for text in received.json["input"]):
            return Reply(status=400, json={"error": "input rejected"})
        return openai_embeddings(received)

    provider_env(KENFOLD_EMBED="off")
    good = remember("Refunds are allowed for 30 days.")
    bad = remember("This poison input is refused by the provider.")
    with provider_server(picky) as server:
        use_embedder(provider_env, server.url)
        report = backfill(embedder=configured.embedders()[0])
        assert (report.embedded, report.failed) == (1, 1)
        assert set(MemoryEmbedding.objects.values_list("memory_id", flat=True)) == {
            Memory.objects.get(pk=good).pk
        }
        # Content changed after a vector was computed (a redaction): the stale vector is replaced, never kept.
        Memory.objects.filter(pk=good).update(content="Refunds are allowed for [REDACTED].")
        backfill(embedder=configured.embedders()[0])
        embedding = MemoryEmbedding.objects.get(memory_id=good)
        assert embedding.content_md5 == hashlib.md5(b"Refunds are allowed for [REDACTED].").hexdigest()
        assert bad not in {str(m) for m in MemoryEmbedding.objects.values_list("memory_id", flat=True)}


def vector_filters(memory_id: str) -> set[tuple]:
    """The copies of its memory's filters that each vector row of `memory_id` carries."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT scope, status, type, expires_at FROM memory_embedding WHERE memory_id = %s", [memory_id]
        )
        return set(cursor.fetchall())


def test_vector_rows_follow_their_memory_status_scope_and_expiry(provider_env: Callable[..., None]) -> None:
    """The vector search filters on the scope, status, type and expiry each vector row carries; every change
    of the memory reaches them (the final ordering does not filter again, so a stale copy would show)."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        target = remember(IDEMPOTENT)
        memory = Memory.objects.get(pk=target)
        assert vector_filters(target) == {(memory.scope, "active", memory.type, None)}
        assert recall(VECTOR_ONLY_QUERY)[0] == target
        memory_forget(caller=AGENT, memory_id=target)
        assert vector_filters(target) == {(memory.scope, "deleted", memory.type, None)}
        assert target not in recall(VECTOR_ONLY_QUERY)
        past = clock.now() - timedelta(hours=1)
        Memory.objects.filter(pk=target).update(status="active", expires_at=past)
        assert vector_filters(target) == {(memory.scope, "active", memory.type, past)}
        assert target not in recall(VECTOR_ONLY_QUERY), "expired"
        Memory.objects.filter(pk=target).update(expires_at=None, scope="project:github.com/acme/other")
        assert target not in recall(VECTOR_ONLY_QUERY), "moved to another project"
        Memory.objects.filter(pk=target).update(scope=memory.scope)
        assert recall(VECTOR_ONLY_QUERY)[0] == target


@pytest.mark.django_db(transaction=True)
def test_a_vector_written_while_its_memory_is_superseded_copies_the_new_status(
    provider_env: Callable[..., None],
) -> None:
    """A backfill writes a vector while another transaction supersedes the memory: the copy waits for that
    commit and takes the new status, so no stale 'active' copy can put a superseded memory in results."""
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        target = remember(IDEMPOTENT)
        memory = Memory.objects.get(pk=target)
        MemoryEmbedding.objects.filter(memory_id=target).delete()
        vector = configured.embedders()[0].embed([IDEMPOTENT], timeout=10)[0]
        changed = threading.Event()

        def supersede() -> None:
            try:
                with transaction.atomic():
                    Memory.objects.filter(pk=target).update(status="superseded")
                    changed.set()
                    time.sleep(0.5)
            finally:
                connection.close()

        writer = threading.Thread(target=supersede)
        writer.start()
        assert changed.wait(5)
        started = time.monotonic()
        # The backfill's write: its own check still sees the memory active (the change is uncommitted).
        store_vectors(model="fake-embed", items=[(memory.pk, IDEMPOTENT, vector)])
        waited = time.monotonic() - started
        writer.join()
        assert waited >= 0.3, "the copy waited for the concurrent change to commit"
        assert vector_filters(target) == {(memory.scope, "superseded", memory.type, None)}
        assert recall(VECTOR_ONLY_QUERY) == []


def test_full_text_search_adds_the_words_of_its_best_matches(
    provider_env: Callable[..., None], settings
) -> None:
    """Without vectors (KENFOLD_EMBED=off) a second lexical search with the best match's other words
    (pseudo-relevance feedback) finds a memory that shares none of the question's words."""
    provider_env(KENFOLD_EMBED="off")
    best = remember("The webhook handler retries deliveries; payments stay idempotent on the event id.")
    related = remember("Duplicate charges are dropped by looking up the event id in processed_events.")
    unrelated = remember("The docs site uses dark mode.")
    found = recall("webhook retries")
    assert found[0] == best
    assert related in found, "found through 'event', a word of the best match"
    assert unrelated not in found
    settings.RETRIEVAL = {**settings.RETRIEVAL, "feedback": "off"}
    assert recall("webhook retries") == [best], "only the direct match without feedback"
    settings.RETRIEVAL = {**settings.RETRIEVAL, "feedback": "auto"}
    with embedding_server() as server:
        use_embedder(provider_env, server.url)
        backfill(embedder=configured.embedders()[0])
        assert recall("webhook retries", vectors=False) == found, "no vectors for this search: feedback on"

        def lexical_searches() -> int:
            with CaptureQueriesContext(connection) as captured:
                recall("webhook retries")
            return sum("ts_rank(" in query["sql"] for query in captured.captured_queries)

        assert lexical_searches() == 1, "auto: beside a vector ranking, no second lexical search"
        settings.RETRIEVAL = {**settings.RETRIEVAL, "feedback": "always"}
        assert lexical_searches() == 2


def rerank_by_text(preferred: str) -> Callable[[Received], Reply]:
    """A reranker that loves documents containing `preferred` and is lukewarm about the rest."""

    def answer(received: Received) -> Reply:
        docs = received.json["documents"]
        return Reply(
            json={
                "results": [
                    {"index": i, "relevance_score": 0.97 if preferred in d else 0.2}
                    for i, d in enumerate(docs)
                ]
            }
        )

    return answer


def test_rerank_success_reorders_and_reports_probabilities(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")
    first = remember("Webhook retries use exponential backoff with jitter, webhook retries.")
    second = remember("Webhook signatures are verified.")
    assert recall("webhook retries") == [first, second]
    with provider_server(rerank_by_text("signatures")) as reranker:
        provider_env(KENFOLD_RERANK_URL=reranker.url)
        result = selectors.memory_recall(caller=AGENT, query="webhook retries", project=REPO).memories
    assert [m.id for m in result] == [second, first]
    assert [m.score for m in result] == [0.97, 0.2]
    assert reranker.received[0].json["query"] == "webhook retries"


@pytest.mark.parametrize(
    "reply",
    [
        Reply(status=500, json={"error": "boom"}),
        Reply(json={"results": [{"index": 0, "relevance_score": 0.9}]}),  # wrong count
        Reply(json={"results": [{"index": 7, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]}),
        Reply(raw=b"<html>bad gateway</html>"),
    ],
    ids=["http-500", "wrong-count", "bad-index", "not-json"],
)
def test_rerank_failure_keeps_the_first_stage_order(provider_env: Callable[..., None], reply: Reply) -> None:
    provider_env(KENFOLD_EMBED="off")
    first = remember("Webhook retries use exponential backoff with jitter, webhook retries.")
    second = remember("Webhook signatures are verified.")
    with provider_server(lambda r: reply) as reranker:
        provider_env(KENFOLD_RERANK_URL=reranker.url)
        assert recall("webhook retries") == [first, second]
        assert reranker.received, "the reranker was asked"


def test_rerank_timeout_is_bounded_and_keeps_the_first_stage_order(
    provider_env: Callable[..., None], settings
) -> None:
    provider_env(KENFOLD_EMBED="off")
    first = remember("Webhook retries use exponential backoff with jitter, webhook retries.")
    second = remember("Webhook signatures are verified.")
    with provider_server(lambda r: Reply(delay=5, json={})) as slow:
        settings.RETRIEVAL = {**settings.RETRIEVAL, "rerank_timeout": 0.5}
        provider_env(KENFOLD_RERANK_URL=slow.url)
        started = time.monotonic()
        assert recall("webhook retries") == [first, second]
        assert time.monotonic() - started < 2.5


def test_graph_expansion_brings_derived_facts_only_with_a_working_reranker(
    provider_env: Callable[..., None],
) -> None:
    provider_env(KENFOLD_EMBED="off")
    summary = remember(
        "Session summary: fixed the checkout flow and discussed ledger cleanup.", type="episodic"
    )
    fact = remember("Refund amounts are stored in minor units.", type="codebase")
    MemoryEdge.objects.create(
        src_id=fact, relation="derived_from", dst_id=summary, source_agent="kenfold-extractor"
    )
    assert recall("checkout flow") == [summary]
    with provider_server(rerank_by_text("minor units")) as reranker:
        provider_env(KENFOLD_RERANK_URL=reranker.url)
        assert recall("checkout flow") == [fact, summary]
        assert recall("checkout flow", graph=False) == [summary]
    with provider_server(lambda r: Reply(status=500)) as broken:
        provider_env(KENFOLD_RERANK_URL=broken.url)
        assert recall("checkout flow") == [summary], "no graph neighbours without calibrated scores"


@pytest.mark.parametrize(
    "query",
    [
        "what did we change in the deploy script last time",
        "최근 배포 스크립트에서 뭐 바꿨지",
        "deploy script latest change",
    ],
)
def test_recency_intent_prefers_recent_memories_in_both_languages(
    provider_env: Callable[..., None], query: str
) -> None:
    provider_env(KENFOLD_EMBED="off")
    now = clock.now()
    with clock.frozen(now - timedelta(days=60)):
        old = remember(
            "Deploy script: changed the deploy script to build images; 배포 스크립트 변경, 배포 스크립트 change."
        )
    with clock.frozen(now - timedelta(days=1)):
        new = remember("Deploy script now tags releases; 배포 스크립트 change.")
    assert has_recency_intent(query)
    assert recall(query, recency=False)[0] == old
    assert recall(query)[0] == new


@pytest.mark.parametrize(
    ("query", "intent"),
    [
        ("last-write-wins conflict handling", False),
        ("the latest migration", True),
        ("이번주 작업", True),
        ("웹훅 재시도", False),
    ],
)
def test_recency_intent_detection(query: str, intent: bool) -> None:
    assert has_recency_intent(query) is intent


def test_vectors_are_stored_as_sent_and_found_nearest_first(provider_env: Callable[..., None]) -> None:
    """Vectors travel in pgvector's binary form (kenfold.db_functions.PgVector): what is stored is the
    float4 of each number sent, and a search with a stored vector finds its memory at distance 0."""
    provider_env(KENFOLD_EMBED="off")
    first = remember("The release checklist lives in docs/release.md.")
    second = remember("Payments retries back off exponentially.")
    numbers = [0.1 * (index % 7) - 0.3 + 1e-7 * index for index in range(384)]
    other = [0.05 * (index % 5) + 0.01 for index in range(384)]
    assert (
        store_vectors(
            model="fake-binary", items=[(first, "The release checklist lives in docs/release.md.", numbers)]
        )
        == 1
    )
    assert (
        store_vectors(
            model="fake-binary", items=[(second, "Payments retries back off exponentially.", other)]
        )
        == 1
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT embedding::real[] FROM memory_embedding WHERE memory_id = %s AND model = 'fake-binary'",
            [first],
        )
        (stored,) = cursor.fetchone()
    assert numpy.array_equal(
        numpy.array(stored, dtype=numpy.float32), numpy.array(numbers, dtype=numpy.float32)
    )
    found = vector_search(
        vector=numbers,
        model="fake-binary",
        scopes=[Memory.objects.get(pk=first).scope],
        types=None,
        now=clock.now(),
        limit=5,
        max_distance=2.0,
    )
    assert [str(memory_id) for memory_id, _ in found] == [first, second]
    assert found[0][1] == pytest.approx(0.0, abs=1e-6)


def test_rankers_send_each_memory_text_and_type_with_what_they_find(
    provider_env: Callable[..., None],
) -> None:
    """The lexical and vector rankers return each memory's text (whole, cut, or none) and type with its
    id, in their own statement: the fusion's cross-language steps read them there instead of querying
    the candidates again. The order is the one the id-only searches give."""
    provider_env(KENFOLD_EMBED="off")
    texts = [
        "The release checklist lives in docs/release.md and names the release owner.",
        "Release notes are written by the release owner before the tag.",
    ]
    first, second = (remember(text) for text in texts)
    scope = Memory.objects.get(pk=first).scope
    numbers = [0.1 * (index % 7) - 0.3 for index in range(384)]
    nearer = [value + 0.001 * (index % 3) for index, value in enumerate(numbers)]
    # The texts are the ones embedded: a vector of other text is not stored.
    assert (
        store_vectors(model="fake-hits", items=[(first, texts[0], numbers), (second, texts[1], nearer)]) == 2
    )
    now = clock.now()
    common = {"scopes": [scope], "types": None, "now": now, "limit": 5}
    lexical_ids = fulltext.lexical_search(query="release owner checklist", **common)
    for chars, expected in ((WHOLE_TEXT, None), (12, 12), (0, 0)):
        hits = fulltext.lexical_hits(query="release owner checklist", text_chars=chars, **common)
        assert [hit.memory_id for hit in hits] == lexical_ids
        nearest = vector_hits(vector=numbers, model="fake-hits", max_distance=2.0, text_chars=chars, **common)
        assert [hit.memory_id for hit in nearest] == [
            memory_id
            for memory_id, _ in vector_search(vector=numbers, model="fake-hits", max_distance=2.0, **common)
        ]
        for hit in [*hits, *nearest]:
            memory = Memory.objects.get(pk=hit.memory_id)
            assert hit.type == memory.type
            assert hit.text == (memory.content if expected is None else memory.content[:expected])
    assert {str(hit.memory_id) for hit in nearest} == {first, second}
