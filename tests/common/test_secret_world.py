"""The secret filter against the world's credential formats (tests/common/secret_world): issue 37's targets
on every part: the main part (the rules were changed against it) and the aside, fresh aside and held-out
parts, each written before a measurement of it and kept out of the rule changes until then (their
first figures, before the rules learnt from them, are in docs/security.md).

A credential counts as refused when the filter finds anything in its text (``reject_secrets`` then raises);
redaction must also leave none of its middle behind. Figures per kind and layer: ``python -m bench.secret_corpus``.
"""

from functools import cache

import pytest

from kenfold_common.secrets import find_secrets, redact_secrets
from tests.common.secret_world import main_part
from tests.common.secret_world.aside import aside_part
from tests.common.secret_world.fifth_unseen import FIFTH_DISGUISES, fifth_unseen_part
from tests.common.secret_world.formats import KINDS
from tests.common.secret_world.fourth_unseen import (
    FOURTH_DISGUISES,
    FOURTH_KINDS,
    fourth_unseen_part,
    is_fourth_kind,
)
from tests.common.secret_world.fresh_aside import fresh_aside_part
from tests.common.secret_world.held_out import held_out_part
from tests.common.secret_world.more_formats import MORE_KINDS
from tests.common.secret_world.second_unseen import SECOND_DISGUISES, is_new_kind, second_unseen_part
from tests.common.secret_world.texts import Sample
from tests.common.secret_world.third_formats import THIRD_KINDS
from tests.common.secret_world.third_unseen import THIRD_DISGUISES, is_third_kind, third_unseen_part
from tests.common.secret_world.unseen import UNSEEN_DISGUISES, unseen_part

MIN_CREDENTIALS_REFUSED = 0.99
MAX_LOOK_ALIKES_REFUSED = 0.005
# The unseen part (unseen.py) is not held to issue 37's targets: its figures are the honest ones for rules
# that never saw it, as first measured on 2026-12-06 (509 of 536 credentials = 94.96 %, 0 of 480
# look-alikes; docs/security.md). These bounds are those figures rounded to the next 0.5 % outwards, a
# guard against the rules getting worse on it, not a target to tune them to.
UNSEEN_MIN_CREDENTIALS_REFUSED = 0.945
UNSEEN_MAX_LOOK_ALIKES_REFUSED = 0.0
PARTS = {"main": main_part, "aside": aside_part, "fresh-aside": fresh_aside_part, "held-out": held_out_part}


@cache
def part(name: str) -> tuple[Sample, ...]:
    return tuple(PARTS[name]())


@cache
def unseen() -> tuple[Sample, ...]:
    return tuple(unseen_part())


@cache
def second_unseen() -> tuple[Sample, ...]:
    return tuple(second_unseen_part())


@cache
def third_unseen() -> tuple[Sample, ...]:
    return tuple(third_unseen_part())


@cache
def fourth_unseen() -> tuple[Sample, ...]:
    return tuple(fourth_unseen_part())


@cache
def fifth_unseen() -> tuple[Sample, ...]:
    return tuple(fifth_unseen_part())


def test_the_corpus_covers_the_documented_formats_of_every_kind_of_provider() -> None:
    assert len({kind.name for kind in KINDS}) == len(KINDS) >= 60
    assert {kind.group for kind in KINDS} == {
        "cloud", "ci", "chat", "payment", "database", "registry", "observability", "ai", "saas"
    }  # fmt: skip
    for name in PARTS:
        samples = part(name)
        assert {s.kind for s in samples if s.is_credential} == {kind.name for kind in KINDS}
        disguises = {s.disguise for s in samples if s.is_credential}
        assert {
            "plain",
            "zero-width",
            "fullwidth",
            "url-encoded",
            "base64-encoded",
            "split-line",
        } <= disguises


@pytest.mark.parametrize("name", ["aside", "fresh-aside", "held-out"])
def test_the_set_aside_parts_differ_from_the_main_part(name: str) -> None:
    main_texts = {s.text for s in part("main")}
    aside = part(name)
    assert not main_texts & {s.text for s in aside if s.is_credential}
    assert "bidi-control" in {s.disguise for s in aside}


@pytest.mark.parametrize("name", PARTS)
def test_at_least_99_percent_of_credentials_are_refused(name: str) -> None:
    credentials = [s for s in part(name) if s.is_credential]
    missed = [f"{s.kind} [{s.disguise}]" for s in credentials if not find_secrets(s.text)]
    assert 1 - len(missed) / len(credentials) >= MIN_CREDENTIALS_REFUSED, missed


@pytest.mark.parametrize("name", PARTS)
def test_at_most_half_a_percent_of_look_alikes_are_refused(name: str) -> None:
    look_alikes = [s for s in part(name) if not s.is_credential]
    refused = [s.kind for s in look_alikes if find_secrets(s.text)]
    assert len(refused) / len(look_alikes) <= MAX_LOOK_ALIKES_REFUSED, refused


def test_redaction_leaves_no_part_of_a_refused_credential_behind() -> None:
    # Disguised tokens are found in a normalized reading of the text; the finding maps back to every
    # character of the original, zero-width spaces, escapes and line breaks included.
    leaked = [
        f"{s.kind} [{s.disguise}]"
        for s in part("main")
        if s.is_credential and find_secrets(s.text) and s.secret in redact_secrets(s.text)
    ]
    assert leaked == []


