"""Shape of the independent corpus part fifteen: how big and varied it is, never what any filter makes of it."""

from collections import Counter

from tests.common.secret_independent.part_fifteenth import SEED, build, fifteenth_part

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


def test_credential_kinds_groups_and_disguises():
    creds = [s for s in fifteenth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in creds)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(creds) >= 1000
    assert {s.group for s in creds} == GROUPS
    assert {s.disguise for s in creds} == DISGUISES
    plain_share = sum(s.disguise == "plain" for s in creds) / len(creds)
    assert 0.3 <= plain_share <= 0.5


def test_lookalikes_many_and_unlabelled():
    looks = [s for s in fifteenth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)


def test_each_secret_is_a_piece_of_the_text_before_disguising():
    for sample, raw in build():
        if sample.is_credential:
            assert len(sample.secret) >= 8
            assert sample.secret in raw
            if sample.disguise in ("plain", "placeholder"):
                assert sample.text == raw


def test_disguised_texts_differ_from_the_raw_text():
    for sample, raw in build():
        if sample.is_credential and sample.disguise not in ("plain", "placeholder"):
            assert sample.text != raw


def test_same_seed_same_corpus():
    assert build(SEED) == build(SEED)
    assert fifteenth_part() == fifteenth_part()
    assert build(SEED + 1) != build(SEED)
