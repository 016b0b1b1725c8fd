"""The rules of a docs sync at the service layer: supersede on change, retire on delete, refuse a page with
a credential alone, links that follow the current sections, the related walk, and the field weights."""

import re
from collections.abc import Callable

import pytest
from django.db import connection

from access.caller import Caller
from kenfold_common.errors import InvalidInput, PermissionDenied
from memories import selectors
from memories.doc_links import related_docs
from memories.models import Memory, MemoryEdge
from memories.search.retrieval import SearchOptions
from memories.services.remember import memory_remember
from projectdocs.schemas import DocsSyncInput
from projectdocs.selectors import docs_files
from projectdocs.services import docs_sync

pytestmark = pytest.mark.django_db

CLAUDE = Caller(agent="claude-code")
PROJECT = "git@github.com:acme/shop.git"
SCOPE = "project:github.com/acme/shop"


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


def page(path: str, *sections: tuple[list[str], str], version: str = "1", **fields: object) -> dict:
    digest = (version * 64)[:64] if version.isdigit() else version
    return {
        "path": path,
        "file_hash": digest,
        "chunks": [{"heading_path": heading, "content": content} for heading, content in sections],
        **fields,
    }


def sync(*files: dict, deleted: tuple[str, ...] = (), caller: Caller = CLAUDE):
    return docs_sync(
        caller=caller, sync=DocsSyncInput(project=PROJECT, files=list(files), deleted=list(deleted))
    )


def sections(path: str) -> list[Memory]:
    return list(Memory.objects.filter(attrs__kind="doc", attrs__path=path).order_by("created_at", "id"))


def test_a_changed_page_supersedes_only_its_changed_sections() -> None:
    first = sync(
        page(
            "docs/deploy.md",
            (["Schedule"], "## Schedule\n\nDeploys run on weekdays."),
            (["Rollback"], "## Rollback\n\nRun make rollback."),
        )
    )
    assert (first.added, first.sections_stored) == (1, 2)
    stored = sections("docs/deploy.md")
    assert {(m.type, m.trust, m.status, m.source_agent) for m in stored} == {
        ("project", "external", "active", "claude-code")
    }
    assert stored[0].attrs["heading_path"] == ["Schedule"] and stored[1].attrs["chunk_index"] == 1

    again = sync(
        page(
            "docs/deploy.md",
            (["Schedule"], "## Schedule\n\nDeploys run on weekdays."),
            (["Rollback"], "## Rollback\n\nRun make rollback."),
        )
    )
    assert again.unchanged == 1 and again.sections_stored == 0

    changed = sync(
        page(
            "docs/deploy.md",
            (["Schedule"], "## Schedule\n\nDeploys run on weekdays."),
            (["Rollback"], "## Rollback\n\nRun make rollback TAG=previous."),
            version="2",
        )
    )
    assert (changed.updated, changed.sections_stored, changed.sections_kept) == (1, 1, 1)
    rows = {m.content: m for m in sections("docs/deploy.md")}
    old, new = (
        rows["## Rollback\n\nRun make rollback."],
        rows["## Rollback\n\nRun make rollback TAG=previous."],
    )
    assert old.status == "superseded" and new.status == "active" and new.supersedes_id == old.id
    kept = rows["## Schedule\n\nDeploys run on weekdays."]
    assert kept.status == "active" and kept.attrs["file_hash"] == "2" * 64, (
        "unchanged sections move, never copy"
    )
    assert [f.model_dump() for f in docs_files(caller=CLAUDE, project=PROJECT).files] == [
        {"path": "docs/deploy.md", "file_hash": "2" * 64, "sections": 2}
    ]

    removed = sync(deleted=("docs/deploy.md",))
    assert removed.retired == 1
    assert {m.status for m in sections("docs/deploy.md")} == {"deleted", "superseded"}
    assert docs_files(caller=CLAUDE, project=PROJECT).files == []


def test_bad_input_changes_nothing_and_a_credential_refuses_only_its_page() -> None:
    good = page("docs/a.md", ([], "Invoices are numbered per year."))
    with pytest.raises(InvalidInput, match=r"files\[1\].path"):
        sync(good, page("/etc/passwd.md", ([], "x")))
    with pytest.raises(InvalidInput, match="relation must be a lowercase word"):
        sync(page("docs/b.md", ([], "x"), relates_to=[{"path": "docs/a.md", "relation": "Feeds Into"}]))
    with pytest.raises(PermissionDenied):
        sync(good, caller=Caller(agent="reader", read_only=True))
    assert not Memory.objects.exists()

    secret = "AKIA" + "Q7ZL" * 4
    output = sync(good, page("docs/setup.md", (["Keys"], f"## Keys\n\nUse {secret} for uploads.")))
    assert output.added == 1 and [r.path for r in output.refused] == ["docs/setup.md"]
    assert "section 'Keys'" in output.refused[0].error and secret not in output.refused[0].error
    assert not sections("docs/setup.md")


