"""The hook's files on the agent's machine: session logs and the spool of unsent summaries (spec §1.10).

Everything is written redacted, in folders of mode 0700 and files of mode 0600, because a session log
holds what the user typed. The spool is bound to the destination that produced each summary (a hash of
the URL and identity), so a summary is never sent to another server or as another agent, and the API key
itself is never written.
"""

import hashlib
import json
import os
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenfold_common.env import env_str

STATE_DIR_VARIABLE = "KENFOLD_STATE_DIR"
SESSION_DAYS = 14
SPOOL_DAYS = 30
TEMP_FILE_SECONDS = 3600
_DAY = 86400


def state_dir() -> Path:
    """KENFOLD_STATE_DIR, else $XDG_STATE_HOME/kenfold, else ~/.local/state/kenfold."""
    configured = env_str(STATE_DIR_VARIABLE)
    if configured:
        return Path(configured).expanduser()
    xdg = env_str("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "kenfold"


def _private_dir(path: Path) -> Path:
    """``path`` and its parent (the state folder) created if needed, both readable by the user alone."""
    for folder in (path.parent, path):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)  # mkdir's mode is filtered by the umask, and the folder may predate us
    return path


@dataclass(frozen=True)
class Event:
    """One line of a session log: time, kind (start, prompt, response, compact), text, project, branch."""

    time: datetime
    kind: str
    text: str = ""
    project: str | None = None
    branch: str | None = None

    def as_json(self) -> dict[str, Any]:
        line: dict[str, Any] = {"t": self.time.isoformat(), "k": self.kind}
        for key, value in (("x", self.text), ("p", self.project), ("b", self.branch)):
            if value:
                line[key] = value
        return line

    @classmethod
    def from_json(cls, line: Any) -> "Event | None":
        if not isinstance(line, dict) or not isinstance(line.get("k"), str):
            return None
        try:
            moment = datetime.fromisoformat(line["t"])
        except (KeyError, TypeError, ValueError):
            return None
        fields = [line.get(key) for key in ("x", "p", "b")]
        if moment.tzinfo is None or any(value is not None and not isinstance(value, str) for value in fields):
            return None
        return cls(time=moment, kind=line["k"], text=fields[0] or "", project=fields[1], branch=fields[2])


class SessionLog:
    """The events of one session, in ``sessions/<hash of the session id>.jsonl``."""

    def __init__(self, *, root: Path, session_id: str) -> None:
        # The file name never shows the session id (an agent may put anything in it).
        name = hashlib.sha256(session_id.encode()).digest()[:12].hex()
        self.path = root / "sessions" / f"{name}.jsonl"

    def append(self, event: Event) -> None:
        _private_dir(self.path.parent)
        line = (json.dumps(event.as_json(), ensure_ascii=False) + "\n").encode()
        # One O_APPEND write: two hooks of the same session appending at once cannot interleave lines.
        descriptor = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(descriptor, line)
        finally:
            os.close(descriptor)

    def events(self) -> list[Event]:
        """Every readable event; corrupt lines (a write cut short by a killed hook) are skipped."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        events = []
        for line in raw.splitlines():
            try:
                event = Event.from_json(json.loads(line))
            except ValueError:
                continue
            if event is not None:
                events.append(event)
        return events


def destination_id(*, url: str, api_key: str | None, client_name: str) -> str:
    """What a spooled summary is bound to: the endpoint and identity, hashed so the key is not stored."""
    mode, identity = ("bearer", api_key) if api_key else ("client", client_name)
    return hashlib.sha256(json.dumps([url, mode, identity, client_name]).encode()).hexdigest()


@dataclass(frozen=True)
class Spooled:
    """A summary waiting to be sent, and its file."""

    path: Path
    project: str
    content: str
    type: str
    session_id: str
    destination: str | None


class Spool:
    """Summaries not yet delivered, oldest first, in ``spool/<unix-nanos>-<8 hex>.json``."""

    def __init__(self, *, root: Path) -> None:
        self.folder = root / "spool"

    def add(self, *, project: str, content: str, session_id: str, destination: str) -> Path:
        """Write the summary atomically (temporary file, then rename) and return its file."""
        _private_dir(self.folder)
        name = f"{time.time_ns()}-{secrets.token_hex(4)}"
        record = {
            "project": project,
            "content": content,
            "type": "episodic",
            "session_id": session_id,
            "created_at": datetime.now(UTC).isoformat(),
            "destination": destination,
        }
        temporary = self.folder / f".{name}.tmp"
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            json.dump(record, handle, ensure_ascii=False)
            handle.flush()
            os.fsync(handle.fileno())
        final = self.folder / f"{name}.json"
        temporary.rename(final)
        return final

    def pending(self) -> tuple[list[Spooled], list[str]]:
        """The readable summaries, oldest first, and warnings; unreadable files are dropped."""
        if not self.folder.is_dir():
            return [], []
        entries, warnings = [], []
        for path in sorted(self.folder.glob("*.json")):
            try:
                record = json.loads(path.read_text())
                entries.append(
                    Spooled(
                        path=path,
                        project=_text(record, "project"),
                        content=_text(record, "content"),
                        type=_text(record, "type"),
                        session_id=_text(record, "session_id"),
                        destination=record.get("destination") if isinstance(record, dict) else None,
                    )
                )
            except (OSError, ValueError, TypeError):
                path.unlink(missing_ok=True)
                warnings.append(f"dropped the unreadable spooled summary {path.name}")
        return entries, warnings


def _text(record: Any, key: str) -> str:
    value = record[key]
    if not isinstance(value, str):
        raise TypeError(key)
    return value


def clean_up(*, root: Path, now: float | None = None) -> None:
    """Delete session logs after 14 days, spooled summaries after 30 and abandoned temporary files after
    an hour: the state folder must not grow without bound on a machine that runs many sessions."""
    now = time.time() if now is None else now
    rules = [
        (root / "sessions", "*.jsonl", SESSION_DAYS * _DAY),
        (root / "spool", "*.json", SPOOL_DAYS * _DAY),
        (root / "spool", ".*.tmp", TEMP_FILE_SECONDS),
    ]
    for folder, pattern, age in rules:
        for path in folder.glob(pattern) if folder.is_dir() else ():
            try:
                if now - path.stat().st_mtime > age:
                    path.unlink()
            except OSError:
                continue  # another hook of the same user removed it first
