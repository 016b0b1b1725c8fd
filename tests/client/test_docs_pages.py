"""The docs client without a server: frontmatter in every form (PyYAML and the fallback reader), chunking,
the file selection, relates_to resolution, and `kenfold docs lint` (issue 17)."""

import json
from pathlib import Path

import pytest

from kenfold_client import markdown
from kenfold_client.__main__ import main
from kenfold_client.docs import Selection, default_selection, glob_match, resolve_relation
from kenfold_client.markdown import CHUNK_CHARS, Relation, parse_page

FRONTMATTER = """---
title: Deploying the shop
tags: deploy, release
aliases:
  - shipping a release
  - "undo: a deployment"
answers:
  - How do we roll back?
  - Who approves Friday deploys?
description: >
  How a release goes out
  and comes back.
relates_to:
  - path: ops/monitoring.md
    relation: monitors
  - path: guides/setup.md
  - runbook.md
---
# Deploying

Body text long enough to be the page's preamble, which is more than fifty characters.
"""


@pytest.fixture(params=["pyyaml", "fallback"])
def reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with PyYAML and again with the client's own reader (as without PyYAML installed)."""
    if request.param == "fallback":
        monkeypatch.setattr(
            markdown, "_read_frontmatter", lambda source: (markdown._read_simple_yaml(source), None)
        )
    return request.param


def test_frontmatter_fields_in_every_form(reader: str) -> None:
    page = parse_page(FRONTMATTER, name="docs/deploy.md")
    assert page.title == "Deploying the shop" and page.frontmatter_title
    assert page.tags == ["deploy", "release"]
    assert page.aliases == ["shipping a release", "undo: a deployment"]
    assert page.answers == ["How do we roll back?", "Who approves Friday deploys?"]
    assert page.description == "How a release goes out and comes back."
    assert page.relates_to == [
        Relation("ops/monitoring.md", "monitors"),
        Relation("guides/setup.md", "related"),
        Relation("runbook.md", "related"),
    ]
    assert page.problems == []


@pytest.mark.parametrize(
    ("relates_to", "expected"),
    [
        ("relates_to: setup.md", [Relation("setup.md", "related")]),
        ("relates_to: [a.md, b.md]", [Relation("a.md", "related"), Relation("b.md", "related")]),
        ("relates_to:\n  - path: a.md\n    relation: Feeds_Into", [Relation("a.md", "feeds_into")]),
    ],
)
def test_relates_to_forms(reader: str, relates_to: str, expected: list[Relation]) -> None:
    page = parse_page(f"---\n{relates_to}\n---\nText.\n", name="x.md")
    assert page.relates_to == expected


def test_title_falls_back_to_the_h1_then_the_file_name() -> None:
    assert parse_page("# Release checklist\n\nText.\n", name="docs/a.md").title == "Release checklist"
    assert parse_page("Text only.\n", name="docs/release-checklist.md").title == "release checklist"


def test_bad_yaml_is_a_lint_problem_not_a_crash() -> None:
    page = parse_page("---\ntags: [unclosed\n---\n# T\n\nText.\n", name="x.md")
    assert page.problems and page.tags == []


def section(heading: str, words: int) -> str:
    return f"## {heading}\n\n" + " ".join(f"word{n}" for n in range(words)) + ".\n\n"


def test_chunks_follow_h2_sections_with_a_preamble() -> None:
    text = "# Title\n\nAn introduction that is long enough to stand alone as the preamble chunk.\n\n"
    text += section("Install", 30) + section("Configure", 30)
    chunks = parse_page(text, name="a.md").chunks
    assert [c.heading_path for c in chunks] == [(), ("Install",), ("Configure",)]
    assert chunks[1].content.startswith("## Install")
    assert "# Title" not in "\n".join(c.content for c in chunks), "the H1 is the title, not a section"


