"""Log lines on stderr: JSON for the long-running processes (one object per line, easy to grep and to
ship), plain text for a command a person runs in a terminal."""

import json
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

# The manage.py commands that run as services: their stderr is the server's log, JSON even on a terminal.
SERVICE_COMMANDS = frozenset({"serve", "qcluster", "mcp", "runserver"})

# Attributes every LogRecord has; anything else was passed through `extra=` and belongs in the line.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                line[key] = value
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str, ensure_ascii=False)


class PlainFormatter(logging.Formatter):
    """``warning: message (key=value, ...)``: a log line for a person at a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        fields = [f"{key}={value}" for key, value in vars(record).items() if key not in _STANDARD]
        fields = [field for field in fields if not field.startswith("_")]
        line = f"{record.levelname.lower()}: {record.getMessage()}"
        if fields:
            line += f" ({', '.join(fields)})"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def logs_for_a_person(*, argv: Sequence[str] = sys.argv, stderr: TextIO = sys.stderr) -> bool:
    """Whether this process is a manage.py command other than a service, writing to a terminal: then
    its log lines are plain text and security events stay out of them (the person who ran the command
    is the actor, and its own output says what it did). A service, or any output to a file or a pipe,
    keeps the JSON lines a log collector reads."""
    if len(argv) < 2 or Path(argv[0]).name != "manage.py" or argv[1] in SERVICE_COMMANDS:
        return False
    try:
        return stderr.isatty()
    except (AttributeError, ValueError):
        return False
