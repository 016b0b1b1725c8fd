"""`kenfold hook config|install|uninstall`: the entries agents need, merged into (and removed from) their own
files. The install checks the server first: here against the small MCP endpoint of tests/client/support.py;
test_hook_e2e.py installs against a real server."""

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.support.processes import free_port
from kenfold_client.__main__ import main

from .support import RefsServer

CLAUDE_TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "PostCompact": 5, "SessionEnd": 5}
CODEX_TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "SessionEnd": 3}
THEIRS = {"type": "command", "command": "notify-send done", "timeout": 2}


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def handlers(settings: dict, event: str) -> list[dict]:
    return [handler for group in settings["hooks"][event] for handler in group["hooks"]]


@pytest.mark.parametrize(
    ("client", "timeouts"), [("claude-code", CLAUDE_TIMEOUTS), ("codex", CODEX_TIMEOUTS)]
)
def test_config_prints_every_event_with_the_spec_timeouts_and_an_absolute_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, client: str, timeouts: dict[str, int]
) -> None:
    key_file = tmp_path / "key with space"
    code, out, _ = run(
        capsys, "hook", "config", client, "--key-file", str(key_file), "--url", "https://kf.example/mcp"
    )
    assert code == 0
    config = json.loads(out)
    assert {event: groups[0]["hooks"][0]["timeout"] for event, groups in config["hooks"].items()} == timeouts
    words = shlex.split(config["hooks"]["SessionStart"][0]["hooks"][0]["command"])
    assert Path(words[0]).is_absolute()
    assert words[words.index("hook") :] == [
        "hook", "--client", client, "--url", "https://kf.example/mcp", "--key-file", str(key_file)
    ]  # fmt: skip


def test_install_creates_the_file_when_there_is_none(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, refs_server: RefsServer
) -> None:
    target = tmp_path / ".claude" / "settings.json"
    code, out, _ = run(
        capsys, "hook", "install", "claude-code", "--file", str(target), "--url", refs_server.mcp_url
    )
    assert code == 0 and f"Installed the Kenfold hooks in {target}." in out and "Next:" in out
    settings = json.loads(target.read_text())
    assert set(settings["hooks"]) == set(CLAUDE_TIMEOUTS)
    assert list(tmp_path.glob(".claude/*.bak")) == []


def test_install_keeps_every_other_entry_writes_a_backup_and_is_idempotent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, start_refs_server: Callable[[], RefsServer]
) -> None:
    first, second = start_refs_server().mcp_url, start_refs_server().mcp_url
    target = tmp_path / "settings.json"
    original = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [THEIRS]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}],
        },
    }
    target.write_text(json.dumps(original))
    code, out, _ = run(capsys, "hook", "install", "claude-code", "--file", str(target), "--url", first)
    assert code == 0
    [backup] = tmp_path.glob("settings.json.*.bak")
    assert json.loads(backup.read_text()) == original and str(backup) in out
    settings = json.loads(target.read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    stop = handlers(settings, "Stop")
    assert stop[0] == THEIRS and f"hook --client claude-code --url {first}" in stop[1]["command"]

    # The same install again changes nothing and writes no second backup.
    before = target.read_text()
    code, out, _ = run(capsys, "hook", "install", "claude-code", "--file", str(target), "--url", first)
    assert code == 0 and "already up to date" in out
    assert target.read_text() == before and len(list(tmp_path.glob("*.bak"))) == 1

    # Another address replaces our entries instead of adding a second set.
    run(capsys, "hook", "install", "claude-code", "--file", str(target), "--url", second)
    settings = json.loads(target.read_text())
    for event in CLAUDE_TIMEOUTS:
        ours = [handler for handler in handlers(settings, event) if handler != THEIRS]
        assert len(ours) == 1 and f"--url {second}" in ours[0]["command"], event
    assert handlers(settings, "Stop")[0] == THEIRS


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "{path} is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)); nothing was changed. Fix the file, or print the entries with "
            "`kenfold hook config claude-code` and add them by hand",
        ),
        ("[1, 2]", "{path} does not hold a JSON object; nothing was changed. Fix the file first"),
        ('{"hooks": []}', '{path}: "hooks" is not an object; fix it by hand, then run the install again'),
        (
            '{"hooks": {"Stop": {}}}',
            '{path}: "hooks.Stop" is not a list; fix it by hand, then run the install again',
        ),
    ],
)
def test_install_refuses_a_file_it_cannot_merge_into_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, refs_server: RefsServer, text: str, message: str
) -> None:
    target = tmp_path / "settings.json"
    target.write_text(text)
    code, out, err = run(
        capsys, "hook", "install", "claude-code", "--file", str(target), "--url", refs_server.mcp_url
    )
    assert (code, out, err) == (1, "", f"kenfold: error: {message.format(path=target)}\n")
    assert target.read_text() == text
    assert list(tmp_path.glob("*.bak")) == []


