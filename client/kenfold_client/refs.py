"""Check a project's code references against this checkout and report back (spec §1.9, sync client).

The server sends targets (a file, a symbol in a file, or a path-less symbol), each either pending or
anchored to a content hash at some commit. This module hashes each target at HEAD and reports it. Two
rules keep the answers honest across checkouts and branches:

- Anchor only committed code: a pending target whose file has uncommitted changes is skipped, because the
  memory may describe the uncommitted version.
- Compare only descendants: an anchored target is checked only when HEAD is the anchor commit or one of
  its descendants; an older or diverged checkout says nothing about it.

Answers that could be wrong are skipped rather than sent: a definition that could not be parsed, or a
path-less symbol whose search was incomplete, must not mark a good memory stale. The exception is a
pending target found nowhere: reporting it only marks it unresolved, which is retried later, and keeps it
from sitting at the front of the server's queue forever.
"""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kenfold_client import git, symbols
from kenfold_client.errors import ClientError, GitError
from kenfold_client.http import HTTP_TIMEOUT_SECONDS, KenfoldApi
from kenfold_common.coderefs import (
    COMMIT_RE,
    REF_STATES,
    is_code_file,
    is_valid_ref_path,
    is_valid_ref_symbol,
)

MAX_TARGETS = 500
# A path-less symbol whose name appears in more files than this is not searched: parsing them all would
# not fit in the hook's budget.
MAX_SEARCH_FILES = 20
# Checking gets this share of the time left after fetching targets; the rest is kept for reporting.
CHECK_SHARE = 0.75


