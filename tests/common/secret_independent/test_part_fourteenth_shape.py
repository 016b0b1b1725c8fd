"""Shape of the fourteenth independent part: its size, groups, disguises and determinism, not the filter."""

from collections import Counter

from tests.common.secret_independent.part_fourteenth import fourteenth_part, fourteenth_part_with_raw

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}
DISGUISES = {
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent",
    "base64",
    "split",
    "placeholder",
}


def test_credential_kinds_groups_and_counts():
    credentials = [s for s in fourteenth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(credentials) >= 1000
    assert {s.group for s in credentials} == GROUPS


def test_every_disguise_present_and_plain_near_forty_percent():
    credentials = [s for s in fourteenth_part() if s.is_credential]
    disguises = Counter(s.disguise for s in credentials)
    assert set(disguises) == DISGUISES
    assert 0.3 <= disguises["plain"] / len(credentials) <= 0.5


def test_lookalikes_are_many_varied_and_unlabelled():
    lookalikes = [s for s in fourteenth_part() if not s.is_credential]
    assert len(lookalikes) >= 600
    assert len({s.kind for s in lookalikes}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in lookalikes)


def test_no_sample_text_repeats():
    texts = [s.text for s in fourteenth_part()]
    assert len(set(texts)) == len(texts)


def test_each_secret_is_a_long_enough_piece_of_the_raw_text():
    for sample, raw in fourteenth_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, (sample.kind, sample.disguise)


def test_plain_credentials_show_their_secret_and_disguised_ones_change_the_text():
    for sample, raw in fourteenth_part_with_raw():
        if sample.disguise in ("plain", "placeholder"):
            assert sample.secret in sample.text, sample.kind
        elif sample.is_credential:
            assert sample.text != raw, (sample.kind, sample.disguise)


def test_same_seed_same_corpus():
    assert fourteenth_part() == fourteenth_part()
