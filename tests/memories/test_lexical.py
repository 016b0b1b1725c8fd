"""Query terms for full-text search: Korean stems, identifiers, paths, stop words, no tsquery injection."""

from uuid import UUID

import pytest

from kenfold import clock
from memories.models import Memory, MemoryType, Status
from memories.search import fulltext
from memories.search.lexical import LexicalQuery, build_query, korean_stem

SCOPE = "project:github.com/acme/shop"


@pytest.mark.parametrize(
    ("word", "stem"),
    [
        ("정산금은", "정산금"),
        ("지급돼", "지급"),
        ("웹훅을", "웹훅"),
        ("재시도해", "재시도"),
        ("배포", "배포"),
        ("에서", "에서"),
    ],
)
def test_korean_particles_and_endings_are_stripped_keeping_two_syllables(word: str, stem: str) -> None:
    assert korean_stem(word) == stem


def test_korean_words_become_prefix_stems_and_question_words_are_dropped() -> None:
    query = build_query("가맹점 정산금은 언제 지급돼?")
    assert query.simple_terms == ("'가맹점':*", "'정산금':*", "'지급':*")
    assert query.english_terms == ()


def test_identifiers_paths_and_mixed_script_words() -> None:
    query = build_query("what does refreshSession() in src/lib/auth.ts do? 3DS challenge는")
    assert "'refreshsession'" in query.simple_terms and "'refresh'" in query.simple_terms
    assert "'src/lib/auth.ts'" in query.simple_terms, "a path is one lexeme in the simple vector"
    assert "'3ds'" in query.simple_terms and "'challenge'" in query.simple_terms
    assert "'는'" not in query.simple_terms, "a bare particle is no term"
    assert {"refresh", "session", "challenge"} <= set(query.english_terms)
    assert "what" not in query.english_terms and "does" not in query.english_terms


@pytest.mark.parametrize("text", ["'); DROP TABLE memory; --", "a & b | !c <-> d", "'quoted'"])
def test_terms_never_carry_tsquery_syntax(text: str) -> None:
    terms = build_query(text).simple_terms
    assert terms, "the query's words are still searched"
    for term in terms:
        body = term.removesuffix(":*")
        assert body.startswith("'") and body.endswith("'") and "'" not in body[1:-1]
        assert not set(body[1:-1]) & set("&|!<>():*")


@pytest.mark.parametrize("text", ["*:A", "!!!"])
def test_a_query_of_only_tsquery_syntax_has_no_terms(text: str) -> None:
    # A one-letter word and punctuation are no terms: nothing is left to hand to to_tsquery.
    assert build_query(text) == LexicalQuery(simple_terms=(), english_terms=())


@pytest.mark.django_db
def test_a_search_with_tsquery_syntax_finds_by_words_and_never_fails() -> None:
    now = clock.now()
    rule = Memory.objects.create(
        type=MemoryType.SEMANTIC,
        scope=SCOPE,
        content="Rule A!!! Never DROP TABLE memory in a migration; rename the table instead.",
        source_agent="codex",
        status=Status.ACTIVE,
        created_at=now,
        updated_at=now,
    )

    def found(query: str) -> list[UUID]:
        return fulltext.lexical_search(query=query, scopes=[SCOPE], types=None, now=now, limit=10)

    # Raw, `*:A` would be a prefix search on weight A and `!!!` a tsquery syntax error: both find nothing.
    assert found("*:A") == []
    assert found("!!!") == []
    assert found("'); DROP TABLE memory; --") == [rule.id]
    assert Memory.objects.filter(id=rule.id).exists()
