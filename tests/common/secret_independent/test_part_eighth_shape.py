"""The eighth independent part has the shape issue 37 asks for; what the filter does with it is the bench's job."""

from collections import Counter

from tests.common.secret_independent.part_eighth import (
    DISGUISES,
    PLACEHOLDER_WORDS,
    eighth_part,
    eighth_part_raw,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_credentials_cover_at_least_100_kinds_in_every_group_eight_times_each():
    credentials = [s for s in eighth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(credentials) >= 1000
    assert {s.group for s in credentials} == GROUPS


def test_every_disguise_is_present_and_about_two_fifths_are_plain():
    credentials = [s for s in eighth_part() if s.is_credential]
    used = Counter(s.disguise for s in credentials)
    assert set(used) == set(DISGUISES)
    assert 0.35 <= used["plain"] / len(credentials) <= 0.45


def test_lookalikes_are_many_varied_and_carry_no_secret():
    lookalikes = [s for s in eighth_part() if not s.is_credential]
    assert len(lookalikes) >= 600
    assert len({s.kind for s in lookalikes}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in lookalikes)


def test_each_secret_is_a_piece_of_the_undisguised_text():
    for raw in eighth_part_raw():
        if raw.sample.is_credential:
            assert len(raw.sample.secret) >= 8, raw.sample.kind
            assert raw.sample.secret in raw.raw_text, raw.sample.kind
        else:
            assert raw.raw_text == raw.sample.text


def test_disguised_texts_differ_from_their_undisguised_form():
    for raw in eighth_part_raw():
        if raw.sample.disguise not in ("", "plain", "placeholder_word"):
            assert raw.sample.text != raw.raw_text, raw.sample.kind


def test_placeholder_words_sit_inside_the_secret_piece():
    placeholders = [s for s in eighth_part() if s.disguise == "placeholder_word"]
    assert placeholders
    assert all(any(w in s.secret for w in PLACEHOLDER_WORDS) for s in placeholders)


def test_the_same_seed_gives_the_same_corpus():
    assert eighth_part() == eighth_part()
