"""The first-stage searches stay bounded on big stores: common words are searched in a recent window,
rare words over the whole history, and remember's trigram lookup gives up after its time budget."""

import threading
import time
from datetime import timedelta

import psycopg
import pytest
from django.conf import settings
from django.db import connection, transaction

from kenfold import clock
from memories.models import Memory, MemoryType, Status
from memories.search import fulltext
from memories.search.trigram import trigram_similar

SCOPE = "project:github.com/acme/shop"
OTHER = "project:github.com/acme/blog"


def add(content: str, *, scope: str = SCOPE, age_days: float = 0) -> Memory:
    now = clock.now() - timedelta(days=age_days)
    return Memory.objects.create(
        type=MemoryType.SEMANTIC,
        scope=scope,
        content=content,
        source_agent="codex",
        status=Status.ACTIVE,
        created_at=now,
        updated_at=now,
    )


def lexical(query: str, scopes: list[str] | None = None) -> list:
    return fulltext.lexical_search(
        query=query, scopes=scopes or [SCOPE], types=None, now=clock.now(), limit=50
    )


@pytest.fixture
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The production bounds scaled down (500 memories per common word, a 2,000-memory window) so a test
    store of a few dozen memories exercises the same paths."""
    monkeypatch.setattr(fulltext, "COMMON_DF", 5)
    monkeypatch.setattr(fulltext, "RECENT_WINDOW", 4)


@pytest.mark.django_db
def test_common_words_are_searched_in_the_recent_window_rare_words_everywhere(small_bounds: None) -> None:
    oldest = add("The deploy checklist lives in docs/deploy.md.", age_days=30)
    older = [add(f"Deploy note {i}: the deploy waits for green CI.", age_days=20 - i) for i in range(6)]
    newest = [add(f"Deploy note {i}: deploys run at noon.", age_days=1 - i * 0.1) for i in range(4)]
    add("The blog deploys on every push.", scope=OTHER)

    # "deploy" is in 11 memories (common at these bounds): only the 4 newest of the scope are candidates.
    assert set(lexical("deploy")) == {m.id for m in newest}
    # "checklist" is rare: its memory is found however old, and ranks first.
    found = lexical("deploy checklist")
    assert found[0] == oldest.id
    assert set(found) == {oldest.id} | {m.id for m in newest}
    assert not set(found) & {m.id for m in older}


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["정산금은 언제 지급돼?", "when are payouts sent", "RequireAPIKey"])
def test_an_empty_store_answers_every_query_with_nothing(query: str) -> None:
    # A new installation: no rows, never analyzed (a Korean stem once divided by the row count, zero).
    assert lexical(query) == []


@pytest.mark.django_db
def test_without_common_words_the_search_is_exhaustive(small_bounds: None) -> None:
    memories = [add(f"Invoice rounding rule number {i}.", age_days=i) for i in range(3)]
    add("Invoice rounding lives in the blog too.", scope=OTHER)
    assert set(lexical("invoice rounding")) == {m.id for m in memories}
    assert len(lexical("invoice rounding", [SCOPE, OTHER])) == 4


@pytest.mark.django_db
def test_each_scope_gets_its_own_window(small_bounds: None) -> None:
    mine = [add(f"Cache warmup step {i}.", age_days=i) for i in range(4)]
    theirs = [add(f"Cache warmup for the blog {i}.", scope=OTHER, age_days=i) for i in range(4)]
    assert set(lexical("cache warmup", [SCOPE, OTHER])) == {m.id for m in mine + theirs}


@pytest.mark.django_db
def test_korean_stems_count_as_common_by_their_completions(small_bounds: None) -> None:
    for i in range(8):
        add(f"정산금은 매일 {i}시에 지급된다.", age_days=10 + i)
    recent = add("정산금이 지연되면 알림을 보낸다.", age_days=0)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory")
    terms = fulltext._term_stats(["'정산금':*"], [False])
    assert len(terms) == 1 and terms[0].df >= fulltext.COMMON_DF, (
        "a prefix's statistics count its completions"
    )
    assert recent.id in lexical("정산금은 언제")


@pytest.mark.django_db(transaction=True)
def test_trigram_similar_gives_up_after_its_budget_and_restores_the_timeout() -> None:
    target = add("Payments are idempotent on the event id, retried for three days.")
    kwargs = {
        "memory_id": target.id,
        "content": "Payments are idempotent on the event id.",
        "scope": SCOPE,
        "threshold": 0.3,
        "limit": 5,
    }
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        before = cursor.fetchone()[0]

    # Another session holds the table: the lookup waits, and its budget (not the lock) ends the wait.
    locked, release = threading.Event(), threading.Event()
    db = settings.DATABASES["default"]

    def hold_lock() -> None:
        with psycopg.connect(
            dbname=db["NAME"], user=db["USER"], host=db["HOST"], port=db["PORT"], autocommit=False
        ) as other:
            other.execute("LOCK TABLE memory IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=hold_lock)
    holder.start()
    try:
        assert locked.wait(30)
        started = time.monotonic()
        assert trigram_similar(now=clock.now(), time_budget_ms=200, **kwargs) == []
        assert time.monotonic() - started < 5
    finally:
        release.set()
        holder.join(30)

    # Within budget it answers, outside and inside a caller's transaction, and leaves the setting as it was.
    other = add("Payments are idempotent on the event id.")
    assert [hit.memory_id for hit in trigram_similar(now=clock.now(), **kwargs)] == [other.id]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('pg_trgm.similarity_threshold', '0.3', true)")
        assert [hit.memory_id for hit in trigram_similar(now=clock.now(), **kwargs)] == [other.id]
        with connection.cursor() as cursor:
            cursor.execute("SHOW statement_timeout")
            assert cursor.fetchone()[0] == before
            # The lookup matches at its own threshold, then gives the caller's back.
            cursor.execute("SHOW pg_trgm.similarity_threshold")
            assert cursor.fetchone()[0] == "0.3"
    with connection.cursor() as cursor:
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == before


@pytest.mark.django_db
def test_trigram_similar_matches_at_the_threshold_asked_for_whatever_the_sessions() -> None:
    # The lookup tests `%` alone: it must stand for similarity >= the threshold given, not the session's.
    stored = add("The payments service retries webhooks three times.")
    content = "The payments service retries webhooks five times, then alerts."
    with connection.cursor() as cursor:
        cursor.execute("SELECT similarity(%s, %s)", [stored.content, content])
        similarity = cursor.fetchone()[0]
    assert 0.3 < similarity < 0.9

    def found(threshold: float) -> list:
        hits = trigram_similar(
            memory_id=add("unrelated").id,
            content=content,
            scope=SCOPE,
            now=clock.now(),
            threshold=threshold,
            limit=5,
        )
        return [(hit.memory_id, round(hit.score, 4)) for hit in hits]

    for session_threshold in ("0.1", "0.95"):
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('pg_trgm.similarity_threshold', %s, true)", [session_threshold]
                )
            assert found(similarity - 0.01) == [(stored.id, round(similarity, 4))]
            assert found(similarity + 0.01) == []
