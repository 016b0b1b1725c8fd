"""The shape of part sixteen of the independent corpus (not the filter's results on it)."""

from tests.common.secret_independent.part_sixteenth import (
    DISGUISES,
    sixteenth_part,
    sixteenth_part_with_raw,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_enough_credential_kinds_each_group_and_enough_samples_per_kind():
    creds = [s for s in sixteenth_part() if s.is_credential]
    kinds: dict[str, int] = {}
    for s in creds:
        kinds[s.kind] = kinds.get(s.kind, 0) + 1
    assert len(kinds) >= 100
    assert min(kinds.values()) >= 8
    assert len(creds) >= 1000
    assert {s.group for s in creds} == GROUPS


def test_every_disguise_present_and_plain_near_forty_percent():
    creds = [s for s in sixteenth_part() if s.is_credential]
    seen = {s.disguise for s in creds}
    assert seen == set(DISGUISES) | {"plain"}
    plain = sum(s.disguise == "plain" for s in creds) / len(creds)
    assert 0.3 <= plain <= 0.5


def test_enough_lookalikes_of_enough_kinds_with_neither_disguise_nor_secret():
    looks = [s for s in sixteenth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)


def test_each_secret_is_a_long_enough_piece_of_the_undisguised_text():
    for sample, raw in sixteenth_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, sample.kind
            if sample.disguise in ("plain", "placeholder"):
                assert sample.text == raw, sample.kind
            else:
                assert sample.text != raw, sample.kind


def test_same_seed_same_corpus():
    assert sixteenth_part() == sixteenth_part()
