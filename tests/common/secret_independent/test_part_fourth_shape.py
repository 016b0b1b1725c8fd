"""The shape of the fourth independent part: enough kinds, every group and disguise, enough look-alikes,
each credential's secret piece present before disguising, and the same seed giving the same corpus. It does
not run the secret filter: the corpus is measured once, elsewhere."""

from collections import Counter

from tests.common.secret_independent.part_fourth import fourth_part, fourth_part_with_raw

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


def test_enough_credential_kinds_each_four_times_in_every_group():
    creds = [s for s in fourth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in creds)
    assert len(per_kind) >= 70
    assert min(per_kind.values()) >= 4
    assert {s.group for s in creds} == GROUPS


def test_every_disguise_is_present_and_plain_is_about_two_fifths():
    creds = [s for s in fourth_part() if s.is_credential]
    seen = Counter(s.disguise for s in creds)
    assert set(seen) == DISGUISES
    assert 0.3 <= seen["plain"] / len(creds) <= 0.5


def test_enough_lookalikes_of_enough_kinds_with_no_secret():
    looks = [s for s in fourth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)


def test_each_secret_is_a_long_enough_piece_of_the_text_before_disguising():
    for sample, raw in fourth_part_with_raw():
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in raw, sample.kind
            if sample.disguise in ("plain", "placeholder_word"):
                assert sample.text == raw, sample.kind


def test_disguised_texts_differ_from_their_raw_text():
    for sample, raw in fourth_part_with_raw():
        if sample.is_credential and sample.disguise not in ("plain", "placeholder_word"):
            assert sample.text != raw, (sample.kind, sample.disguise)


def test_same_seed_gives_the_same_corpus():
    assert fourth_part() == fourth_part()