def test_tiny_sections_join_their_neighbour_and_a_short_preamble_joins_the_first_section() -> None:
    text = "Short intro.\n\n" + section("Install", 30) + "## Notes\n\nSee above.\n\n" + section("Use", 30)
    chunks = parse_page(text, name="a.md").chunks
    assert [c.heading_path for c in chunks] == [("Install",), ("Use",)]
    assert chunks[0].content.startswith("Short intro.") and "## Notes\n\nSee above." in chunks[0].content


def test_oversized_sections_split_at_h3_then_paragraphs_never_inside_code_or_tables() -> None:
    code = "```sh\n" + "\n".join(f"echo step {n} of the long migration script" for n in range(130)) + "\n```"
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| row {n} | value {n} |" for n in range(20))
    body = (
        "## Big\n\nIntro of the big section, which has subsections below it.\n\n"
        f"### Part one\n\n{code}\n\n### Part two\n\n{table}\n\n"
        + "\n\n".join("paragraph " + "x" * 300 for _ in range(20))
    )
    assert len(code) > CHUNK_CHARS
    chunks = parse_page(body, name="a.md").chunks
    # The short intro of "Big" joins its first subsection, under the heading they share.
    assert chunks[0].heading_path == ("Big",) and "### Part one" in chunks[0].content
    assert code in chunks[0].content, "the code block is one chunk's, whole"
    assert any(table in c.content for c in chunks), "the table is whole"
    assert all(len(c.content) <= 7500 for c in chunks)
    assert len([c for c in chunks if c.heading_path == ("Big", "Part two")]) >= 2, "split between paragraphs"


def test_selection_and_globs() -> None:
    default = default_selection(None, None)
    assert "docs/a.md" in default and "docs/guides/b.md" in default and "README.md" in default
    assert "src/README.md" not in default and "docs/a.txt" not in default
    only = Selection(folder="handbook", glob="guides/*.md")
    assert "handbook/guides/a.md" in only and "handbook/guides/x/a.md" not in only
    assert glob_match("**/*.md", "a.md") and glob_match("**/*.md", "a/b/c.md")
    assert not glob_match("*.md", "a/b.md")


def test_relations_resolve_from_the_page_then_the_docs_folder_then_the_root() -> None:
    known = ["docs/ops/monitoring.md", "docs/guides/setup.md", "README.md", "docs/ops/runbook.md"]
    assert (
        resolve_relation("docs/ops/deploy.md", "runbook.md", known, docs_folder="docs")
        == "docs/ops/runbook.md"
    )
    assert resolve_relation("docs/ops/deploy.md", "guides/setup.md", known, docs_folder="docs") == (
        "docs/guides/setup.md"
    )
    assert resolve_relation("docs/ops/deploy.md", "/README.md", known, docs_folder="docs") == "README.md"
    assert resolve_relation("docs/ops/deploy.md", "../../../etc/x.md", known, docs_folder="docs") is None
    assert resolve_relation("docs/ops/deploy.md", "ops/*.md", known, docs_folder="docs") is None


def test_lint_scores_pages_and_fails_on_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "good.md").write_text(
        "---\ntitle: Releases\ntags: [release]\n---\n"
        + "Releases go out every weekday morning from the main branch, one region at a time.\n\n"
        + section("Rolling back", 30)
    )
    (tmp_path / "bad.md").write_text(
        "---\nrelates_to: [missing.md, 'ops/*.md']\n---\nShort.\n\n## Overview\n\nx\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["docs", "lint", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    files = {f["path"]: f for f in report["files"]}
    assert files["good.md"]["score"] == 98 and [i["rule"] for i in files["good.md"]["issues"]] == ["few-tags"]
    rules = {i["rule"] for i in files["bad.md"]["issues"]}
    assert {"too-short", "broken-relation", "glob-relation", "lost-section", "generic-heading"} <= rules
    assert {"missing-title", "missing-tags"} <= rules
    assert files["bad.md"]["score"] < files["good.md"]["score"]
    assert report["score"] == round((files["good.md"]["score"] + files["bad.md"]["score"]) / 2)

    (tmp_path / "bad.md").unlink()
    assert main(["docs", "lint"]) == 0
    assert "Score 98/100 over 1 page; 0 errors" in capsys.readouterr().out
