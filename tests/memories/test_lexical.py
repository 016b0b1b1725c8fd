"""Query terms for full-text search: Korean stems, identifiers, paths, stop words, no tsquery injection."""

import pytest

from memories.lexical import build_query, korean_stem


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


@pytest.mark.parametrize("text", ["'); DROP TABLE memory; --", "a & b | !c <-> d", "*:A", "'quoted'", "!!!"])
def test_terms_never_carry_tsquery_syntax(text: str) -> None:
    for term in build_query(text).simple_terms:
        body = term.removesuffix(":*")
        assert body.startswith("'") and body.endswith("'") and "'" not in body[1:-1]
        assert not set(body[1:-1]) & set("&|!<>():*")