def test_install_refuses_a_key_file_that_does_not_exist_and_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, refs_server: RefsServer
) -> None:
    target = tmp_path / ".claude" / "settings.json"
    missing = tmp_path / "claude-code.key"
    code, out, err = run(
        capsys, "hook", "install", "claude-code", "--file", str(target), "--url", refs_server.mcp_url,
        "--key-file", str(missing),
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert err == (
        f"kenfold: error: there is no key file at {missing}; nothing was installed. Save the agent's key "
        f"there: mkdir -p {tmp_path} && (umask 077 && printf '%s\\n' 'kf_…' > {missing}), with a key from "
        "the dashboard's Clients page or `manage.py key create claude-code`; or pass --key-file\n"
    )
    assert not target.parent.exists()


def test_install_refuses_a_url_where_nothing_answers_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "settings.json"
    target.write_text('{"model": "opus"}')
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    code, out, err = run(capsys, "hook", "install", "claude-code", "--file", str(target), "--url", url)
    assert (code, out) == (1, "")
    assert err == (
        f"kenfold: error: cannot reach Kenfold at http://127.0.0.1:{port}/healthz: [Errno 111] Connection "
        "refused; nothing was installed. Start the server (`make run` where Kenfold is installed), or pass "
        "its address with --url (it ends in /mcp, for example http://127.0.0.1:7077/mcp)\n"
    )
    assert target.read_text() == '{"model": "opus"}' and list(tmp_path.glob("*.bak")) == []


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (
            401,
            "the server refused the key in {key_file} (Kenfold refused GET /api/v1/whoami (401): invalid "
            "API key); nothing was installed. Ask the owner for a new key (dashboard, Clients page) and save "
            "it in the key file",
        ),
        (
            404,
            "Kenfold refused GET /api/v1/whoami (404): invalid API key; nothing was installed. Update the "
            "Kenfold server, then run this again",
        ),
    ],
)
def test_install_refuses_a_server_that_rejects_the_key_or_cannot_check_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, refs_server: RefsServer, status: int, message: str
) -> None:
    refs_server.failure = (status, {"error": "invalid API key"})
    key_file = tmp_path / "key"
    key_file.write_text("kf_wrong\n")
    target = tmp_path / "settings.json"
    code, out, err = run(
        capsys, "hook", "install", "codex", "--file", str(target), "--url", refs_server.mcp_url,
        "--key-file", str(key_file),
    )  # fmt: skip
    assert (code, out, err) == (1, "", f"kenfold: error: {message.format(key_file=key_file)}\n")
    assert not target.exists()
    [health, whoami] = refs_server.received
    assert (health.path, whoami.path) == ("/healthz", "/api/v1/whoami")
    assert whoami.headers["authorization"] == "Bearer kf_wrong"


