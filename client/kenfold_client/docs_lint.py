"""`kenfold docs lint`: what in a page keeps agents from finding it through recall.

Works on the files as they are on disk (lint before you commit); no server, no database. Each rule
names a problem the way retrieval sees it: a page too short to answer anything, a link to a page that
does not exist, a section so small that chunking merges it into its neighbour (its heading no longer
titles anything), a heading that says nothing ("Overview"), missing title or tags (the fields that
weigh most in the ranking). Each page scores 0-100; errors exit 1, so CI can gate on it.
"""

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kenfold_client.docs import LocalPage, Selection, read_pages, resolve_relation
from kenfold_client.markdown import CHUNK_CHARS, MIN_SECTION_CHARS
from kenfold_common.docs import GLOB_CHARS_RE, is_doc_path

ERROR, WARNING, INFO = "error", "warning", "info"
PENALTY = {ERROR: 20, WARNING: 8, INFO: 2}
MIN_PAGE_CHARS = 100
# Headings that name no subject: a search for the subject never lands on them.
GENERIC_HEADINGS = frozenset(
    """
    overview introduction intro details notes note misc miscellaneous other others general summary info
    information background more about usage example examples faq todo tbd contents content description
    개요 소개 설명 참고 기타 요약 정보 예시 예제 노트 메모
    """.split()
)
_SKIPPED_FOLDERS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", "site-packages"})


@dataclass(frozen=True)
class Issue:
    rule: str
    severity: str
    message: str


@dataclass
class FileReport:
    path: str
    score: int = 100
    issues: list[Issue] = field(default_factory=list)


@dataclass
class LintReport:
    files: list[FileReport]

    @property
    def score(self) -> int:
        return round(sum(f.score for f in self.files) / len(self.files)) if self.files else 100

    @property
    def errors(self) -> int:
        return sum(1 for f in self.files for issue in f.issues if issue.severity == ERROR)

    def as_json(self) -> dict:
        return {
            "score": self.score,
            "errors": self.errors,
            "files": [
                {"path": f.path, "score": f.score, "issues": [asdict(issue) for issue in f.issues]}
                for f in self.files
            ],
        }


def lint_page(page: LocalPage, *, known: set[str], docs_folder: str) -> FileReport:
    report = FileReport(path=page.path)
    parsed = page.page

    def add(rule: str, severity: str, message: str) -> None:
        report.issues.append(Issue(rule, severity, message))

    body_chars = len(parsed.body.strip())
    if body_chars < MIN_PAGE_CHARS:
        add(
            "too-short",
            ERROR,
            f"the page has {body_chars} characters of text; a page under {MIN_PAGE_CHARS} answers nothing",
        )
    for problem in parsed.problems:
        add("frontmatter", WARNING, problem)
    for relation in parsed.relates_to:
        if GLOB_CHARS_RE.search(relation.path):
            add("glob-relation", ERROR, f"relates_to {relation.path!r} is a pattern; name each page instead")
        elif resolve_relation(page.path, relation.path, known, docs_folder=docs_folder) is None:
            add("broken-relation", ERROR, f"relates_to {relation.path!r} names no page of the checkout")
    for section in parsed.sections:
        if section.heading_path and section.chars < MIN_SECTION_CHARS:
            add(
                "lost-section",
                ERROR,
                f"section {' > '.join(section.heading_path)!r} has {section.chars} characters; it is merged "
                "into its neighbour and its heading no longer titles a section: add text or drop the heading",
            )
        elif section.chars > CHUNK_CHARS:
            add(
                "oversized-section",
                INFO,
                f"section {' > '.join(section.heading_path) or '(preamble)'!r} has {section.chars} characters; "
                "it is split by its subheadings or paragraphs",
            )
    if not parsed.title or not (parsed.frontmatter_title or any(level == 1 for level, _ in parsed.headings)):
        add("missing-title", WARNING, "no `title` in the frontmatter and no H1: titles weigh most in search")
    if not parsed.tags:
        add("missing-tags", WARNING, "no `tags`: tags weigh more than body text in search")
    elif len(parsed.tags) == 1:
        add("few-tags", INFO, "one tag; two to five help questions that use other words find the page")
    for level, heading in parsed.headings:
        if level >= 2 and heading.strip().lower().rstrip(":") in GENERIC_HEADINGS:
            add(
                "generic-heading",
                WARNING,
                f"heading {heading!r} names no subject; say what the section is about",
            )
    if body_chars > CHUNK_CHARS and not any(level == 2 for level, _ in parsed.headings):
        add(
            "no-sections",
            WARNING,
            "a long page without H2 headings is cut between paragraphs, not by subject",
        )
    report.score = max(0, 100 - sum(PENALTY[issue.severity] for issue in report.issues))
    return report


def lint_folder(*, root: Path, selection: Selection) -> LintReport:
    """Lint the Markdown files of `selection` under `root` (a checkout's top level, or any folder)."""
    everything = {path: file for path, file in _markdown_files(root)}
    chosen = {path: file.read_bytes() for path, file in everything.items() if path in selection}
    pages = read_pages(chosen)
    known = set(everything)
    return LintReport(
        files=[lint_page(page, known=known, docs_folder=selection.folder) for page in pages.values()]
    )


def _markdown_files(root: Path) -> list[tuple[str, Path]]:
    found = []
    for folder, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if name not in _SKIPPED_FOLDERS)
        for name in sorted(names):
            path = Path(folder) / name
            relative = path.relative_to(root).as_posix()
            if is_doc_path(relative) and path.is_file():
                found.append((relative, path))
    return found


def format_report(report: LintReport) -> str:
    lines = []
    for file in sorted(report.files, key=lambda f: (f.score, f.path)):
        lines.append(f"{file.score:3d}  {file.path}")
        for issue in file.issues:
            lines.append(f"     {issue.severity}: {issue.rule}: {issue.message}")
    count = len(report.files)
    lines.append(
        f"Score {report.score}/100 over {count} page{'' if count == 1 else 's'}; {report.errors} error"
        f"{'' if report.errors == 1 else 's'}"
        + ("; fix the errors first, they lose sections or links" if report.errors else "")
    )
    return "\n".join(lines)
