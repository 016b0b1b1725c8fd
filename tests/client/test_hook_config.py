"""`kenfold hook config` and `kenfold hook install`: the entries agents need, merged into their own files."""

import json
import shlex
from pathlib import Path

import pytest

from kenfold_client.__main__ import main

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
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / ".claude" / "settings.json"
    code, out, _ = run(capsys, "hook", "install", "claude-code", "--file", str(target))
    assert code == 0 and f"Installed the Kenfold hooks in {target}." in out and "Next:" in out
    settings = json.loads(target.read_text())
    assert set(settings["hooks"]) == set(CLAUDE_TIMEOUTS)
    assert list(tmp_path.glob(".claude/*.bak")) == []


def test_install_keeps_every_other_entry_writes_a_backup_and_is_idempotent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "settings.json"
    original = {
        "model": "opus",
        "hooks": {
            "Stop": [{"hooks": [THEIRS]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [THEIRS]}],
        },
    }
    target.write_text(json.dumps(original))
    code, out, _ = run(
        capsys, "hook", "install", "claude-code", "--file", str(target), "--url", "http://a/mcp"
    )
    assert code == 0
    [backup] = tmp_path.glob("settings.json.*.bak")
    assert json.loads(backup.read_text()) == original and str(backup) in out
    settings = json.loads(target.read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"] == original["hooks"]["PreToolUse"]
    stop = handlers(settings, "Stop")
    assert stop[0] == THEIRS and "hook --client claude-code --url http://a/mcp" in stop[1]["command"]

    # The same install again changes nothing and writes no second backup.
    before = target.read_text()
    code, out, _ = run(
        capsys, "hook", "install", "claude-code", "--file", str(target), "--url", "http://a/mcp"
    )
    assert code == 0 and "already up to date" in out
    assert target.read_text() == before and len(list(tmp_path.glob("*.bak"))) == 1

    # Another address replaces our entries instead of adding a second set.
    run(capsys, "hook", "install", "claude-code", "--file", str(target), "--url", "http://b/mcp")
    settings = json.loads(target.read_text())
    for event in CLAUDE_TIMEOUTS:
        ours = [handler for handler in handlers(settings, event) if handler != THEIRS]
        assert len(ours) == 1 and "--url http://b/mcp" in ours[0]["command"], event
    assert handlers(settings, "Stop")[0] == THEIRS


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}'])
def test_install_refuses_a_file_it_cannot_merge_into_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    target = tmp_path / "settings.json"
    target.write_text(text)
    code, _, err = run(capsys, "hook", "install", "claude-code", "--file", str(target))
    assert code == 1 and str(target) in err and ("Fix" in err or "fix" in err)
    assert target.read_text() == text
    assert list(tmp_path.glob("*.bak")) == []


def test_install_for_codex_writes_its_hooks_file_under_codex_home(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    code, out, _ = run(capsys, "hook", "install", "codex")
    target = tmp_path / "codex" / "hooks.json"
    assert code == 0 and str(target) in out and "Codex" in out
    settings = json.loads(target.read_text())
    assert {event: groups[0]["hooks"][0]["timeout"] for event, groups in settings["hooks"].items()} == (
        CODEX_TIMEOUTS
    )


@pytest.mark.parametrize("command", [["hook"], ["hook", "config"], ["hook", "install"]])
def test_every_hook_command_explains_itself(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "usage: kenfold hook" in out and ("claude-code" in out or "install" in out)