class Deadline:
    """A point in time the work must finish by, read from a clock that tests can replace."""

    def __init__(self, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._end = clock() + seconds

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self.remaining() <= 0

    def cap(self, seconds: float) -> float:
        """``seconds``, shortened to the time left (never to zero, which libraries read as "no limit")."""
        return max(0.001, min(seconds, self.remaining()))

    def share(self, fraction: float) -> "Deadline":
        """A deadline of its own for ``fraction`` of the time left."""
        return Deadline(self.remaining() * fraction, clock=self._clock)


@dataclass(frozen=True)
class Target:
    """One reference to check: ``path`` or ``symbol`` may be empty, ``anchor_commit`` is None if pending."""

    path: str
    symbol: str
    anchor_commit: str | None = None

    @classmethod
    def from_json(cls, item: Any) -> "Target | None":
        """The target the server sent, or None if it is not one this client can check."""
        if not isinstance(item, dict):
            return None
        path, symbol, anchor = item.get("path", ""), item.get("symbol", ""), item.get("anchor_commit")
        if not isinstance(path, str) or not isinstance(symbol, str) or not (path or symbol):
            return None
        if (path and not is_valid_ref_path(path)) or (symbol and not is_valid_ref_symbol(symbol)):
            return None
        if anchor is not None and not (isinstance(anchor, str) and COMMIT_RE.fullmatch(anchor)):
            return None
        return cls(path=path, symbol=symbol, anchor_commit=anchor)


@dataclass(frozen=True)
class Result:
    """What HEAD says about a target: found with a content hash, or not found."""

    target: Target
    found: bool
    hash: str | None = None
    resolved_path: str | None = None

    def as_json(self) -> dict[str, Any]:
        item: dict[str, Any] = {"path": self.target.path, "symbol": self.target.symbol, "found": self.found}
        if self.target.anchor_commit is not None:
            item["anchor_commit"] = self.target.anchor_commit
        if self.hash is not None:
            item["hash"] = self.hash
        if self.resolved_path is not None:
            item["resolved_path"] = self.resolved_path
        return item


@dataclass(frozen=True)
class CheckOutcome:
    """The results to report, and how many targets got none."""

    results: list[Result]
    skipped: int  # targets the rules above leave unanswered
    unchecked: int  # targets not reached before the deadline


@dataclass(frozen=True)
class SyncOutcome:
    """What a sync did, for the CLI's summary line and a hook's decisions."""

    summary: str
    project: str | None = None
    commit: str | None = None
    check: CheckOutcome | None = None
    report: dict[str, Any] = field(default_factory=dict)


def refs_sync(
    *, directory: Path, api: KenfoldApi, budget_seconds: float, clock: Callable[[], float] = time.monotonic
) -> SyncOutcome:
    """Fetch the targets of the checkout's project, check them at HEAD and report the results.

    Checking uses 3/4 of the time left after the fetch, so the report (partial results included) still
    fits in ``budget_seconds``. A repository without commits is a no-op. Raises ClientError (and its
    subclasses) when the directory is not in a repository, the project cannot be told or the server fails.
    """
    deadline = Deadline(budget_seconds, clock=clock)
    repo = git.toplevel(directory, timeout=deadline.cap(git.GIT_TIMEOUT_SECONDS))
    if repo is None:
        raise ClientError(f"{directory} is not inside a git repository; run this in a checkout or pass --dir")
    commit = git.head_commit(repo, timeout=deadline.cap(git.GIT_TIMEOUT_SECONDS))
    if commit is None:
        return SyncOutcome(summary=f"Nothing to check: {repo} has no commits yet")
    project = git.detect_project(repo, timeout=deadline.cap(git.GIT_TIMEOUT_SECONDS))
    if project is None:
        raise ClientError(
            f"cannot tell the project of {repo}: its remote is not a project name (a local path?); "
            "add a remote such as git@github.com:org/repo.git"
        )
    sent = api.refs_targets(project=project, timeout=deadline.cap(HTTP_TIMEOUT_SECONDS))
    targets = [target for item in sent[:MAX_TARGETS] if (target := Target.from_json(item)) is not None]
    if not targets:
        return SyncOutcome(summary=f"No references to check in {project}", project=project, commit=commit)
    check = refs_check(repo=repo, commit=commit, targets=targets, deadline=deadline.share(CHECK_SHARE))
    report: dict[str, Any] = {}
    if check.results:
        report = api.refs_report(
            project=project,
            commit=commit,
            results=[result.as_json() for result in check.results],
            timeout=deadline.cap(HTTP_TIMEOUT_SECONDS),
        )
    return SyncOutcome(
        summary=_summary(project=project, commit=commit, check=check, report=report),
        project=project,
        commit=commit,
        check=check,
        report=report,
    )


def refs_check(*, repo: Path, commit: str, targets: Sequence[Target], deadline: Deadline) -> CheckOutcome:
    """Check ``targets`` in order at ``commit`` (HEAD) until ``deadline``; no network involved."""
    checkout = _Checkout(repo=repo, commit=commit, deadline=deadline)
    results: list[Result] = []
    try:
        checkout.lookup([target.path for target in targets if target.path])
    except GitError:
        return CheckOutcome(results, skipped=0, unchecked=len(targets))
    for index, target in enumerate(targets):
        if deadline.expired():
            return CheckOutcome(results, skipped=index - len(results), unchecked=len(targets) - index)
        try:
            result = checkout.check(target)
        except GitError:
            # Usually a timeout at the end of the budget; what was checked so far is still worth reporting.
            return CheckOutcome(results, skipped=index - len(results), unchecked=len(targets) - index)
        if result is not None:
            results.append(result)
    return CheckOutcome(results, skipped=len(targets) - len(results), unchecked=0)


class _Checkout:
    """HEAD of one repository, with the git lookups and parses shared by all targets of a sync."""

    def __init__(self, *, repo: Path, commit: str, deadline: Deadline) -> None:
        self.repo = repo
        self.commit = commit
        self.deadline = deadline
        self._blobs: dict[str, git.Blob | None] = {}
        self._contents: dict[str, bytes] = {}
        self._parsed: dict[str, symbols.ParsedFile | Exception] = {}
        self._dirty: frozenset[str] | None = None
        self._contains: dict[str, bool] = {}

    def check(self, target: Target) -> Result | None:
        """The result for ``target``, or None when the rules say to skip it."""
        pending = target.anchor_commit is None
        if not pending and not self._contains_anchor(target.anchor_commit or ""):
            return None
        if not target.path:
            return self._check_pathless_symbol(target, pending=pending)
        if pending and target.path in self._dirty_paths():
            return None
        blob = self._blob(target.path)
        if blob is None:
            return Result(target, found=False)
        if not target.symbol:
            return Result(target, found=True, hash=f"blob:{blob.oid}")
        try:
            definitions = self._parse(target.path).definitions(target.symbol)
        except symbols.UnsupportedFile:
            return Result(target, found=False) if pending else None
        except symbols.ParseFailed:
            return None
        if not definitions:
            return Result(target, found=False)
        return Result(target, found=True, hash=symbols.symbol_hash([(target.path, definitions)]))

    def _check_pathless_symbol(self, target: Target, *, pending: bool) -> Result | None:
        _, name = symbols.split_symbol(target.symbol)
        candidates = git.files_containing_word(self.repo, self.commit, name, timeout=self._git_timeout())
        complete = len(candidates) <= MAX_SEARCH_FILES
        defining: list[tuple[str, list[bytes]]] = []
        if complete:
            code_files = [path for path in candidates if is_code_file(path)]
            self.lookup(code_files)
            self._read(code_files)
            for path in code_files:
                try:
                    definitions = self._parse(path).definitions(target.symbol)
                except (symbols.UnsupportedFile, symbols.ParseFailed):
                    complete = False
                    continue
                if definitions:
                    defining.append((path, definitions))
        if not complete:
            return Result(target, found=False) if pending and not defining else None
        if not defining:
            return Result(target, found=False)
        if pending and any(path in self._dirty_paths() for path, _ in defining):
            return None
        return Result(target, found=True, hash=symbols.symbol_hash(defining), resolved_path=defining[0][0])

    def _git_timeout(self) -> float:
        return self.deadline.cap(git.GIT_TIMEOUT_SECONDS)

    def _contains_anchor(self, anchor: str) -> bool:
        if anchor not in self._contains:
            self._contains[anchor] = anchor == self.commit or git.is_ancestor(
                self.repo, anchor, self.commit, timeout=self._git_timeout()
            )
        return self._contains[anchor]

    def _dirty_paths(self) -> frozenset[str]:
        if self._dirty is None:
            self._dirty = git.dirty_paths(self.repo, timeout=self._git_timeout())
        return self._dirty

    def lookup(self, paths: list[str]) -> None:
        """Find the blobs of ``paths`` at HEAD with one git call (files absent at HEAD have none)."""
        unknown = list(dict.fromkeys(path for path in paths if path not in self._blobs))
        found = git.blobs_at(self.repo, self.commit, unknown, timeout=self._git_timeout())
        self._blobs.update({path: found.get(path) for path in unknown})

    def _blob(self, path: str) -> git.Blob | None:
        self.lookup([path])
        return self._blobs[path]

    def _read(self, paths: list[str]) -> None:
        """Read the parseable files among ``paths`` (already looked up) with one git call."""
        oids = [
            blob.oid
            for path in paths
            if (blob := self._blobs[path]) is not None
            and blob.oid not in self._contents
            and _parseable(path, blob)
        ]
        self._contents.update(git.read_blobs(self.repo, oids, timeout=self._git_timeout()))

    def _parse(self, path: str) -> symbols.ParsedFile:
        """The parsed file at HEAD; raises UnsupportedFile or ParseFailed."""
        if path not in self._parsed:
            try:
                self._parsed[path] = self._parse_uncached(path)
            except (symbols.UnsupportedFile, symbols.ParseFailed) as error:
                self._parsed[path] = error
        parsed = self._parsed[path]
        if isinstance(parsed, Exception):
            raise parsed
        return parsed

    def _parse_uncached(self, path: str) -> symbols.ParsedFile:
        blob = self._blob(path)
        if blob is None or not _parseable(path, blob):
            raise symbols.UnsupportedFile(f"{path} cannot be parsed by this build")
        self._read([path])
        timeout = self.deadline.cap(symbols.PARSE_TIMEOUT_SECONDS)
        return symbols.parse_file(path=path, source=self._contents[blob.oid], timeout=timeout)


def _parseable(path: str, blob: git.Blob) -> bool:
    return blob.size <= symbols.MAX_FILE_BYTES and symbols.grammar_for_path(path) is not None


def _summary(*, project: str, commit: str, check: CheckOutcome, report: dict[str, Any]) -> str:
    count = len(check.results)
    line = f"Checked {count} reference{'' if count == 1 else 's'} in {project} at {commit[:12]}"
    states = report.get("states") if isinstance(report.get("states"), dict) else {}
    # States a newer server may add follow the known ones, alphabetically.
    order = [*REF_STATES, *sorted(set(states) - set(REF_STATES))]
    counts = [
        f"{states[state]} {state}" for state in order if isinstance(states.get(state), int) and states[state]
    ]
    if isinstance(report.get("unmatched"), int) and report["unmatched"]:
        counts.append(f"{report['unmatched']} unmatched")
    if counts:
        line += ": " + ", ".join(counts)
    notes = []
    if check.skipped:
        notes.append(
            f"{check.skipped} skipped (uncommitted changes, not in this checkout's history or not parsable)"
        )
    if check.unchecked:
        notes.append(f"{check.unchecked} left for the next run (time limit)")
    return line + (f"; {'; '.join(notes)}" if notes else "")
