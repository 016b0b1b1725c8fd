"""The seventh independent part has the shape issue 37 asks of the corpus. These tests check the corpus
only; they never run the secret filter on it."""

from collections import Counter

from tests.common.secret_independent.part_seventh import (
    DISGUISES,
    SEED,
    seventh_part,
    seventh_part_with_plain_texts,
)

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}
CORPUS = seventh_part_with_plain_texts()
CREDENTIALS = [(sample, plain) for sample, plain in CORPUS if sample.is_credential]
LOOKALIKES = [sample for sample, _ in CORPUS if not sample.is_credential]


def test_at_least_a_hundred_credential_kinds_each_seen_eight_times_in_every_group():
    per_kind = Counter(sample.kind for sample, _ in CREDENTIALS)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(CREDENTIALS) >= 1000
    assert {sample.group for sample, _ in CREDENTIALS} == GROUPS
    groups_per_kind = {sample.kind: sample.group for sample, _ in CREDENTIALS}
    assert all(sample.group == groups_per_kind[sample.kind] for sample, _ in CREDENTIALS)


def test_every_disguise_is_present_and_about_two_fifths_are_plain():
    per_disguise = Counter(sample.disguise for sample, _ in CREDENTIALS)
    assert set(per_disguise) == {name for name, _ in DISGUISES}
    assert min(per_disguise.values()) >= 50
    assert 0.3 <= per_disguise["plain"] / len(CREDENTIALS) <= 0.5


def test_each_secret_is_a_piece_of_the_credential_in_the_text_before_disguising():
    for sample, plain in CREDENTIALS:
        assert len(sample.secret) >= 8, sample.kind
        assert sample.secret in plain, sample.kind
        if sample.disguise in ("plain", "placeholder_word"):
            assert sample.text == plain, sample.kind
        else:
            assert sample.text != plain, (sample.kind, sample.disguise)


def test_placeholder_words_sit_inside_the_tokens_that_carry_them():
    carrying = [sample for sample, _ in CREDENTIALS if sample.disguise == "placeholder_word"]
    words = ("example", "xxxx", "sample", "test", "dummy", "changeme", "placeholder", "fake", "your", "demo")
    words += ("notreal", "redacted", "deadbeef", "00000000", "12345678", "abcdef", "cafebabe", "feedface")
    words += ("ffffffff", "0123456789")
    assert carrying
    assert all(any(word in sample.text.lower() for word in words) for sample in carrying)


def test_at_least_six_hundred_lookalikes_of_twenty_five_kinds_with_no_secret_or_disguise():
    assert len(LOOKALIKES) >= 600
    assert len({sample.kind for sample in LOOKALIKES}) >= 25
    assert all(sample.secret == "" and sample.disguise == "" for sample in LOOKALIKES)
    assert not {sample.kind for sample in LOOKALIKES} & {sample.kind for sample, _ in CREDENTIALS}
    assert min(Counter(sample.kind for sample in LOOKALIKES).values()) >= 8


def test_no_text_appears_twice():
    texts = [sample.text for sample, _ in CORPUS]
    assert len(set(texts)) == len(texts)


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another():
    assert seventh_part() == [sample for sample, _ in CORPUS]
    assert seventh_part_with_plain_texts(SEED) == CORPUS
    other = [sample for sample, _ in seventh_part_with_plain_texts(SEED + 1)]
    assert other != [sample for sample, _ in CORPUS]
