"""The secret filter's shortcuts decide nothing: each one skips work only where the full pattern could not
match, so the filter's findings are the same with and without them.

Windows are made at run time from a fixed seed, from the words the patterns look for and the characters
around them that the patterns' edges test (letters of other scripts, case changes, "_", digits).
"""

import random
import re

import pytest

from kenfold_common import secrets

_RNG = random.Random(8)
_ASCII = "".join(chr(code) for code in range(128))


def _cue_words() -> tuple[str, ...]:
    return secrets._CONTEXT_ENGLISH_CUES + secrets._CONTEXT_FOREIGN_CUES + secrets._CONTEXT_UNSPACED_WORDS


def test_no_ascii_character_matches_a_letter_of_another_scripts_cue_in_any_case():
    letters = {char for word in _cue_words() for char in word if not char.isascii()}
    assert letters
    matching = {
        (letter, char) for letter in letters for char in re.findall(re.escape(letter), _ASCII, re.IGNORECASE)
    }
    assert matching == set()


def test_ascii_characters_match_the_ascii_cue_letters_exactly_where_their_lowered_forms_agree():
    letters = {char for word in _cue_words() for char in word if char.isascii()}
    for letter in letters:
        matched = set(re.findall(re.escape(letter), _ASCII, re.IGNORECASE))
        assert matched == {char for char in _ASCII if char.lower() == letter.lower()}, letter


def _full_word_cues(text: str) -> list[tuple[int, int, str]]:
    """_word_cues without its shortcut: the cue pattern over the whole window."""
    return [
        (cue.start(), cue.end(), cue[0])
        for cue in secrets._CONTEXT_CUE_RE.finditer(text)
        if not secrets._looks_random(secrets._cue_run(text, cue.start(), cue.end()))
    ]


_NOISE = ["the", "Prod", " ", "_", ".", "-", ":", "=", "401", "40", "3", "sk", "PAT", "pat", "é", "ı", "K", "\n"]  # fmt: skip


def _window(words: list[str]) -> str:
    pieces = []
    for _ in range(_RNG.randint(1, 6)):
        piece = _RNG.choice(words) if _RNG.random() < 0.4 else _RNG.choice(_NOISE)
        pieces.append(piece.upper() if _RNG.random() < 0.2 else piece)
    return "".join(pieces)


@pytest.mark.parametrize("script", ["ascii", "any"])
def test_word_cues_with_the_shortcut_are_the_cue_patterns_matches(script):
    words = [word for word in _cue_words() if script == "any" or word.isascii()]
    windows = [_window(words) for _ in range(4000)]
    if script == "ascii":
        windows = [window for window in windows if window.isascii()]
    found = 0
    for window in windows:
        expected = _full_word_cues(window)
        found += bool(expected)
        assert [(cue.start(), cue.end(), cue[0]) for cue in secrets._word_cues(window)] == expected, window
    # The windows hold cues and windows without any, so both paths are taken.
    assert 0 < found < len(windows)


def _anchor_tuples() -> list[tuple[str, ...]]:
    return sorted({rule.anchor_words for rule in secrets._RULES if rule.anchor_words is not None})


