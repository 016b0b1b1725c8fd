"""Import refuses what the services would refuse, naming the line and the field but never the value, and
tells the owner about the `trust: user` preferences it will serve (issue 37, item 5)."""

import io
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from archive.records import MEMORY_WRITERS_RESERVED
from consolidation.services import CONSOLIDATOR_AGENT
from memories.capture.extraction import EXTRACTOR_AGENT
from tests.archive.test_archive import OTHER_SCOPE, exported, import_archive, refused, write_lines

pytestmark = pytest.mark.django_db


def line_of(records: list[dict[str, Any]], kind: str, **match: Any) -> int:
    """The index in `records` (and so the 0-based line) of the first `kind` record with these fields."""
    return next(
        i
        for i, record in enumerate(records)
        if kind in record and all(record[kind].get(k) == v for k, v in match.items())
    )


def test_a_code_reference_outside_its_memorys_scope_is_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    at = line_of(records, "ref", path="Makefile")
    records[at]["ref"]["scope"] = OTHER_SCOPE
    message = refused(tmp_path, records, rf"line {at + 1}: ref.scope differs from the scope of its memory")
    assert "other" not in message


def test_a_memory_under_the_dashboards_reserved_name_is_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    at = line_of(records, "memory", status="active")
    records[at]["memory"]["source_agent"] = "kenfold-dashboard"
    message = refused(
        tmp_path, records, rf"line {at + 1}: .*source_agent is a name reserved for Kenfold itself"
    )
    assert "kenfold-dashboard" not in message


def test_kenfolds_own_writers_and_edges_by_the_dashboard_still_import(tmp_path: Path) -> None:
    assert {CONSOLIDATOR_AGENT, EXTRACTOR_AGENT} <= MEMORY_WRITERS_RESERVED
    records = exported(tmp_path)
    records[line_of(records, "memory", status="active")]["memory"]["source_agent"] = "kenfold-extractor"
    records[line_of(records, "edge")]["edge"]["source_agent"] = "kenfold-dashboard"
    report = import_archive(write_lines(tmp_path, records))
    assert report["memories"] == 7 and report["edges"] == 2


def test_content_over_the_remember_limit_is_refused(tmp_path: Path) -> None:
    records = exported(tmp_path)
    at = line_of(records, "memory", status="active")
    records[at]["memory"]["content"] = "a quirk " * 1000 + "x"  # 8001 characters
    message = refused(tmp_path, records, rf"line {at + 1}: .*content is 8001 characters; the limit is 8000")
    assert "a quirk" not in message
    records[at]["memory"]["content"] = "x" * 8000
    assert import_archive(write_lines(tmp_path, records, "at-limit.jsonl"))["memories"] == 7


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("memory", "created_at"),
        ("memory", "updated_at"),
        ("edge", "created_at"),
        ("ref", "created_at"),
        ("ref", "checked_at"),
    ],
)
def test_a_time_in_the_future_is_refused(tmp_path: Path, kind: str, name: str) -> None:
    records = exported(tmp_path)
    at = line_of(records, kind)
    records[at][kind][name] = "2999-01-01T00:00:00+00:00"
    message = refused(tmp_path, records, rf"line {at + 1}: .*{name} is in the future")
    assert "2999" not in message


def test_the_report_names_active_trust_user_preferences_it_will_serve(tmp_path: Path) -> None:
    records = exported(tmp_path)
    at = line_of(records, "memory", type="preference")
    records[at]["memory"].update(status="active", trust="user")
    path = write_lines(tmp_path, records)
    out = io.StringIO()
    call_command("import", str(path), "--dry-run", stdout=out)
    assert "1 active preferences would carry trust: user: get_context serves them" in out.getvalue()
    assert import_archive(path)["trust_user_served"] == 1
