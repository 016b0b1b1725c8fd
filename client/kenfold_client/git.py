"""Git plumbing for the sync client (spec §1.9).

Every call has a timeout (10 s, or less when the caller's budget is shorter), never prompts for
credentials, takes no optional locks (a sync running beside the user's own git commands must not make
them fail on ``index.lock``), reads paths literally (``[id].tsx`` is a file name, not a glob) and parses
the C locale's output.
"""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from kenfold_client.errors import GitError
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import normalize_project

GIT_TIMEOUT_SECONDS = 10.0

_ENVIRONMENT = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_LITERAL_PATHSPECS": "1",
    "LC_ALL": "C",
}
# `git merge-base --is-ancestor` answers "no" with exit code 1, and 128 for a commit this clone lacks.
_NOT_ANCESTOR = 1
_UNKNOWN_COMMIT = 128
# `git grep` exits 1 when nothing matched.
_NO_MATCH = 1


@dataclass(frozen=True)
class Blob:
    """A file in a commit: its git blob id and size in bytes."""

    oid: str
    size: int


def _git(
    cwd: Path,
    *args: str,
    timeout: float = GIT_TIMEOUT_SECONDS,
    stdin: bytes | None = None,
    accept: tuple[int, ...] = (0,),
) -> subprocess.CompletedProcess[bytes]:
    try:
        result = subprocess.run(
            ["git", "--no-optional-locks", *args],
            cwd=cwd,
            env=os.environ | _ENVIRONMENT,
            input=stdin,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} did not finish within {timeout:.1f} s") from None
    except OSError as error:
        raise GitError(
            f"could not run git ({error.strerror}); install git and make sure it is on PATH"
        ) from None
    if result.returncode not in accept:
        message = result.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else f'exit {result.returncode}'}")
    return result


def _text(output: bytes) -> str:
    return output.decode(errors="surrogateescape").strip()


def toplevel(directory: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> Path | None:
    """The top level of the working tree containing ``directory``; None outside a repository."""
    if not directory.is_dir():
        return None
    result = _git(directory, "rev-parse", "--show-toplevel", timeout=timeout, accept=(0, 128))
    # 128 is git's "not a git repository" (and a bare repository has no top level either).
    if result.returncode != 0 or not _text(result.stdout):
        return None
    return Path(_text(result.stdout))


def head_commit(repo: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> str | None:
    """The full id of the commit HEAD points to; None when the repository has no commits yet."""
    result = _git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", timeout=timeout, accept=(0, 1))
    return _text(result.stdout) if result.returncode == 0 else None


def remote_url(repo: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> str | None:
    """The URL of the remote ``origin``, else of the first remote; None without remotes."""
    names = _text(_git(repo, "remote", timeout=timeout).stdout).splitlines()
    if not names:
        return None
    name = "origin" if "origin" in names else names[0]
    return _text(_git(repo, "remote", "get-url", name, timeout=timeout).stdout) or None


def current_branch(repo: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> str | None:
    """The checked-out branch; None on a detached HEAD."""
    result = _git(repo, "symbolic-ref", "--short", "-q", "HEAD", timeout=timeout, accept=(0, 1))
    return _text(result.stdout) or None


def detect_project(repo: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> str | None:
    """The project of a checkout: its remote (``origin``, else the first), else its directory's name.

    Normalized here, on the user's machine, so credentials in a remote URL are never sent anywhere. None
    when the result is not a valid project (a remote that is a local path, for instance).
    """
    try:
        return normalize_project(remote_url(repo, timeout=timeout) or repo.name)
    except InvalidInput:
        return None


def dirty_paths(repo: Path, *, timeout: float = GIT_TIMEOUT_SECONDS) -> frozenset[str]:
    """Tracked paths with uncommitted changes, staged or not; a rename or copy marks both of its paths."""
    output = _git(repo, "status", "--porcelain", "-z", "--untracked-files=no", timeout=timeout).stdout
    fields = output.decode(errors="surrogateescape").split("\0")
    paths: set[str] = set()
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if len(entry) < 4:
            continue  # the empty field after the last NUL
        status, path = entry[:2], entry[3:]
        paths.add(path)
        # With -z a rename or copy is "XY new\0old\0": the old path follows as a field of its own.
        if "R" in status or "C" in status:
            paths.add(fields[index])
            index += 1
    return frozenset(paths)


def blobs_at(
    repo: Path, commit: str, paths: list[str], *, timeout: float = GIT_TIMEOUT_SECONDS
) -> dict[str, Blob]:
    """The blob of each path that is a regular file (not a directory or submodule) in ``commit``."""
    if not paths:
        return {}
    return _tree_blobs(_git(repo, "ls-tree", "-l", "-z", commit, "--", *paths, timeout=timeout).stdout)


def read_blobs(repo: Path, oids: list[str], *, timeout: float = GIT_TIMEOUT_SECONDS) -> dict[str, bytes]:
    """The contents of the given blobs, read with one `git cat-file --batch`."""
    if not oids:
        return {}
    unique = list(dict.fromkeys(oids))
    output = _git(
        repo, "cat-file", "--batch", timeout=timeout, stdin="".join(f"{oid}\n" for oid in unique).encode()
    ).stdout
    contents: dict[str, bytes] = {}
    position = 0
    for oid in unique:
        header_end = output.index(b"\n", position)
        header = output[position:header_end].decode().split()
        position = header_end + 1
        if header[-1] == "missing":
            continue
        size = int(header[2])
        contents[oid] = output[position : position + size]
        position += size + 1  # the content is followed by a newline
    return contents


def is_ancestor(repo: Path, ancestor: str, commit: str, *, timeout: float = GIT_TIMEOUT_SECONDS) -> bool:
    """Whether ``ancestor`` is ``commit`` or one of its ancestors; False for a commit this clone lacks."""
    result = _git(
        repo,
        "merge-base",
        "--is-ancestor",
        ancestor,
        commit,
        timeout=timeout,
        accept=(0, _NOT_ANCESTOR, _UNKNOWN_COMMIT),
    )
    return result.returncode == 0


def files_containing_word(
    repo: Path, commit: str, word: str, *, timeout: float = GIT_TIMEOUT_SECONDS
) -> list[str]:
    """Paths of the text files in ``commit`` that contain ``word`` as a whole word, in git's path order."""
    output = _git(
        repo, "grep", "-l", "-z", "-I", "-w", "-F", "-e", word, commit, timeout=timeout, accept=(0, _NO_MATCH)
    ).stdout
    prefix = f"{commit}:"
    return [
        entry.removeprefix(prefix) for entry in output.decode(errors="surrogateescape").split("\0") if entry
    ]


def files_at(repo: Path, commit: str, *, timeout: float = GIT_TIMEOUT_SECONDS) -> dict[str, Blob]:
    """Every regular file of ``commit`` (recursively) with its blob."""
    return _tree_blobs(_git(repo, "ls-tree", "-r", "-l", "-z", commit, timeout=timeout).stdout)


def _tree_blobs(output: bytes) -> dict[str, Blob]:
    """The regular files of `git ls-tree -l -z` output (not directories or submodules)."""
    blobs: dict[str, Blob] = {}
    for entry in output.decode(errors="surrogateescape").split("\0"):
        if not entry:
            continue
        info, _, path = entry.partition("\t")
        _mode, kind, oid, size = info.split()
        if kind == "blob":
            blobs[path] = Blob(oid=oid, size=int(size))
    return blobs