def _expected_anchor_starts(text: str, words: tuple[str, ...]) -> tuple[int, ...] | None:
    """Where the anchored rules may start, found word by word: in ASCII text every place where a word
    starts, in other scripts the starts of a longest-first alternation's matches."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return None
    if text.isascii():
        return tuple(
            sorted(
                {start for word in words for start in range(len(lowered)) if lowered.startswith(word, start)}
            )
        )
    alternation = re.compile("|".join(re.escape(word) for word in sorted(words, key=len, reverse=True)))
    return tuple(found.start() for found in alternation.finditer(lowered))


@pytest.mark.parametrize("script", ["ascii", "any"])
def test_anchor_starts_found_once_for_all_rules_are_each_rules_word_starts(script):
    tuples = _anchor_tuples()
    words = sorted({word for words in tuples for word in words if script == "any" or word.isascii()})
    # Words glued together ("passwordkey", "tokens") start inside one another.
    texts = ["".join(_window(words) for _ in range(_RNG.randint(1, 4))) for _ in range(1500)]
    if script == "ascii":
        texts = [text for text in texts if text.isascii()]
    found = 0
    for text in texts:
        anchors = secrets._AnchorStarts(text)
        for anchor_words in tuples:
            expected = _expected_anchor_starts(text, anchor_words)
            found += bool(expected)
            assert anchors.starts(anchor_words) == expected, (text, anchor_words[:3])
    assert found > len(texts)


def test_each_rules_required_string_starts_every_match_as_the_regex_engine_reads_the_pattern():
    from re import _compiler, _parser  # the engine's own reading of a pattern's literal start

    with_one = 0
    for rule in secrets._RULES + secrets._MASKED_RULES:
        parsed = _parser.parse(rule.pattern.pattern, rule.pattern.flags)
        engine_prefix = "".join(map(chr, _compiler._get_literal_prefix(parsed, rule.pattern.flags)[0]))
        prefix = secrets._literal_prefix(rule.pattern)
        assert engine_prefix.startswith(prefix), rule.id
        assert rule.required == (prefix or rule.hint)
        with_one += bool(prefix)
    # Most format rules start with their token's prefix.
    assert with_one > 100


@pytest.mark.parametrize(
    ("source", "prefix"),
    [
        (r"ghp_[A-Za-z0-9]{36}", "ghp_"),
        (r"sk\.eyJ[A-Za-z]+", "sk.eyJ"),
        (r"xox[baprs]-", "xox"),
        (r"abcd?e", "abc"),
        (r"ab+c", "ab"),
        (r"ab{2}c", "a"),
        (r"\bkey", ""),
        (r"(?<![A-Za-z])key", ""),
        (r"key|token", ""),
        (r"key(?:s|z)|token", ""),
        (r"key[|]token", "key"),
        (r"key\|token", "key|token"),
        (r"ke(?:y|z)", "ke"),
        (r"k[]|]|token", ""),
    ],
)
def test_a_patterns_literal_start_stops_before_anything_not_in_every_match(source, prefix):
    assert secrets._literal_prefix(re.compile(source)) == prefix


def test_a_case_insensitive_pattern_has_no_required_start():
    assert secrets._literal_prefix(re.compile("ghp_", re.IGNORECASE)) == ""


def test_placeholder_material_taken_out_of_lowered_ascii_leaves_as_many_letters_and_digits():
    alphabet = "abcdefxyzABCDEFXYZ0123456789_-."
    words = ["example", "EXAMPLE", "Sample", "your", "KEY", "test", "0123456789", "123456", "abcdef", "xxxx"]
    for _ in range(3000):
        body = "".join(
            _RNG.choice(words) if _RNG.random() < 0.2 else _RNG.choice(alphabet)
            for _ in range(_RNG.randint(4, 40))
        )
        remaining = secrets._PLACEHOLDER_MATERIAL_RE.sub("", body)
        expected = sum(char.isalnum() for char in remaining) < secrets._MIN_RANDOM_BODY
        assert secrets._is_placeholder_body(body) == expected, body


def test_a_lowered_twin_finds_in_lowered_ascii_text_what_the_case_insensitive_pattern_finds():
    twins = [
        (rule.hint_pattern, rule.lowered_hint_pattern)
        for rule in secrets._RULES
        if rule.hint_pattern is not None and rule.lowered_hint_pattern is not None
    ]
    twins.append((secrets._PLACEHOLDER_MATERIAL_RE, secrets._LOWERED_PLACEHOLDER_MATERIAL_RE))
    words = [
        "Password",
        "PASSPHRASE",
        "secret",
        "Token",
        "KEY",
        "is",
        "WAS",
        "=",
        ":",
        "Example",
        "aaAA",
        "abcdef",
    ]
    hits = 0
    for pattern, twin in twins:
        assert twin is not None
        for _ in range(2000):
            text = "".join(_RNG.choice([*words, " ", " ", "x", "7"]) for _ in range(_RNG.randint(1, 12)))
            expected = [found.span() for found in pattern.finditer(text)]
            hits += bool(expected)
            assert [found.span() for found in twin.finditer(text.lower())] == expected, text
    assert hits > 0


@pytest.mark.parametrize("source", [r"Key\x20is", r"key(?-i:[a-z])", r"\Skey", "key"])
def test_a_pattern_that_compares_case_or_is_case_sensitive_has_no_lowered_twin(source):
    flags = 0 if source == "key" else re.IGNORECASE
    assert secrets._lowered_twin(re.compile(source, flags)) is None
