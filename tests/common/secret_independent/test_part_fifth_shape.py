"""The shape of the fifth independent corpus part (not what the filter does with it): enough kinds, every
group and disguise, enough look-alikes, secrets taken from the raw credential, and determinism."""

from collections import Counter

from tests.common.secret_independent.part_fifth import DISGUISES, fifth_part, fifth_part_with_raw

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_enough_credential_kinds_in_every_group():
    creds = [s for s in fifth_part() if s.is_credential]
    kinds = Counter(s.kind for s in creds)
    assert len(kinds) >= 70
    assert min(kinds.values()) >= 4
    assert {s.group for s in creds} == GROUPS


def test_every_disguise_is_present_and_plain_is_about_forty_percent():
    creds = [s for s in fifth_part() if s.is_credential]
    disguises = Counter(s.disguise for s in creds)
    assert set(disguises) == {"plain", *DISGUISES}
    assert 0.3 <= disguises["plain"] / len(creds) <= 0.5


def test_enough_look_alikes_of_enough_kinds():
    looks = [s for s in fifth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)


def test_each_secret_is_a_piece_of_the_raw_credential_and_disguises_hide_it():
    for sample, raw in fifth_part_with_raw():
        if not sample.is_credential:
            continue
        assert len(sample.secret) >= 8
        assert sample.secret in raw, sample.kind
        if sample.disguise in ("plain", "placeholder_word"):
            assert sample.secret in sample.text
        elif sample.disguise == "percent" and "%3D" in sample.text:
            # the `NAME%3Dvalue` form: only the separator needs encoding when the value is alphanumeric
            assert sample.secret in raw
        else:
            assert sample.secret not in sample.text, (sample.kind, sample.disguise)


def test_same_seed_same_corpus():
    assert fifth_part() == fifth_part()
