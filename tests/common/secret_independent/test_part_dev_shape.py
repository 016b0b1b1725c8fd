"""The shape of the independent corpus part "dev": enough kinds, groups, disguises and look-alikes, secrets
that were really in the text before disguising, and the same corpus from the same seed. It says nothing
about the filter, which this corpus is written to measure from outside."""

from collections import Counter

from tests.common.secret_independent.part_dev import DISGUISES, GROUPS, dev_part, dev_part_with_raw


def test_enough_credential_kinds_in_every_group_each_seen_at_least_four_times():
    credentials = [s for s in dev_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 70
    assert min(per_kind.values()) >= 4
    assert {s.group for s in credentials} == set(GROUPS)


def test_every_disguise_appears_and_about_forty_percent_are_plain():
    credentials = [s for s in dev_part() if s.is_credential]
    per_disguise = Counter(s.disguise for s in credentials)
    assert set(per_disguise) == set(DISGUISES)
    assert 0.35 <= per_disguise["plain"] / len(credentials) <= 0.5


def test_enough_look_alikes_of_enough_kinds_with_neither_disguise_nor_secret():
    look_alikes = [s for s in dev_part() if not s.is_credential]
    assert len(look_alikes) >= 600
    assert len({s.kind for s in look_alikes}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in look_alikes)


def test_each_secret_is_a_piece_of_the_text_before_disguising():
    for sample, before in dev_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in before, (sample.kind, sample.disguise)
            if sample.disguise == "plain":
                assert sample.text == before, sample.kind


def test_disguises_inside_the_token_break_the_secret_piece():
    inside = {"zero_width", "soft_hyphen", "fullwidth", "bidi", "split", "base64"}
    for sample in dev_part():
        if sample.disguise in inside:
            assert sample.secret not in sample.text, (sample.kind, sample.disguise)


def test_the_same_seed_gives_the_same_corpus():
    assert dev_part() == dev_part()
