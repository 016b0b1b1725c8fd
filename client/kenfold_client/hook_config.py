"""`kenfold hook config|install|uninstall`: the hooks entries of Claude Code and Codex, printed, merged or
removed (spec §1.10).

Both clients read the same shape (event -> groups -> command handlers with a timeout in seconds); they
differ in the file and the events: Codex has no PostCompact and allows SessionEnd 3 s. Installing merges
into the user's own settings, so it keeps every entry it did not write, replaces the ones it wrote before
(a second install changes nothing), saves a backup before writing and refuses a file it cannot read as
JSON rather than overwrite what the user wrote by hand (`kenfold hook install` first checks that the
hooks would work: kenfold_client.connect.require_working_hooks). Uninstalling removes only what an install
wrote, so install then uninstall gives back the user's own file.
"""

import json
import os
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenfold_client.errors import ClientError, UsageError

CLIENTS = ("claude-code", "codex")
TIMEOUTS = {
    "claude-code": {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "PostCompact": 5, "SessionEnd": 5},
    "codex": {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 5, "SessionEnd": 3},
}


def settings_file(client: str) -> Path:
    """The client's own user-wide hooks file."""
    if client == "codex":
        home = os.environ.get("CODEX_HOME", "").strip()
        return (Path(home) if home else Path.home() / ".codex") / "hooks.json"
    return Path.home() / ".claude" / "settings.json"


