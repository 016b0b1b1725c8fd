"""The client runs beside a checkout, with no server installed: its distribution installs and works alone."""

import json
import shutil
import subprocess
from pathlib import Path

from kenfold_client.symbols import parse_file, symbol_hash

from .standalone import build_standalone_client
from .support import RefsServer, Repo

SOURCE = "def dedupe(items: list[str]) -> list[str]:\n    return list(dict.fromkeys(items))\n"
SERVER_SIDE = ("django", "ninja", "psycopg", "psycopg_pool", "pgvector", "onnxruntime", "numpy", "mcp")


def test_the_client_distribution_installs_alone_and_imports_no_server_package(
    standalone_client: Path,
) -> None:
    code = (
        "import importlib, importlib.util, pkgutil, sys\n"
        f"server_side = {SERVER_SIDE!r}\n"
        "installed = [name for name in server_side if importlib.util.find_spec(name) is not None]\n"
        "import kenfold_client, kenfold_common\n"
        "names = [f'{package.__name__}.{m.name}' for package in (kenfold_client, kenfold_common)\n"
        "         for m in pkgutil.iter_modules(package.__path__)]\n"
        "for name in names: importlib.import_module(name)\n"
        "loaded = sorted({m.split('.')[0] for m in sys.modules} & set(server_side))\n"
        "print(installed, loaded, 'kenfold_client.refs' in names, 'kenfold_common.secrets' in names)\n"
    )
    env = {"PATH": "/usr/bin:/bin"}  # in particular no DJANGO_SETTINGS_MODULE and no PYTHONPATH
    result = subprocess.run(
        [str(standalone_client / "python"), "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert result.stdout == "[] [] True True\n", "nothing of the server is installed or imported"


def test_the_kenfold_command_of_the_distribution_answers_help(standalone_client: Path) -> None:
    result = subprocess.run(
        [str(standalone_client / "kenfold"), "refs", "sync", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--key-env" in result.stdout and "--dir" in result.stdout


def test_the_kenfold_command_of_the_distribution_runs_every_hook_event(
    standalone_client: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    subprocess.run(["git", "init", "--quiet", str(checkout)], check=True)
    subprocess.run(
        ["git", "-C", str(checkout), "remote", "add", "origin", "git@github.com:a/b.git"], check=True
    )
    # No server listens on port 9: SessionStart and SessionEnd report it, the captures never notice.
    env = {
        "PATH": "/usr/bin:/bin",
        "KENFOLD_STATE_DIR": str(tmp_path / "state"),
        "KENFOLD_URL": "http://127.0.0.1:9/mcp",
    }
    printed = {}
    for event, field in [
        ("SessionStart", "source"),
        ("UserPromptSubmit", "prompt"),
        ("Stop", "last_assistant_message"),
        ("PostCompact", "compact_summary"),
        ("SessionEnd", "reason"),
    ]:
        payload = {"hook_event_name": event, "session_id": "s", "cwd": str(checkout), field: f"{event} text"}
        result = subprocess.run(
            [str(standalone_client / "kenfold"), "hook"],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            env=env,
        )
        assert result.returncode == 0, result.stderr
        printed[event] = json.loads(result.stdout)["systemMessage"] if result.stdout else None
    assert printed["SessionStart"].startswith("Kenfold memory was not loaded: cannot reach Kenfold")
    assert [printed[event] for event in ("UserPromptSubmit", "Stop", "PostCompact")] == [None, None, None]
    assert printed["SessionEnd"].startswith("Kenfold session summary kept for the next session start")
    [spooled] = (tmp_path / "state" / "spool").glob("*.json")
    assert (
        "- UserPromptSubmit text\nFinal response:\nStop text\nSummary at compaction:\nPostCompact text"
        in (json.loads(spooled.read_text())["content"])
    )


def test_the_client_installs_and_runs_on_python_3_11(tmp_path: Path, refs_server: RefsServer) -> None:
    """Agents' machines are not ours to choose: the client supports Python 3.11+ (the server needs 3.12).
    Installed by python3.11 from the wheelhouse, it answers --help, parses with tree-sitter and reports
    the same hash as the client under this interpreter."""
    python = shutil.which("python3.11")
    assert python is not None, "this test needs python3.11 on PATH (the client supports Python 3.11+)"
    bin_dir = build_standalone_client(tmp_path / "py311", python=python)
    version = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout == "(3, 11)\n"
    usage = subprocess.run([str(bin_dir / "kenfold"), "--help"], capture_output=True, text=True, check=True)
    assert usage.stdout.startswith("usage: kenfold [-h] COMMAND") and "hook" in usage.stdout

    repo = Repo(tmp_path / "checkout")
    repo.git("remote", "add", "origin", "git@github.com:acme/shop.git")
    repo.write("app/server.py", SOURCE)
    head = repo.commit()
    refs_server.targets = [
        {"path": "app/server.py", "symbol": "dedupe", "anchor_commit": None, "anchor_hash": None}
    ]
    result = subprocess.run(
        [str(bin_dir / "kenfold"), "refs", "sync", "--url", refs_server.mcp_url, "--key-env", "KEY"],
        cwd=repo.path,
        env={"PATH": "/usr/bin:/bin", "KEY": "kf_test"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    [report] = refs_server.posts()
    expected = symbol_hash(
        [("app/server.py", parse_file(path="app/server.py", source=SOURCE.encode()).definitions("dedupe"))]
    )
    assert report.body["commit"] == head
    assert [(item["path"], item["symbol"], item["hash"]) for item in report.body["results"]] == [
        ("app/server.py", "dedupe", expected)
    ]
