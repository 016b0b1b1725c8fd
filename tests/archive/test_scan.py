"""`manage.py scan [--redact] [--json]` (spec §1.11): credentials stored before a rule caught them.

Fake credentials are assembled at run time so that the repository never holds one.
"""

import io
import json

import pytest
from django.core.management import CommandError, call_command

from memories.models import Memory, MemoryEmbedding

pytestmark = pytest.mark.django_db

GITHUB_TOKEN = "ghp" + "_" + ("aB3dE5fG7h" * 4)[:36]
AWS_KEY = "AKIA" + "Z7Q2" * 4
RANDOM_VALUE = "Zq8xK2mN" + "9pL4vR7t" + "Y3wB"
SCOPE = "project:github.com/kenfold/kenfold"


def memory(content: str, **fields: object) -> Memory:
    fields.setdefault("type", "project")
    return Memory.objects.create(content=content, scope=SCOPE, source_agent="claude-code", **fields)


@pytest.fixture
def stored() -> dict[str, Memory]:
    found = {
        "content": memory(f"the deploy token is {GITHUB_TOKEN}, keep it handy"),
        "attrs": memory(
            "CI reads the key from the vault",
            status="deleted",
            attrs={"evidence": ["ok", f"aws key {AWS_KEY}"], "config": {"db_password": RANDOM_VALUE}},
        ),
        "retired": memory(f"old: {AWS_KEY}", status="superseded"),
        "clean": memory("The deploy runs `make release`."),
    }
    for item in found.values():
        MemoryEmbedding.objects.create(memory=item, model="fake", embedding=[0.5] * 4, content_md5="x")
    return found


def test_scan_lists_where_credentials_are_without_values_and_fails(stored: dict[str, Memory]) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"3 memories hold credentials; run `manage\.py scan --redact`"):
        call_command("scan", stdout=out)
    table = out.getvalue()
    assert table.splitlines()[0].split() == ["ID", "STATUS", "TYPE", "FIELDS", "FOUND"]
    assert str(stored["content"].id) in table and str(stored["clean"].id) not in table
    row = next(line for line in table.splitlines() if str(stored["attrs"].id) in line)
    # (jsonb keeps keys shortest first)
    assert "deleted" in row and "attrs.config.db_password, attrs.evidence[1]" in row
    assert "secret-assignment, aws-access-key" in row
    assert str(stored["retired"].id) in table  # every status is scanned
    for value in (GITHUB_TOKEN, AWS_KEY, RANDOM_VALUE):
        assert value not in table
    # Nothing changed.
    assert Memory.objects.get(pk=stored["content"].pk).content == stored["content"].content
    assert MemoryEmbedding.objects.count() == 4


def test_scan_json(stored: dict[str, Memory]) -> None:
    out = io.StringIO()
    with pytest.raises(CommandError):
        call_command("scan", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["scanned"] == 4 and report["redacted"] == 0
    hit = next(h for h in report["hits"] if h["id"] == str(stored["content"].id))
    assert hit == {
        "id": str(stored["content"].id),
        "status": "active",
        "type": "project",
        "fields": ["content"],
        "rules": ["github-token"],
    }


def test_redact_rewrites_in_place_clears_vectors_stamps_and_advises_rotation(
    stored: dict[str, Memory],
) -> None:
    clean_before = Memory.objects.get(pk=stored["clean"].pk)
    out = io.StringIO()
    call_command("scan", "--redact", stdout=out)
    assert "Redacted 3 of 4 memories scanned" in out.getvalue()
    assert "rotate them" in out.getvalue()

    content = Memory.objects.get(pk=stored["content"].pk)
    assert content.content == "the deploy token is [REDACTED:github-token], keep it handy"
    assert content.attrs["redact_reason"] == "secret scan" and content.attrs["redacted_at"]
    attrs = Memory.objects.get(pk=stored["attrs"].pk).attrs
    assert attrs["evidence"] == ["ok", "aws key [REDACTED:aws-access-key]"]
    assert attrs["config"] == {"db_password": "[REDACTED:secret-assignment]"}
    assert Memory.objects.get(pk=stored["attrs"].pk).status == "deleted"
    # Vectors computed from the secret are gone; the clean memory keeps its vector and its row as it was.
    assert list(MemoryEmbedding.objects.values_list("memory_id", flat=True)) == [stored["clean"].pk]
    clean_after = Memory.objects.get(pk=stored["clean"].pk)
    assert (clean_after.content, clean_after.attrs, clean_after.updated_at) == (
        clean_before.content,
        clean_before.attrs,
        clean_before.updated_at,
    )

    again = io.StringIO()
    call_command("scan", stdout=again)
    assert again.getvalue().strip() == "Scanned 4 memories: no credentials found."