def kenfold_command() -> list[str]:
    """The command that runs this very client, by absolute path (the agent's PATH may not have it)."""
    program = Path(sys.argv[0])
    if program.name == "kenfold" and program.is_file():
        return [str(program.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "kenfold_client"]


def hook_command(*, client: str, url: str | None, key_file: Path | None) -> str:
    words = [*kenfold_command(), "hook", "--client", client]
    if url:
        words += ["--url", url]
    if key_file is not None:
        words += ["--key-file", str(key_file.expanduser().absolute())]
    return shlex.join(words)


def hooks_config(*, client: str, url: str | None, key_file: Path | None) -> dict[str, Any]:
    """The ``{"hooks": {...}}`` entries that run ``kenfold hook`` for each event the client has."""
    command = hook_command(client=client, url=url, key_file=key_file)
    return {
        "hooks": {
            event: [{"hooks": [{"type": "command", "command": command, "timeout": timeout}]}]
            for event, timeout in TIMEOUTS[client].items()
        }
    }


def is_kenfold_handler(handler: Any) -> bool:
    """Whether a handler runs ``kenfold hook`` (written by an earlier install, maybe with other options)."""
    if not isinstance(handler, dict) or not isinstance(handler.get("command"), str):
        return False
    try:
        words = shlex.split(handler["command"])
    except ValueError:
        return False
    if len(words) >= 2 and Path(words[0]).name == "kenfold" and words[1] == "hook":
        return True
    return words[1:4] == ["-m", "kenfold_client", "hook"]


def merge_hooks(settings: dict[str, Any], config: dict[str, Any], *, where: Path) -> dict[str, Any]:
    """``settings`` with our handlers replaced by those of ``config``; everything else kept in order."""
    merged = dict(settings)
    hooks = merged.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ClientError(f'{where}: "hooks" is not an object; fix it by hand, then run the install again')
    hooks = dict(hooks)
    for event, groups in config["hooks"].items():
        existing = hooks.get(event, [])
        if not isinstance(existing, list):
            raise ClientError(
                f'{where}: "hooks.{event}" is not a list; fix it by hand, then run the install again'
            )
        kept = []
        for group in existing:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                others = [handler for handler in group["hooks"] if not is_kenfold_handler(handler)]
                if not others and group["hooks"]:
                    continue  # a group that only ran kenfold: ours replaces it
                group = {**group, "hooks": others}
            kept.append(group)
        hooks[event] = [*kept, *groups]
    merged["hooks"] = hooks
    return merged


def install_hooks(*, client: str, config: dict[str, Any], path: Path) -> str:
    """Merge ``config`` into ``path`` and say what happened and what to do next."""
    original, settings = _read_settings(
        path, or_else=f", or print the entries with `kenfold hook config {client}` and add them by hand"
    )
    merged = merge_hooks(settings, config, where=path)
    next_step = _next_step(client)
    if merged == settings:
        return f"The Kenfold hooks in {path} are already up to date. {next_step}"
    backup_note = _write_json(path, original=original, settings=merged)
    return f"Installed the Kenfold hooks in {path}{backup_note}. {next_step}"


def remove_hooks(settings: dict[str, Any], *, where: Path) -> dict[str, Any]:
    """``settings`` without any handler that runs ``kenfold hook``: a group, an event and the "hooks" object
    that held only ours go too, so an install followed by an uninstall gives back the user's own file."""
    hooks = settings.get("hooks")
    if hooks is None:
        return settings
    if not isinstance(hooks, dict):
        raise ClientError(f'{where}: "hooks" is not an object; fix it by hand, then run the uninstall again')
    kept_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept_hooks[event] = groups  # not ours to judge: we never write anything but lists
            continue
        kept = []
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                others = [handler for handler in group["hooks"] if not is_kenfold_handler(handler)]
                if not others and group["hooks"]:
                    continue
                group = {**group, "hooks": others}
            kept.append(group)
        if kept or not groups:
            kept_hooks[event] = kept
    merged = {key: value for key, value in settings.items() if key != "hooks"}
    if kept_hooks or not hooks:
        merged["hooks"] = kept_hooks
        # Keep the user's key order: "hooks" back where it was.
        merged = {key: merged[key] for key in settings if key in merged}
    return merged


def uninstall_hooks(*, path: Path) -> str:
    """Remove our handlers from ``path``, keeping everything else, and say what happened."""
    if not path.exists():
        return f"There is no {path}; no Kenfold hooks to remove."
    original, settings = _read_settings(
        path, or_else=", or remove the entries that run `kenfold hook` by hand"
    )
    cleaned = remove_hooks(settings, where=path)
    if cleaned == settings:
        return f"There are no Kenfold hooks in {path}; nothing was changed."
    backup_note = _write_json(path, original=original, settings=cleaned)
    return f"Removed the Kenfold hooks from {path}{backup_note}; every other setting is kept."


def _read_settings(path: Path, *, or_else: str) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when there is none) and its JSON object; ``or_else`` ends the advice when
    the file is not JSON."""
    try:
        original = path.read_text()
    except FileNotFoundError:
        original = None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None
    try:
        settings = json.loads(original) if original is not None and original.strip() else {}
    except ValueError as error:
        raise ClientError(
            f"{path} is not valid JSON ({error}); nothing was changed. Fix the file{or_else}"
        ) from None
    if not isinstance(settings, dict):
        raise ClientError(f"{path} does not hold a JSON object; nothing was changed. Fix the file first")
    return original, settings


def _write_json(path: Path, *, original: str | None, settings: dict[str, Any]) -> str:
    return replace_file(
        path, original=original, text=json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    )


def replace_file(path: Path, *, original: str | None, text: str) -> str:
    """Write ``text`` to the user's settings file ``path`` (whose content was ``original``, None when it did
    not exist), keeping a backup and the file's mode; returns a note naming the backup, or ""."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup_note = ""
    if original is not None:
        backup = path.with_name(f"{path.name}.{datetime.now(UTC):%Y%m%dT%H%M%S%fZ}.bak")
        backup.write_text(original)
        backup.chmod(path.stat().st_mode & 0o777)
        backup_note = f" (the previous file is saved as {backup})"
    # Written to a temporary file and renamed: an interrupted write leaves the old settings intact.
    temporary = path.with_name(f".{path.name}.kenfold.tmp")
    temporary.write_text(text)
    if original is not None:
        temporary.chmod(path.stat().st_mode & 0o777)
    temporary.replace(path)
    return backup_note


def _next_step(client: str) -> str:
    if client == "codex":
        return (
            "Next: start `codex` and approve Kenfold's hooks with /hooks: Codex runs no hook it has not "
            "trusted, and `codex exec` skips untrusted hooks without a word."
        )
    return "Next: start a new Claude Code session; its first prompt has the project's memory."
