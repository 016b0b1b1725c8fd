"""The aside part's shape only: what issue 37 asks of the corpus. Nothing here runs the secret filter; the
corpus is measured once, by the lead, and these tests must not become a way of tuning against it."""

from collections import Counter

from tests.common.secret_independent.part_aside import DISGUISES, SEED, aside_part, aside_rendered

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}


def test_at_least_seventy_credential_kinds_across_every_group_each_at_least_four_times() -> None:
    credentials = [sample for sample in aside_part() if sample.is_credential]
    per_kind = Counter(sample.kind for sample in credentials)

    assert len(per_kind) >= 70
    assert min(per_kind.values()) >= 4
    assert {sample.group for sample in credentials} == GROUPS


def test_every_disguise_is_used_and_about_forty_percent_are_plain() -> None:
    credentials = [sample for sample in aside_part() if sample.is_credential]
    used = Counter(sample.disguise for sample in credentials)

    assert set(used) == set(DISGUISES)
    assert 0.35 <= used["plain"] / len(credentials) <= 0.45


def test_at_least_six_hundred_look_alikes_of_at_least_twenty_five_kinds_with_no_secret() -> None:
    look_alikes = [sample for sample in aside_part() if not sample.is_credential]

    assert len(look_alikes) >= 600
    assert len({sample.kind for sample in look_alikes}) >= 25
    assert all(sample.disguise == "" and sample.secret == "" for sample in look_alikes)


def test_each_secret_is_a_piece_of_the_credential_in_its_undisguised_text() -> None:
    for rendered in aside_rendered():
        sample = rendered.sample
        if sample.is_credential:
            assert len(sample.secret) >= 8, sample.kind
            assert sample.secret in rendered.plain_text, sample.kind
            if sample.disguise == "plain":
                assert rendered.plain_text == sample.text, sample.kind


def test_the_same_seed_gives_the_same_corpus_and_another_seed_another() -> None:
    assert aside_rendered(SEED) == aside_rendered(SEED)
    assert [r.sample.text for r in aside_rendered(SEED + 1)] != [r.sample.text for r in aside_rendered(SEED)]
