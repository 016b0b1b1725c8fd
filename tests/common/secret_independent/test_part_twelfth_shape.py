"""The shape of the twelfth independent part: size, coverage of groups and disguises, honest secrets, and
determinism. It never runs the filter: the part is measured once, elsewhere."""

from collections import Counter

from tests.common.secret_independent.part_twelfth import (
    DISGUISES,
    HEX_PLACEHOLDERS,
    PLACEHOLDER_WORDS,
    twelfth_part,
    twelfth_part_raw,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_at_least_100_credential_kinds_each_8_times_in_every_group():
    creds = [s for s in twelfth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in creds)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(creds) >= 1000
    assert {s.group for s in creds} == GROUPS


def test_every_disguise_present_and_plain_near_40_percent():
    creds = [s for s in twelfth_part() if s.is_credential]
    counts = Counter(s.disguise for s in creds)
    assert set(counts) == set(DISGUISES)
    assert 0.35 <= counts["plain"] / len(creds) <= 0.45


def test_at_least_600_lookalikes_of_25_kinds():
    looks = [s for s in twelfth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)
    assert len({s.text for s in looks}) == len(looks)


def test_each_secret_is_a_piece_of_the_raw_text_and_disguises_change_the_text():
    for raw in twelfth_part_raw():
        s = raw.sample
        if not s.is_credential:
            continue
        assert len(s.secret) >= 8, s.kind
        assert s.secret in raw.raw_text, s.kind
        if s.disguise in ("plain", "placeholder_word"):
            assert s.text == raw.raw_text
        elif s.disguise == "percent":
            # The `NAME%3Dvalue` form keeps an alphanumeric token readable: only its surroundings are encoded.
            assert "%" in s.text and s.text != raw.raw_text, s.kind
        else:
            # A disguise must hide the piece from a plain substring search, or it disguises nothing.
            assert s.secret not in s.text, (s.kind, s.disguise)
        if s.disguise == "placeholder_word":
            assert any(w in s.secret for w in PLACEHOLDER_WORDS + HEX_PLACEHOLDERS), s.kind


def test_same_seed_same_corpus():
    assert twelfth_part() == twelfth_part()
