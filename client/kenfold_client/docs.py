"""`kenfold docs sync`: send a checkout's Markdown docs to Kenfold, so that agents find them in recall.

Remote agents (ChatGPT, claude.ai) cannot read the repository; synced, its docs are memories of the
project like any other, found by meaning and kept current. The pages are read at HEAD (what is committed,
as a `post-commit` hook sees it), chunked here (kenfold_client.markdown), and only pages whose SHA-256
differs from what the server holds are sent; a page that is gone from HEAD has its sections retired.
"""

import hashlib
import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenfold_client import git
from kenfold_client.errors import ClientError
from kenfold_client.http import KenfoldApi
from kenfold_client.markdown import Page, parse_page
from kenfold_common.docs import GLOB_CHARS_RE, MAX_DELETED_PER_SYNC, MAX_FILES_PER_SYNC, is_doc_path
from kenfold_common.secrets import redact_secrets

DEFAULT_GLOB = "**/*.md"
# Without --dir: the checkout's docs/ folder, its top-level README and KENFOLD.md (the project's memory
# guidelines, which the server serves first in get_context).
DEFAULT_DOCS_DIR = "docs"
DEFAULT_EXTRA_FILES = ("README.md", "KENFOLD.md")
# A page bigger than this is not documentation an agent should read in sections (a generated dump).
MAX_PAGE_BYTES = 1_000_000
# The server refuses bodies over 1 MiB; batches stay well under it.
MAX_BATCH_BYTES = 600_000


@dataclass(frozen=True)
class Selection:
    """Which files of a checkout are its docs: ``glob`` under ``folder`` (repository-relative, "" for the
    root), plus ``extra`` files."""

    folder: str
    glob: str = DEFAULT_GLOB
    extra: tuple[str, ...] = ()

    def __contains__(self, path: str) -> bool:
        if path in self.extra:
            return True
        prefix = f"{self.folder}/" if self.folder else ""
        return path.startswith(prefix) and glob_match(self.glob, path[len(prefix) :])


def default_selection(folder: str | None, glob: str | None) -> Selection:
    """--dir and --glob as a Selection; without --dir, docs/ and the top-level README.md."""
    if folder is None:
        return Selection(folder=DEFAULT_DOCS_DIR, glob=glob or DEFAULT_GLOB, extra=DEFAULT_EXTRA_FILES)
    return Selection(folder=folder.strip("/"), glob=glob or DEFAULT_GLOB)


def glob_match(pattern: str, path: str) -> bool:
    """Shell-style matching of a `/`-separated path: `*` and `?` stay within a folder, `**/` spans any."""
    regex = ""
    index = 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex += "(?:.*/)?"
            index += 3
        elif pattern.startswith("**", index):
            regex += ".*"
            index += 2
        elif pattern[index] == "*":
            regex += "[^/]*"
            index += 1
        elif pattern[index] == "?":
            regex += "[^/]"
            index += 1
        else:
            regex += re.escape(pattern[index])
            index += 1
    return re.fullmatch(regex, path) is not None


def resolve_relation(source: str, target: str, known: Iterable[str], *, docs_folder: str) -> str | None:
    """The repository path a `relates_to` entry of page `source` names: relative to the page's folder,
    else to the docs folder, else to the repository root, whichever exists in `known`. None for a glob
    pattern (never followed) or a path that leaves the repository."""
    if GLOB_CHARS_RE.search(target):
        return None
    written = target.strip().split("#", 1)[0]
    if written.startswith("/"):
        bases = [""]
    else:
        bases = list(dict.fromkeys([posixpath.dirname(source), docs_folder, ""]))
    candidates = []
    for base in bases:
        joined = posixpath.normpath(posixpath.join(base, written.lstrip("/")))
        if not joined.startswith("../") and joined != "..":
            candidates.append(joined)
    known_set = set(known)
    for candidate in candidates:
        if candidate in known_set:
            return candidate
    return None


@dataclass(frozen=True)
class LocalPage:
    path: str
    file_hash: str
    page: Page


def read_pages(contents: dict[str, bytes]) -> dict[str, LocalPage]:
    """Parse each page's bytes (UTF-8; undecodable bytes replaced)."""
    pages = {}
    for path, raw in sorted(contents.items()):
        text = raw.decode("utf-8", errors="replace")
        pages[path] = LocalPage(
            path=path, file_hash=hashlib.sha256(raw).hexdigest(), page=parse_page(text, name=path)
        )
    return pages


def file_payload(page: LocalPage, *, known: Iterable[str], docs_folder: str) -> dict[str, Any]:
    """The page as the server's /docs/sync takes it: frontmatter fields, resolved relations, chunks."""
    relations = []
    for relation in page.page.relates_to:
        target = resolve_relation(page.path, relation.path, known, docs_folder=docs_folder)
        if target is not None and target != page.path and is_doc_path(target):
            item = {"path": target, "relation": relation.relation}
            if item not in relations:
                relations.append(item)
    payload: dict[str, Any] = {
        "path": page.path,
        "file_hash": page.file_hash,
        "title": page.page.title,
        "tags": page.page.tags,
        "aliases": page.page.aliases,
        "answers": page.page.answers,
        "relates_to": relations,
        "chunks": [{"heading_path": list(c.heading_path), "content": c.content} for c in page.page.chunks],
    }
    if page.page.description:
        payload["description"] = page.page.description
    return payload


