"""The shape of the third independent corpus part: enough kinds, groups, disguises and look-alikes, each
credential's secret present before disguising, and the same corpus on every run."""

from collections import Counter

from tests.common.secret_independent.part_third import (
    DISGUISES,
    HEX_PLACEHOLDERS,
    PLACEHOLDER_WORDS,
    third_part,
    third_part_with_raw,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_enough_credential_kinds_in_every_group_each_seen_four_times():
    credentials = [s for s in third_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 70
    assert min(per_kind.values()) >= 4
    assert {s.group for s in credentials} == GROUPS


def test_every_disguise_is_present_and_plain_is_about_forty_percent():
    credentials = [s for s in third_part() if s.is_credential]
    counts = Counter(s.disguise for s in credentials)
    assert set(counts) == {"plain", *DISGUISES}
    assert 0.35 <= counts["plain"] / len(credentials) <= 0.5


def test_enough_lookalikes_of_enough_kinds_none_carrying_a_secret():
    lookalikes = [s for s in third_part() if not s.is_credential]
    assert len(lookalikes) >= 600
    assert len({s.kind for s in lookalikes}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in lookalikes)


def test_each_secret_is_a_piece_of_the_text_before_disguising():
    for sample, raw_text in third_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw_text, sample.kind
            if sample.disguise in ("plain", "placeholder_word"):
                assert sample.text == raw_text, sample.kind
            else:
                assert sample.text != raw_text, (sample.kind, sample.disguise)


def test_placeholder_word_disguises_show_a_placeholder_inside_the_token():
    words = [w.lower() for w in PLACEHOLDER_WORDS + HEX_PLACEHOLDERS]
    disguised = [s for s in third_part() if s.disguise == "placeholder_word"]
    assert disguised
    assert all(any(w in s.text.lower() for w in words) for s in disguised)


def test_same_seed_same_corpus():
    assert third_part() == third_part()
