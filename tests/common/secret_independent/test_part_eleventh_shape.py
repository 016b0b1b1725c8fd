"""The eleventh part's shape only: how many kinds and samples, every group and disguise, honest secrets."""

from collections import Counter

from tests.common.secret_independent.part_eleventh import DISGUISES, eleventh_part, eleventh_part_with_raw

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_enough_credential_kinds_in_every_group_each_often_enough():
    credentials, _ = eleventh_part_with_raw()
    per_kind = Counter(sample.kind for sample, _ in credentials)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(credentials) >= 1000
    assert {sample.group for sample, _ in credentials} == GROUPS


def test_every_disguise_appears_and_plain_is_about_forty_percent():
    credentials, _ = eleventh_part_with_raw()
    disguises = Counter(sample.disguise for sample, _ in credentials)
    assert set(disguises) == set(DISGUISES)
    assert 0.3 <= disguises["plain"] / len(credentials) <= 0.5


def test_each_secret_is_a_piece_of_the_text_before_disguising():
    credentials, _ = eleventh_part_with_raw()
    for sample, raw in credentials:
        assert len(sample.secret) >= 8, sample.kind
        assert sample.secret in raw, sample.kind
        if sample.disguise == "plain":
            assert sample.text == raw, sample.kind
        elif sample.disguise == "percent":
            # A URL-encoded line (NAME%3Dvalue) may leave an alphanumeric token's own characters as they were.
            assert sample.text != raw, sample.kind
        elif sample.disguise != "placeholder":
            # Every other disguise changes the token itself: the secret no longer appears as it was.
            assert sample.secret not in sample.text, (sample.kind, sample.disguise)


def test_enough_lookalikes_of_enough_kinds_and_none_marked_secret():
    _, lookalikes = eleventh_part_with_raw()
    assert len(lookalikes) >= 600
    assert len({sample.kind for sample in lookalikes}) >= 25
    assert all(not sample.is_credential and sample.disguise == "" for sample in lookalikes)


def test_the_same_seed_gives_the_same_corpus():
    assert eleventh_part() == eleventh_part()
