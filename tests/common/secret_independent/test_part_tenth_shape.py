"""The shape of part ten of the independent corpus: enough kinds, every group and disguise, enough look-alikes,
real secrets in the texts, and the same corpus for the same seed. It says nothing about the filter."""

from collections import Counter

from tests.common.secret_independent.part_tenth import tenth_part, tenth_part_with_raw

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}
DISGUISES = {
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "percent_encoded",
    "base64_value",
    "base64_line",
    "split_line",
    "placeholder_word",
}


def test_credentials_cover_enough_kinds_in_every_group():
    credentials = [s for s in tenth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in credentials)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(credentials) >= 1000
    assert {s.group for s in credentials} == GROUPS


def test_every_disguise_is_used_and_plain_is_a_large_share():
    credentials = [s for s in tenth_part() if s.is_credential]
    per_disguise = Counter(s.disguise for s in credentials)
    assert set(per_disguise) == DISGUISES
    assert 0.3 <= per_disguise["plain"] / len(credentials) <= 0.5


def test_lookalikes_are_many_varied_and_carry_no_secret():
    lookalikes = [s for s in tenth_part() if not s.is_credential]
    assert len(lookalikes) >= 600
    assert len({s.kind for s in lookalikes}) >= 25
    assert all(s.disguise == "" for s in lookalikes)


def test_each_secret_is_a_real_piece_of_the_text_before_disguise():
    for sample, raw in tenth_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, sample.kind
            if sample.disguise in ("plain", "placeholder_word"):
                assert sample.text == raw, sample.kind
            else:
                assert sample.text != raw, sample.kind


def test_placeholder_words_sit_inside_the_secret():
    words = ("example", "xxxx", "test", "dummy", "sample", "changeme", "yourkey", "fake", "deadbeef", "0000")
    words += ("cafebabe", "feedface", "abcdef12", "1234", "1111")
    samples = [s for s in tenth_part() if s.disguise == "placeholder_word"]
    assert samples
    for sample in samples:
        # The word is written over letters and digits only, so a UUID's dash may sit inside it.
        letters = "".join(c for c in sample.secret.lower() if c.isalnum())
        assert any(word in letters for word in words), sample.kind


def test_same_seed_same_corpus():
    assert tenth_part() == tenth_part()