@dataclass
class DocsSyncOutcome:
    summary: str
    project: str | None = None
    sent: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    refused: list[dict[str, str]] = field(default_factory=list)


_COUNTS = ("added", "updated", "unchanged", "retired", "sections_stored", "sections_kept", "links")


def docs_sync(
    *,
    directory: Path,
    api: KenfoldApi,
    folder: str | None = None,
    glob: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> DocsSyncOutcome:
    """Sync the docs of the checkout containing `directory` (at HEAD) with the server.

    `folder` is repository-relative (None: docs/ and README.md). Raises ClientError when the directory
    is not in a repository, the project cannot be told, or the server refuses.
    """
    repo = git.toplevel(directory)
    if repo is None:
        raise ClientError(f"{directory} is not inside a git repository; run this in a checkout or pass --dir")
    commit = git.head_commit(repo)
    if commit is None:
        return DocsSyncOutcome(summary=f"Nothing to sync: {repo} has no commits yet")
    project = git.detect_project(repo)
    if project is None:
        raise ClientError(
            f"cannot tell the project of {repo}: its remote is not a project name (a local path?); "
            "add a remote such as git@github.com:org/repo.git"
        )
    selection = default_selection(folder, glob)
    tree = git.files_at(repo, commit)
    known = [path for path in tree if is_doc_path(path)]
    chosen = {
        path: blob
        for path, blob in tree.items()
        if path in selection and is_doc_path(path) and blob.size <= MAX_PAGE_BYTES
    }
    held = {item["path"]: item["file_hash"] for item in api.docs_files(project=project)}
    contents = git.read_blobs(repo, [blob.oid for blob in chosen.values()])
    pages = read_pages({path: contents[blob.oid] for path, blob in chosen.items() if blob.oid in contents})
    changed = [page for path, page in pages.items() if held.get(path) != page.file_hash]
    deleted = sorted(path for path in held if path in selection and path not in pages)
    payloads = [file_payload(page, known=known, docs_folder=selection.folder) for page in changed]
    outcome = DocsSyncOutcome(summary="", project=project, counts=dict.fromkeys(_COUNTS, 0))
    outcome.counts["unchanged"] = len(pages) - len(changed)
    batches = _batches(payloads, deleted)
    for number, (files, gone) in enumerate(batches, 1):
        answer = api.docs_sync(project=project, files=files, deleted=gone)
        for name in _COUNTS:
            if isinstance(answer.get(name), int):
                outcome.counts[name] = (
                    answer[name] if name == "links" else outcome.counts[name] + answer[name]
                )
        outcome.refused += [r for r in answer.get("refused") or [] if isinstance(r, dict)]
        outcome.sent += [file["path"] for file in files]
        outcome.deleted += gone
        if progress is not None:
            progress(number, len(batches))
    outcome.summary = _summary(project=project, commit=commit, outcome=outcome)
    return outcome


def _batches(payloads: list[dict[str, Any]], deleted: list[str]) -> list[tuple[list[dict], list[str]]]:
    """Requests under the server's size and count limits; deletions go with the last one."""
    batches: list[tuple[list[dict], list[str]]] = []
    files: list[dict] = []
    size = 0
    for payload in payloads:
        length = len(json.dumps(payload, ensure_ascii=False).encode())
        if files and (size + length > MAX_BATCH_BYTES or len(files) >= MAX_FILES_PER_SYNC):
            batches.append((files, []))
            files, size = [], 0
        files.append(payload)
        size += length
    if files:
        batches.append((files, []))
    for start in range(0, len(deleted), MAX_DELETED_PER_SYNC):
        gone = deleted[start : start + MAX_DELETED_PER_SYNC]
        if batches and not batches[-1][1]:
            batches[-1] = (batches[-1][0], gone)
        else:
            batches.append(([], gone))
    return batches


def _summary(*, project: str, commit: str, outcome: DocsSyncOutcome) -> str:
    counts = outcome.counts
    parts = [
        f"{counts[name]} {label}"
        for name, label in (
            ("added", "added"),
            ("updated", "updated"),
            ("unchanged", "unchanged"),
            ("retired", "retired"),
        )
        if counts[name]
    ]
    line = f"Synced the docs of {project} at {commit[:12]}: " + (", ".join(parts) or "no pages")
    if counts["sections_stored"] or counts["sections_kept"]:
        line += f" ({counts['sections_stored']} sections stored, {counts['sections_kept']} kept)"
    line += f"; {counts['links']} relates_to link{'' if counts['links'] == 1 else 's'}"
    for refused in outcome.refused:
        # The server names the place without the value; a server older than that echoed the heading.
        line += f"\nrefused {redact_secrets(str(refused.get('path')))}: {redact_secrets(str(refused.get('error')))}"
    return line