def test_links_join_current_sections_and_the_walk_survives_cycles() -> None:
    sync(
        page(
            "docs/a.md",
            (["One"], "## One\n\nAlpha page about billing cycles."),
            (["Two"], "## Two\n\nAlpha second part."),
            relates_to=[{"path": "docs/b.md", "relation": "feeds_into"}],
        ),
        page(
            "docs/b.md",
            ([], "Beta page about invoices."),
            relates_to=[{"path": "docs/c.md", "relation": "related"}],
        ),
        page(
            "docs/c.md",
            ([], "Gamma page about refunds."),
            relates_to=[{"path": "docs/a.md", "relation": "part_of"}],
        ),
        page("docs/d.md", ([], "Delta page about nothing linked.")),
    )
    b_first = sections("docs/b.md")[0]
    assert set(MemoryEdge.objects.filter(dst=b_first).values_list("relation", flat=True)) == {
        "relates_to:feeds_into"
    }
    assert MemoryEdge.objects.filter(dst=b_first).count() == 2, "from each section of a.md"

    found = selectors.memory_recall(
        caller=CLAUDE, query="alpha billing cycles", project=PROJECT, limit=1, related_depth=3
    )
    top = found.memories[0]
    assert (top.path, top.heading_path) == ("docs/a.md", ["One"])
    assert [(r.path, r.relation, r.direction, r.depth) for r in top.related] == [
        ("docs/b.md", "feeds_into", "outgoing", 1),
        ("docs/c.md", "part_of", "incoming", 1),
    ]
    only_two = related_docs(scope=SCOPE, path="docs/b.md", depth=3, now=top.created_at)
    assert [(r.path, r.depth) for r in only_two] == [("docs/a.md", 1), ("docs/c.md", 1)]

    # b.md changes: the links follow its new section.
    sync(
        page(
            "docs/b.md",
            ([], "Beta page about invoices, revised."),
            version="3",
            relates_to=[{"path": "docs/c.md", "relation": "related"}],
        )
    )
    new_first = next(m for m in sections("docs/b.md") if m.status == "active")
    assert MemoryEdge.objects.filter(dst=new_first, relation="relates_to:feeds_into").count() == 2
    with pytest.raises(InvalidInput, match="related_depth"):
        selectors.memory_recall(caller=CLAUDE, query="alpha", project=PROJECT, related_depth=4)


def test_doc_sections_stay_out_of_the_project_rules_of_get_context() -> None:
    rule = memory_remember(caller=CLAUDE, content="Every release needs a changelog entry.", project=PROJECT)
    sync(page("docs/a.md", ([], "Releases go out every weekday morning from main.")))
    context = selectors.context_get(caller=CLAUDE, task="when do releases go out", project=PROJECT)
    assert [view.id for view in context.project] == [rule.id]
    assert "docs/a.md" in [view.path for view in context.relevant]


def test_titles_and_headings_weigh_more_than_body_text() -> None:
    # One page names "rollback" only in its title, the other (stored later, so it wins a tie) only in its
    # body: the field weights alone decide which comes first.
    sync(
        page(
            "docs/ops.md",
            (["Steps"], "## Steps\n\nRun the script with the previous tag."),
            title="Rollback guide",
        ),
        page(
            "docs/misc.md",
            (["Deploy days"], "## Deploy days\n\nDeploys run on weekdays; a rollback is rare."),
        ),
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT content_tsv::text FROM memory WHERE attrs->>'path' = 'docs/ops.md'")
        # The title's words carry weight A; the body's have none (D).
        assert re.search(r"'rollback':\d+A", cursor.fetchone()[0])

    def first(weights: bool) -> str | None:
        options = SearchOptions(vectors=False, field_weights=weights)
        views = selectors.memory_recall(
            caller=CLAUDE, query="rollback", project=PROJECT, options=options
        ).memories
        return views[0].path

    assert first(weights=True) == "docs/ops.md"
    assert first(weights=False) == "docs/misc.md"


def test_a_page_sent_twice_alike_is_stored_once_and_two_versions_of_one_path_are_refused() -> None:
    deploy = page("docs/deploy.md", (["Schedule"], "## Schedule\n\nDeploys run on weekdays."))
    result = sync(deploy, dict(deploy))
    assert (result.added, result.sections_stored) == (1, 1)
    assert len(sections("docs/deploy.md")) == 1

    other = page("docs/deploy.md", (["Schedule"], "## Schedule\n\nDeploys run on Fridays."), version="2")
    with pytest.raises(InvalidInput, match="more than once with different contents") as refused:
        sync(other, page("docs/deploy.md", (["Schedule"], "## Schedule\n\nDeploys run daily."), version="3"))
    assert "Fridays" not in str(refused.value)
    assert [memory.content for memory in sections("docs/deploy.md")] == [
        "## Schedule\n\nDeploys run on weekdays."
    ]
