"""Shape of the ninth independent corpus part: enough kinds, every group and disguise, enough look-alikes,
and each credential's secret piece really taken from the credential."""

from collections import Counter

from tests.common.secret_independent.part_ninth import ninth_credentials, ninth_part

GROUPS = {"cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"}
DISGUISES = {
    "plain",
    "zero_width",
    "soft_hyphen",
    "fullwidth",
    "bidi",
    "url_encoded",
    "base64",
    "split_lines",
    "placeholder_word",
}


def test_credential_kinds_groups_and_counts() -> None:
    creds = [s for s in ninth_part() if s.is_credential]
    per_kind = Counter(s.kind for s in creds)
    assert len(per_kind) >= 100
    assert min(per_kind.values()) >= 8
    assert len(creds) >= 1000
    assert {s.group for s in creds} == GROUPS


def test_every_disguise_present_and_plain_near_forty_percent() -> None:
    creds = [s for s in ninth_part() if s.is_credential]
    by_disguise = Counter(s.disguise for s in creds)
    assert set(by_disguise) == DISGUISES
    assert 0.35 <= by_disguise["plain"] / len(creds) <= 0.45


def test_lookalikes_are_many_varied_and_unlabelled() -> None:
    looks = [s for s in ninth_part() if not s.is_credential]
    assert len(looks) >= 600
    assert len({s.kind for s in looks}) >= 25
    assert all(s.disguise == "" and s.secret == "" for s in looks)
    assert len({s.text for s in looks}) == len(looks)


def test_secret_piece_is_a_middle_piece_of_the_undisguised_text() -> None:
    for cred in ninth_credentials():
        assert len(cred.sample.secret) >= 8
        assert cred.sample.secret in cred.undisguised, cred.sample.kind
        if cred.sample.disguise == "plain":
            assert cred.sample.text == cred.undisguised


def test_disguised_text_differs_from_the_undisguised_one() -> None:
    for cred in ninth_credentials():
        if cred.sample.disguise not in ("plain", "placeholder_word"):
            assert cred.sample.text != cred.undisguised, (cred.sample.kind, cred.sample.disguise)


def test_same_seed_same_corpus_other_seed_other_corpus() -> None:
    assert ninth_part() == ninth_part()
    assert ninth_part(seed=1) != ninth_part()
