"""The sync's rules on real git repositories: anchoring only committed code, comparing only descendants,
path-less symbols found with git grep, incomplete searches, and the time budget. No network here."""

from pathlib import Path

import pytest

from kenfold_client import git
from kenfold_client.refs import MAX_SEARCH_FILES, Deadline, Result, Target, refs_check
from kenfold_client.symbols import parse_file, symbol_hash

from .support import Repo

SERVER_PY = """\
class Server:
    def dedupe(self, items):
        return list(dict.fromkeys(items))
"""


def check(repo: Repo, *targets: Target) -> list[Result]:
    """The results for ``targets`` at HEAD, with all the time in the world."""
    outcome = refs_check(
        repo=repo.path, commit=repo.git("rev-parse", "HEAD"), targets=targets, deadline=Deadline(60)
    )
    return outcome.results


def only(results: list[Result]) -> Result:
    assert len(results) == 1, results
    return results[0]


def python_hash(path: str, source: str, symbol: str) -> str:
    return symbol_hash([(path, parse_file(path=path, source=source.encode()).definitions(symbol))])


# --- files and symbols with a path --------------------------------------------------------------------------


def test_file_ref_hashes_as_the_git_blob_id(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    repo.commit()
    result = only(check(repo, Target("app/server.py", "")))
    assert (result.found, result.hash) == (True, f"blob:{repo.blob('app/server.py')}")
    assert result.as_json() == {"path": "app/server.py", "symbol": "", "found": True, "hash": result.hash}


def test_file_absent_at_head_is_not_found(repo: Repo):
    repo.write("README.md", "hello\n")
    repo.commit()
    assert only(check(repo, Target("app/gone.py", ""))).as_json() == {
        "path": "app/gone.py",
        "symbol": "",
        "found": False,
    }
    assert only(check(repo, Target("app/gone.py", "dedupe"))).found is False


def test_symbol_with_path_hashes_its_definition(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    repo.commit()
    result = only(check(repo, Target("app/server.py", "Server.dedupe")))
    assert (result.found, result.hash, result.resolved_path) == (
        True,
        python_hash("app/server.py", SERVER_PY, "Server.dedupe"),
        None,
    )
    assert only(check(repo, Target("app/server.py", "missing_name"))).found is False


def test_symbol_in_a_file_without_grammar_is_reported_only_while_pending(repo: Repo):
    repo.write("init.lua", "function dedupe() end\n")
    anchor = repo.commit()
    assert only(check(repo, Target("init.lua", "dedupe"))).as_json() == {
        "path": "init.lua",
        "symbol": "dedupe",
        "found": False,
    }
    assert check(repo, Target("init.lua", "dedupe", anchor)) == []


def test_symbol_in_a_file_that_does_not_parse_is_skipped(repo: Repo):
    repo.write("app/broken.py", "def helper(:\n    pass\n")
    anchor = repo.commit()
    assert check(repo, Target("app/broken.py", "dedupe"), Target("app/broken.py", "dedupe", anchor)) == []


# --- anchor only committed code -------------------------------------------------------------------------------


def test_pending_target_whose_file_has_uncommitted_changes_is_skipped(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    repo.write("app/other.py", "x = 1\n")
    repo.commit()
    repo.write("app/server.py", SERVER_PY + "\n# being edited\n")
    results = check(
        repo, Target("app/server.py", ""), Target("app/server.py", "dedupe"), Target("app/other.py", "")
    )
    assert [result.target.path for result in results] == ["app/other.py"]


def test_staged_changes_count_as_uncommitted(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    repo.commit()
    repo.write("app/server.py", SERVER_PY.replace("items", "entries"))
    repo.git("add", "app/server.py")
    assert check(repo, Target("app/server.py", "dedupe")) == []


def test_a_rename_marks_both_paths_dirty(repo: Repo):
    repo.write("app/old.py", SERVER_PY)
    repo.write("app/kept.py", "x = 1\n")
    repo.commit()
    repo.git("mv", "app/old.py", "app/new.py")
    assert git.dirty_paths(repo.path) == {"app/old.py", "app/new.py"}
    results = check(repo, Target("app/old.py", ""), Target("app/new.py", ""), Target("app/kept.py", ""))
    assert [result.target.path for result in results] == ["app/kept.py"]


def test_untracked_files_do_not_make_a_checkout_dirty(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    repo.commit()
    repo.write("scratch.py", "print(1)\n")
    assert only(check(repo, Target("app/server.py", ""))).found is True


def test_anchored_target_is_compared_even_when_its_file_is_dirty(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    anchor = repo.commit()
    repo.write("app/server.py", "# being edited\n")
    result = only(check(repo, Target("app/server.py", "", anchor)))
    # HEAD's content is compared, not the working tree's.
    assert result.as_json() == {
        "path": "app/server.py",
        "symbol": "",
        "anchor_commit": anchor,
        "found": True,
        "hash": f"blob:{repo.blob('app/server.py')}",
    }


# --- compare only descendants ---------------------------------------------------------------------------------


def test_anchor_is_checked_from_its_own_commit_and_from_descendants(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    anchor = repo.commit("anchor")
    assert only(check(repo, Target("app/server.py", "dedupe", anchor))).found is True
    repo.write("app/server.py", SERVER_PY.replace("items", "entries"))
    repo.commit("later")
    result = only(check(repo, Target("app/server.py", "dedupe", anchor)))
    assert result.hash == python_hash("app/server.py", SERVER_PY.replace("items", "entries"), "dedupe")


def test_anchor_is_not_checked_from_an_older_or_diverged_checkout(repo: Repo):
    repo.write("app/server.py", SERVER_PY)
    base = repo.commit("base")
    repo.git("switch", "--quiet", "-c", "feature")
    repo.write("app/server.py", SERVER_PY.replace("items", "entries"))
    feature_anchor = repo.commit("feature")
    repo.git("switch", "--quiet", "main")
    repo.write("app/other.py", "x = 1\n")
    repo.commit("diverged")
    assert check(repo, Target("app/server.py", "dedupe", feature_anchor)) == []
    repo.git("checkout", "--quiet", base)  # older than the anchor
    assert check(repo, Target("app/server.py", "dedupe", feature_anchor)) == []
    # An anchor this clone has never seen says nothing either.
    assert check(repo, Target("app/server.py", "dedupe", "ab" * 20)) == []


# --- path-less symbols ----------------------------------------------------------------------------------------


def test_pathless_symbol_is_found_with_git_grep_in_every_defining_file(repo: Repo):
    first = "def dedupe(items):\n    return items\n"
    second = "class Cache:\n    def dedupe(self, items):\n        return set(items)\n"
    repo.write("b/cache.py", second)
    repo.write("a/util.py", first)
    repo.write("c/use.py", "from a.util import dedupe\n\ndedupe([1])\n")
    repo.write("docs/notes.md", "dedupe is described here\n")
    repo.commit()
    result = only(check(repo, Target("", "dedupe")))
    assert result.resolved_path == "a/util.py"
    expected = symbol_hash(
        [
            ("a/util.py", [b"def dedupe(items):\n    return items"]),
            ("b/cache.py", [b"def dedupe(self, items):\n        return set(items)"]),
        ]
    )
    assert (result.found, result.hash) == (True, expected)
    qualified = only(check(repo, Target("", "Cache.dedupe")))
    assert (qualified.resolved_path, qualified.found) == ("b/cache.py", True)


def test_pathless_symbol_found_nowhere_is_not_found(repo: Repo):
    repo.write("a/util.py", "x = dedupe  # only mentioned\n")
    anchor = repo.commit()
    assert only(check(repo, Target("", "dedupe"))).as_json() == {
        "path": "",
        "symbol": "dedupe",
        "found": False,
    }
    assert only(check(repo, Target("", "dedupe", anchor))).found is False


def test_pending_pathless_symbol_with_a_dirty_defining_file_is_skipped(repo: Repo):
    repo.write("a/util.py", "def dedupe(items):\n    return items\n")
    repo.write("b/other.py", "def helper():\n    pass\n")
    anchor = repo.commit()
    repo.write("a/util.py", "def dedupe(items):\n    return sorted(items)\n")
    assert check(repo, Target("", "dedupe")) == []
    # A dirty file that does not define it does not matter, and anchored symbols are compared at HEAD.
    assert only(check(repo, Target("", "helper"))).found is True
    assert only(check(repo, Target("", "dedupe", anchor))).found is True


def test_search_over_too_many_files_is_incomplete(repo: Repo):
    for index in range(MAX_SEARCH_FILES + 1):
        repo.write(f"pkg/use_{index}.py", "from lib import dedupe\n")
    anchor = repo.commit()
    # Pending and found nowhere (nothing was parsed): reported, which only marks it unresolved.
    assert only(check(repo, Target("", "dedupe"))).found is False
    # Anchored: "not found" would be a guess that marks the memory stale.
    assert check(repo, Target("", "dedupe", anchor)) == []


def test_search_with_an_unparsable_code_file_is_incomplete(repo: Repo):
    repo.write("a/util.py", "def dedupe(items):\n    return items\n")
    repo.write("scripts/tool.lua", "local dedupe = require('dedupe')\n")
    repo.write("only/mention.py", "x = unknown_name\n")
    repo.write("scripts/other.lua", "unknown_name()\n")
    anchor = repo.commit()
    assert check(repo, Target("", "dedupe"), Target("", "dedupe", anchor)) == []
    assert only(check(repo, Target("", "unknown_name"))).found is False
    assert check(repo, Target("", "unknown_name", anchor)) == []


# --- targets and budget -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        {"path": "/etc/passwd", "symbol": ""},
        {"path": "notes.txt", "symbol": ""},
        {"path": "a.py", "symbol": "not a symbol"},
        {"path": "", "symbol": ""},
        {"path": "a.py", "symbol": "", "anchor_commit": "not-hex"},
        {"path": 3, "symbol": ""},
        "a.py",
    ],
)
def test_invalid_targets_are_refused(item: object):
    assert Target.from_json(item) is None


def test_valid_target_from_json():
    item = {"path": "a/b.py", "symbol": "Server.dedupe", "anchor_commit": "0123abc", "anchor_hash": "sym:x"}
    assert Target.from_json(item) == Target("a/b.py", "Server.dedupe", "0123abc")
    assert Target.from_json({"path": "", "symbol": "dedupe", "anchor_commit": None}) == Target("", "dedupe")


def test_checking_stops_at_the_deadline_and_keeps_what_it_has(repo: Repo):
    repo.write("a.py", "x = 1\n")
    commit = repo.commit()
    targets = [Target("a.py", "")] + [Target(f"gone/file_{index}.py", "") for index in range(49)]
    expired = refs_check(repo=repo.path, commit=commit, targets=targets, deadline=Deadline(0))
    assert (expired.results, expired.skipped, expired.unchecked) == ([], 0, 50)

    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # every reading of the clock takes a second
        return now[0]

    partial = refs_check(repo=repo.path, commit=commit, targets=targets, deadline=Deadline(20, clock=clock))
    assert 0 < len(partial.results) < 50
    assert partial.results[0].found is True
    assert (partial.skipped, partial.unchecked) == (0, 50 - len(partial.results))


def test_git_helpers_outside_a_repository_and_without_commits(tmp_path: Path, repo: Repo):
    assert git.toplevel(tmp_path / "missing") is None
    assert git.toplevel(tmp_path) is None
    assert git.head_commit(repo.path) is None
    (repo.path / "sub").mkdir()
    assert git.toplevel(repo.path / "sub") == repo.path.resolve()


@pytest.mark.parametrize(
    ("remotes", "expected"),
    [
        (
            [("origin", "https://user:secret@GitHub.com/Org/Repo.git"), ("aaa", "git@x.org:a/b")],
            "github.com/org/repo",
        ),
        # `git remote` lists remotes by name, whatever order they were added in.
        ([("zeta", "https://x.org/z"), ("upstream", "git@gitlab.com:Team/Tool.git")], "gitlab.com/team/tool"),
        ([], "checkout"),
        ([("origin", "/srv/git/repo.git")], None),
    ],
    ids=["origin-without-credentials", "first-remote", "directory-name", "local-path"],
)
def test_project_detection(repo: Repo, remotes: list[tuple[str, str]], expected: str | None):
    for name, url in remotes:
        repo.git("remote", "add", name, url)
    assert git.detect_project(repo.path) == expected