def test_the_unseen_part_covers_every_kind_and_disguise_and_shares_no_text_with_the_other_parts() -> None:
    samples = unseen()
    assert {s.kind for s in samples if s.is_credential} == {kind.name for kind in KINDS}
    assert {s.disguise for s in samples if s.is_credential} == set(UNSEEN_DISGUISES)
    assert len([s for s in samples if s.is_credential]) >= 500
    assert len([s for s in samples if not s.is_credential]) >= 450
    others = {s.text for name in PARTS for s in part(name)}
    assert not others & {s.text for s in samples}


def test_the_unseen_part_does_not_fall_below_its_first_measurement() -> None:
    credentials = [s for s in unseen() if s.is_credential]
    missed = [f"{s.kind} [{s.disguise}]" for s in credentials if not find_secrets(s.text)]
    assert 1 - len(missed) / len(credentials) >= UNSEEN_MIN_CREDENTIALS_REFUSED, missed
    look_alikes = [s for s in unseen() if not s.is_credential]
    refused = [s.kind for s in look_alikes if find_secrets(s.text)]
    assert len(refused) / len(look_alikes) <= UNSEEN_MAX_LOOK_ALIKES_REFUSED, refused


def test_redaction_leaves_no_part_of_a_refused_unseen_credential_behind() -> None:
    leaked = [
        f"{s.kind} [{s.disguise}]"
        for s in unseen()
        if s.is_credential and find_secrets(s.text) and s.secret in redact_secrets(s.text)
    ]
    assert leaked == []


def test_the_second_unseen_part_brings_kinds_contexts_and_look_alikes_no_other_part_has() -> None:
    samples = second_unseen()
    credentials = [s for s in samples if s.is_credential]
    new_kinds = {s.kind for s in credentials if is_new_kind(s)}
    assert len(new_kinds) == len(MORE_KINDS) >= 40
    assert not new_kinds & {kind.name for kind in KINDS}
    assert {s.kind for s in credentials} - new_kinds == {kind.name for kind in KINDS}
    assert {s.disguise for s in credentials} == set(SECOND_DISGUISES)
    assert len(credentials) >= 500
    assert len([s for s in samples if not s.is_credential]) >= 500
    others = {s.text for name in PARTS for s in part(name)} | {s.text for s in unseen()}
    assert not others & {s.text for s in samples}


def test_the_third_unseen_part_brings_kinds_contexts_and_look_alikes_no_other_part_has() -> None:
    samples = third_unseen()
    credentials = [s for s in samples if s.is_credential]
    third_kinds = {s.kind for s in credentials if is_third_kind(s)}
    assert len(third_kinds) == len(THIRD_KINDS) >= 40
    assert not third_kinds & {kind.name for kind in (*KINDS, *MORE_KINDS)}
    assert {s.kind for s in credentials} - third_kinds == {kind.name for kind in (*KINDS, *MORE_KINDS)}
    assert {s.disguise for s in credentials} == set(THIRD_DISGUISES)
    assert len(credentials) >= 500
    assert len([s for s in samples if not s.is_credential]) >= 500
    others = {s.text for name in PARTS for s in part(name)} | {s.text for s in (*unseen(), *second_unseen())}
    assert not others & {s.text for s in samples}


def test_the_fourth_unseen_part_brings_kinds_contexts_and_look_alikes_no_other_part_has() -> None:
    samples = fourth_unseen()
    credentials = [s for s in samples if s.is_credential]
    fourth_kinds = {s.kind for s in credentials if is_fourth_kind(s)}
    older = {kind.name for kind in (*KINDS, *MORE_KINDS, *THIRD_KINDS)}
    assert len(fourth_kinds) == len(FOURTH_KINDS) and not fourth_kinds & older
    assert {s.kind for s in credentials} - fourth_kinds == older
    assert {s.disguise for s in credentials} == set(FOURTH_DISGUISES)
    assert len(credentials) >= 500
    assert len([s for s in samples if not s.is_credential]) >= 500
    others = {s.text for name in PARTS for s in part(name)}
    others |= {s.text for s in (*unseen(), *second_unseen(), *third_unseen())}
    assert not others & {s.text for s in samples if s.is_credential}


def test_the_fifth_unseen_part_covers_every_kind_in_contexts_no_other_part_has() -> None:
    samples = fifth_unseen()
    credentials = [s for s in samples if s.is_credential]
    assert {s.kind for s in credentials} == {
        kind.name for kind in (*KINDS, *MORE_KINDS, *THIRD_KINDS, *FOURTH_KINDS)
    }
    assert {s.disguise for s in credentials} == set(FIFTH_DISGUISES)
    assert len(credentials) >= 500
    assert len([s for s in samples if not s.is_credential]) >= 500
    others = {s.text for name in PARTS for s in part(name)}
    others |= {s.text for s in (*unseen(), *second_unseen(), *third_unseen(), *fourth_unseen())}
    assert not others & {s.text for s in samples if s.is_credential}
