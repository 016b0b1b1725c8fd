"""`kenfold refs sync` end to end: the real command against a small real HTTP server on 127.0.0.1 that
speaks the references REST contract, over real git checkouts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenfold_client.http import KenfoldApi
from kenfold_client.refs import MAX_TARGETS, refs_sync
from kenfold_client.symbols import parse_file, symbol_hash

from .support import RefsServer, Repo

KEY = "kf_test_key_0123456789"
REMOTE = "https://deploy:remote-token@GitHub.com/Org/Repo.git"
PROJECT = "github.com/org/repo"
SERVER_PY = """\
class Server:
    def dedupe(self, items):
        return list(dict.fromkeys(items))
"""


def client_env(**extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("KENFOLD_")}
    return env | extra


def run_sync(*args: str, cwd: Path, env: dict[str, str] | None = None, command: list[str] | None = None):
    return subprocess.run(
        [*(command or [sys.executable, "-m", "kenfold_client"]), "refs", "sync", *args],
        cwd=cwd,
        env=env or client_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "key"
    path.write_text(KEY + "\n")
    return path


def python_hash(path: str, source: str, symbol: str) -> str:
    return symbol_hash([(path, parse_file(path=path, source=source.encode()).definitions(symbol))])


@pytest.fixture
def project_repo(repo: Repo) -> Repo:
    repo.git("remote", "add", "origin", REMOTE)
    return repo


def test_sync_anchors_pending_targets_compares_anchored_ones_and_prints_the_summary(
    tmp_path: Path, project_repo: Repo, refs_server: RefsServer
):
    repo = project_repo
    repo.write("app/server.py", SERVER_PY)
    anchor = repo.commit("anchor")
    changed_source = SERVER_PY.replace("items", "entries")
    repo.write("app/server.py", changed_source)
    repo.write("app/util.py", "def helper(value):\n    return value\n")
    head = repo.commit("later")
    refs_server.targets = [
        {"path": "app/server.py", "symbol": "", "anchor_commit": None, "anchor_hash": None},
        {"path": "", "symbol": "helper", "anchor_commit": None, "anchor_hash": None},
        {
            "path": "app/server.py",
            "symbol": "Server.dedupe",
            "anchor_commit": anchor,
            "anchor_hash": "sym:old",
        },
    ]
    refs_server.report = {"updated": 3, "anchored": 2, "unmatched": 0, "states": {"changed": 1, "current": 2}}
    (repo.path / "app" / "nested").mkdir()

    result = run_sync(
        "--dir",
        str(repo.path / "app" / "nested"),
        "--url",
        refs_server.mcp_url,
        "--key-file",
        str(key_file(tmp_path)),
        cwd=tmp_path,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Checked 3 references in {PROJECT} at {head[:12]}: 2 current, 1 changed\n"
    get, post = refs_server.received
    assert (get.method, get.path, get.query) == ("GET", "/api/v1/refs", {"project": [PROJECT]})
    assert get.headers["authorization"] == post.headers["authorization"] == f"Bearer {KEY}"
    assert (post.method, post.path) == ("POST", "/api/v1/refs/check")
    assert post.body == {
        "project": PROJECT,
        "commit": head,
        "results": [
            {
                "path": "app/server.py",
                "symbol": "",
                "found": True,
                "hash": f"blob:{repo.blob('app/server.py')}",
            },
            {
                "path": "",
                "symbol": "helper",
                "found": True,
                "hash": python_hash("app/util.py", "def helper(value):\n    return value\n", "helper"),
                "resolved_path": "app/util.py",
            },
            {
                "path": "app/server.py",
                "symbol": "Server.dedupe",
                "anchor_commit": anchor,
                "found": True,
                "hash": python_hash("app/server.py", changed_source, "Server.dedupe"),
            },
        ],
    }
    # The remote's credentials never leave the machine.
    assert not any("remote-token" in repr(request) for request in refs_server.received)


def test_console_script_runs_the_sync_quietly(tmp_path: Path, project_repo: Repo, refs_server: RefsServer):
    project_repo.write("app/server.py", SERVER_PY)
    project_repo.commit()
    refs_server.targets = [{"path": "app/server.py", "symbol": ""}]
    kenfold = Path(sys.executable).parent / "kenfold"

    result = run_sync(
        "--url",
        refs_server.mcp_url,
        "--quiet",
        cwd=project_repo.path,
        command=[str(kenfold)],
        env=client_env(KENFOLD_API_KEY=KEY),
    )

    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    assert [request.method for request in refs_server.received] == ["GET", "POST"]


@pytest.mark.parametrize(
    ("args", "env", "authorization"),
    [
        ([], {"KENFOLD_API_KEY": KEY}, f"Bearer {KEY}"),
        (
            ["--key-env", "MY_KENFOLD_KEY"],
            {"MY_KENFOLD_KEY": KEY, "KENFOLD_API_KEY": "kf_other"},
            f"Bearer {KEY}",
        ),
        ([], {}, None),
    ],
    ids=["KENFOLD_API_KEY", "key-env", "no-key"],
)
def test_api_key_sources(
    project_repo: Repo,
    refs_server: RefsServer,
    args: list[str],
    env: dict[str, str],
    authorization: str | None,
):
    project_repo.commit()
    result = run_sync(*args, cwd=project_repo.path, env=client_env(KENFOLD_URL=refs_server.mcp_url, **env))
    assert result.returncode == 0, result.stderr
    assert refs_server.received[0].headers.get("authorization") == authorization


def test_no_targets_means_no_report(project_repo: Repo, refs_server: RefsServer):
    project_repo.commit()
    result = run_sync("--url", refs_server.mcp_url, cwd=project_repo.path)
    assert (result.returncode, result.stdout) == (0, f"No references to check in {PROJECT}\n")
    assert [request.method for request in refs_server.received] == ["GET"]


def test_repository_without_commits_is_a_no_op(project_repo: Repo, refs_server: RefsServer):
    result = run_sync("--url", refs_server.mcp_url, cwd=project_repo.path)
    assert result.returncode == 0
    assert result.stdout.startswith("Nothing to check:")
    assert refs_server.received == []


def test_skipped_targets_are_counted_and_nothing_is_posted_when_all_are_skipped(
    project_repo: Repo, refs_server: RefsServer
):
    project_repo.write("app/server.py", SERVER_PY)
    project_repo.commit()
    project_repo.write("app/server.py", SERVER_PY + "# editing\n")
    refs_server.targets = [
        {"path": "app/server.py", "symbol": ""},
        {"path": "app/server.py", "symbol": "dedupe"},
    ]
    result = run_sync("--url", refs_server.mcp_url, cwd=project_repo.path)
    assert result.returncode == 0, result.stderr
    assert "Checked 0 references" in result.stdout
    assert "2 skipped" in result.stdout
    assert refs_server.posts() == []


def test_targets_are_capped_and_invalid_ones_skipped(project_repo: Repo, refs_server: RefsServer):
    head = project_repo.commit()
    refs_server.targets = [{"path": "../outside.py", "symbol": ""}] + [
        {"path": f"gone/file_{index}.py", "symbol": ""} for index in range(MAX_TARGETS)
    ]
    result = run_sync("--url", refs_server.mcp_url, "--quiet", cwd=project_repo.path)
    assert result.returncode == 0, result.stderr
    (post,) = refs_server.posts()
    assert post.body["commit"] == head
    paths = [item["path"] for item in post.body["results"]]
    # The invalid first target counts toward the 500, so the last one sent is beyond the cap.
    assert paths == [f"gone/file_{index}.py" for index in range(MAX_TARGETS - 1)]
    assert not any(item["found"] for item in post.body["results"])


def test_partial_results_are_reported_when_the_budget_runs_out(project_repo: Repo, refs_server: RefsServer):
    project_repo.commit()
    refs_server.targets = [{"path": f"gone/file_{index}.py", "symbol": ""} for index in range(50)]
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0  # every reading of the clock takes a second: the budget ends part-way through
        return now[0]

    with KenfoldApi(mcp_url=refs_server.mcp_url, api_key=KEY) as api:
        outcome = refs_sync(directory=project_repo.path, api=api, budget_seconds=60, clock=clock)

    (post,) = refs_server.posts()
    assert outcome.check is not None
    assert 0 < len(post.body["results"]) == len(outcome.check.results) < 50
    assert outcome.check.unchecked == 50 - len(outcome.check.results)
    assert f"{outcome.check.unchecked} left for the next run" in outcome.summary


# --- failures ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "missing API key: send the header"),
        (403, "read-only key"),
        (404, "no such endpoint: /api/v1/refs"),
    ],
)
def test_server_refusal_exits_1_with_the_servers_message(
    project_repo: Repo, refs_server: RefsServer, status: int, message: str
):
    project_repo.commit()
    refs_server.failure = (status, {"error": message})
    result = run_sync("--url", refs_server.mcp_url, cwd=project_repo.path)
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"({status}): {message}" in result.stderr


def test_unreachable_server_exits_1(project_repo: Repo, refs_server: RefsServer):
    project_repo.commit()
    result = run_sync("--url", "http://127.0.0.1:9/mcp", cwd=project_repo.path)
    assert result.returncode == 1
    assert "cannot reach Kenfold at http://127.0.0.1:9/api/v1/refs" in result.stderr


def test_redirect_to_another_origin_is_refused_with_a_key(
    project_repo: Repo, start_refs_server, refs_server: RefsServer
):
    project_repo.commit()
    elsewhere = start_refs_server()
    refs_server.redirects = {"/api/v1/refs": f"{elsewhere.url}/api/v1/refs"}
    result = run_sync(
        "--url", refs_server.mcp_url, cwd=project_repo.path, env=client_env(KENFOLD_API_KEY=KEY)
    )
    assert result.returncode == 1
    assert "redirects to another origin" in result.stderr
    assert elsewhere.received == []


def test_redirect_within_the_same_origin_is_followed_with_the_key(
    project_repo: Repo, refs_server: RefsServer
):
    project_repo.commit()
    refs_server.redirects = {"/api/v1/refs": f"{refs_server.url}/moved/api/v1/refs"}
    result = run_sync(
        "--url", refs_server.mcp_url, cwd=project_repo.path, env=client_env(KENFOLD_API_KEY=KEY)
    )
    assert result.returncode == 0, result.stderr
    assert [request.path for request in refs_server.received] == ["/api/v1/refs", "/moved/api/v1/refs"]
    assert refs_server.received[1].headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--url", "http://127.0.0.1:7077/api"], {}, "not a Kenfold MCP URL"),
        (
            [],
            {"KENFOLD_URL": "ftp://example.org/mcp"},
            "KENFOLD_URL is not a valid URL",
        ),
        (["--key-file", "/nonexistent/key"], {}, "cannot read the API key file"),
        (["--key-env", "UNSET_KENFOLD_TEST_KEY"], {}, "UNSET_KENFOLD_TEST_KEY named by --key-env is not set"),
        (["--key-file", "k", "--key-env", "K"], {}, "not allowed with argument"),
        (["--dir", "/nonexistent/dir"], {}, "is not a directory"),
        (["--bogus"], {}, "unrecognized arguments"),
    ],
    ids=[
        "url-not-mcp",
        "bad-KENFOLD_URL",
        "key-file-missing",
        "key-env-unset",
        "two-key-sources",
        "dir",
        "option",
    ],
)
def test_usage_errors_exit_2(project_repo: Repo, args: list[str], env: dict[str, str], message: str):
    project_repo.commit()
    result = run_sync(*args, cwd=project_repo.path, env=client_env(**env))
    assert result.returncode == 2
    assert message in result.stderr


def test_outside_a_repository_exits_1(tmp_path: Path, refs_server: RefsServer):
    result = run_sync("--url", refs_server.mcp_url, cwd=tmp_path)
    assert result.returncode == 1
    assert "is not inside a git repository" in result.stderr
    assert refs_server.received == []


def test_api_base_sits_beside_the_mcp_endpoint():
    with KenfoldApi(mcp_url="https://memory.example/kenfold/mcp/", api_key=None) as api:
        assert str(api.base_url) == "https://memory.example/kenfold/api/v1"