def test_install_for_codex_writes_its_hooks_file_under_codex_home(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    refs_server: RefsServer,
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("KENFOLD_URL", refs_server.mcp_url)  # the hooks' default address, checked too
    code, out, _ = run(capsys, "hook", "install", "codex")
    target = tmp_path / "codex" / "hooks.json"
    assert code == 0 and str(target) in out and "Codex" in out
    settings = json.loads(target.read_text())
    assert {event: groups[0]["hooks"][0]["timeout"] for event, groups in settings["hooks"].items()} == (
        CODEX_TIMEOUTS
    )


@pytest.mark.parametrize(
    "command", [["hook"], ["hook", "config"], ["hook", "install"], ["hook", "uninstall"]]
)
def test_every_hook_command_explains_itself(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "usage: kenfold hook" in out and ("claude-code" in out or "install" in out)


def test_uninstall_gives_back_the_users_own_files(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    refs_server: RefsServer,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    claude = tmp_path / ".claude" / "settings.json"
    codex = tmp_path / "codex" / "hooks.json"
    theirs = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [THEIRS]}],
            "SessionStart": [{"matcher": "startup", "hooks": [THEIRS]}],
            "PreToolUse": [],
        },
        "permissions": {"allow": ["Bash(git status)"]},
    }
    claude.parent.mkdir()
    claude.write_text(json.dumps(theirs))
    for client in ("claude-code", "codex"):
        code, _, err = run(capsys, "hook", "install", client, "--url", refs_server.mcp_url)
        assert code == 0, err
    assert len(handlers(json.loads(claude.read_text()), "Stop")) == 2

    # Only the named client's file.
    code, out, _ = run(capsys, "hook", "uninstall", "claude-code")
    [backup, _] = sorted(claude.parent.glob("settings.json.*.bak"), reverse=True)
    assert (code, out) == (
        0,
        f"Removed the Kenfold hooks from {claude} (the previous file is saved as {backup}); every other "
        "setting is kept.\n",
    )
    assert json.loads(claude.read_text()) == theirs and list(json.loads(claude.read_text())) == list(theirs)
    assert "kenfold" in codex.read_text()

    # Without a client: every client's file; one without our hooks is left alone.
    code, out, _ = run(capsys, "hook", "uninstall")
    assert (
        code == 0 and out.splitlines()[0] == f"There are no Kenfold hooks in {claude}; nothing was changed."
    )
    assert out.splitlines()[1].startswith(f"Removed the Kenfold hooks from {codex} (the previous file")
    assert json.loads(codex.read_text()) == {}, "a file the install created is left empty, not deleted"
    code, out, _ = run(capsys, "hook", "uninstall", "codex", "--file", str(tmp_path / "none.json"))
    assert (code, out) == (0, f"There is no {tmp_path / 'none.json'}; no Kenfold hooks to remove.\n")


def test_uninstall_keeps_the_users_handlers_in_a_group_kenfold_shares(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "settings.json"
    ours = {"type": "command", "command": "/opt/bin/kenfold hook --client claude-code", "timeout": 5}
    target.write_text(
        json.dumps({"hooks": {"Stop": [{"hooks": [THEIRS, ours]}], "SessionEnd": [{"hooks": [ours]}]}})
    )
    code, out, _ = run(capsys, "hook", "uninstall", "claude-code", "--file", str(target))
    assert code == 0 and out.startswith(f"Removed the Kenfold hooks from {target}")
    assert json.loads(target.read_text()) == {"hooks": {"Stop": [{"hooks": [THEIRS]}]}}


@pytest.mark.parametrize(
    ("command", "error"),
    [
        (["hook", "uninstal"], "kenfold hook: error: argument COMMAND: invalid choice: 'uninstal'"),
        (
            ["hook", "--url", "http://127.0.0.1:9/mcp", "remove", "codex"],
            "kenfold hook: error: argument COMMAND: invalid choice: 'remove'",
        ),
        (["hok"], "kenfold: error: argument COMMAND: invalid choice: 'hok'"),
    ],
)
def test_an_unknown_command_is_a_usage_error_not_a_hook_run(
    capsys: pytest.CaptureFixture[str], command: list[str], error: str
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(command)
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert err.startswith("usage: kenfold") and error in err


def test_a_hook_run_with_a_bad_option_still_exits_0_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    # An agent reads exit 2 as "block the prompt": a broken hook command must not block the user.
    code, out, _ = run(capsys, "hook", "--send-timeout", "soon")
    assert code == 0
    assert json.loads(out) == {"systemMessage": "Kenfold hook is misconfigured: see `kenfold hook --help`"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "{not json",
            "{path} is not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 "
            "(char 1)); nothing was changed. Fix the file, or remove the entries that run `kenfold hook` by "
            "hand",
        ),
        ('{"hooks": []}', '{path}: "hooks" is not an object; fix it by hand, then run the uninstall again'),
    ],
)
def test_uninstall_refuses_a_file_it_cannot_read_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, message: str
) -> None:
    target = tmp_path / "settings.json"
    target.write_text(text)
    code, out, err = run(capsys, "hook", "uninstall", "--file", str(target))
    assert (code, out, err) == (1, "", f"kenfold: error: {message.format(path=target)}\n")
    assert target.read_text() == text and list(tmp_path.glob("*.bak")) == []
