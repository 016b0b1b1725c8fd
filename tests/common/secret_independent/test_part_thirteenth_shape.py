"""The shape of part thirteen of the independent corpus: enough kinds, every group and disguise, enough
look-alikes, secrets that really come from the credential, and the same corpus for the same seed. It says
nothing about the filter, which these tests never run."""

from collections import Counter

from tests.common.secret_independent.part_thirteenth import (
    DISGUISES,
    thirteenth_part,
    thirteenth_part_with_raw,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_at_least_a_hundred_credential_kinds_each_eight_times_in_every_group():
    credentials = [s for s in thirteenth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(credentials) >= 1000
    assert {s.group for s in credentials} == GROUPS


def test_every_disguise_appears_and_plain_is_about_two_fifths():
    credentials = [s for s in thirteenth_part() if s.is_credential]
    counts = Counter(s.disguise for s in credentials)
    assert set(counts) == {"plain", *DISGUISES}
    assert 0.3 <= counts["plain"] / len(credentials) <= 0.5


def test_enough_lookalikes_of_enough_kinds_with_neither_secret_nor_disguise():
    lookalikes = [s for s in thirteenth_part() if not s.is_credential]
    assert len(lookalikes) >= 600
    assert len({s.kind for s in lookalikes}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in lookalikes)


def test_each_secret_is_a_piece_of_the_credential_in_the_text_before_disguising():
    for sample, raw in thirteenth_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, sample.kind
            if sample.disguise in ("plain", "placeholder"):
                assert sample.text == raw, sample.kind
            else:
                assert sample.text != raw, sample.kind


def test_the_same_seed_gives_the_same_corpus():
    assert thirteenth_part() == thirteenth_part()
