"""`kenfold hook config|install`: the hooks entries of Claude Code and Codex, printed or merged (spec §1.10).

Both clients read the same shape (event -> groups -> command handlers with a timeout in seconds); they
differ in the file and the events: Codex has no PostCompact and allows SessionEnd 3 s. Installing merges
into the user's own settings, so it keeps every entry it did not write, replaces the ones it wrote before
(a second install changes nothing), saves a backup before writing and refuses a file it cannot read as
JSON rather than overwrite what the user wrote by hand.
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
            f"{path} is not valid JSON ({error}); nothing was changed. Fix the file, or print the entries "
            f"with `kenfold hook config {client}` and add them by hand"
        ) from None
    if not isinstance(settings, dict):
        raise ClientError(f"{path} does not hold a JSON object; nothing was changed. Fix the file first")
    merged = merge_hooks(settings, config, where=path)
    next_step = _next_step(client)
    if merged == settings:
        return f"The Kenfold hooks in {path} are already up to date. {next_step}"
    backup_note = replace_file(
        path, original=original, text=json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
    )
    return f"Installed the Kenfold hooks in {path}{backup_note}. {next_step}"


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
