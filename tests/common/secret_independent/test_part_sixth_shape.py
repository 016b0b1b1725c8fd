"""The shape of the sixth independent corpus part: enough kinds, every group and disguise, enough
look-alikes, each credential's secret piece present in its raw text, and the same seed giving the same corpus."""

from collections import Counter

from tests.common.secret_independent.part_sixth import SEED, sixth_part, sixth_part_with_raw

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}
DISGUISES = {
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "url_encoded",
    "base64",
    "split_line",
    "placeholder_word",
}


def test_credential_kinds_groups_and_disguises():
    samples = sixth_part()
    creds = [s for s in samples if s.is_credential]
    kinds = Counter(s.kind for s in creds)
    assert len(kinds) >= 70
    assert min(kinds.values()) >= 4
    assert {s.group for s in creds} == GROUPS
    assert {s.disguise for s in creds} == DISGUISES
    plain_share = sum(s.disguise == "plain" for s in creds) / len(creds)
    assert 0.3 <= plain_share <= 0.5


def test_lookalikes():
    looks = [s for s in sixth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)


def test_secret_piece_is_in_the_raw_text():
    for sample, raw in sixth_part_with_raw(SEED):
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, sample.kind
            if sample.disguise in ("plain", "placeholder_word"):
                assert sample.text == raw, sample.kind


def test_same_seed_same_corpus():
    assert sixth_part() == sixth_part()
    assert sixth_part_with_raw(SEED + 1) != sixth_part_with_raw(SEED)
