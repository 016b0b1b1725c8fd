"""The extractive session summary that SessionEnd stores as an `episodic` memory (spec §1.10).

Extractive, not generated: the user's requests, the final response and the compaction summary, cut to
fixed lengths. No model runs on the agent's machine, and a summary made only of what was said cannot
invent anything.
"""

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from kenfold_client.hook_state import Event
from kenfold_common.secrets import redact_secrets

MAX_SUMMARY = 4000
MAX_PROMPT = 200
MAX_RESPONSE = 1200
MAX_COMPACTION = 1500
# Beyond this many requests the summary keeps the first few and the last few: how a session started and
# where it ended say more than its middle.
MAX_LISTED = 8
KEEP_FIRST = 3
KEEP_LAST = 5
_WHITESPACE = re.compile(r"\s+")


def cut(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters, the last one an ellipsis when something was cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def one_line(text: str) -> str:
    return _WHITESPACE.sub(" ", text).strip()


def _request(prompt: str) -> str:
    first = next((line for line in prompt.splitlines() if line.strip()), "")
    return cut(one_line(first), MAX_PROMPT)


def _time_range(start: datetime, end: datetime) -> str:
    start, end = start.astimezone(UTC), end.astimezone(UTC)
    if start.date() == end.date():
        return f"{start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC"
    return f"{start:%Y-%m-%d %H:%M} – {end:%Y-%m-%d %H:%M} UTC"


def build_summary(*, events: Sequence[Event], now: datetime) -> str | None:
    """The summary of a session's events, or None when the user asked nothing."""
    requests: list[str] = []
    for event in events:
        if event.kind == "prompt" and (request := _request(event.text)) and request not in requests[-1:]:
            requests.append(request)
    if not requests:
        return None
    branch = next((event.branch for event in events if event.kind == "start" and event.branch), None)
    on_branch = f" on branch {branch}" if branch and branch != "HEAD" else ""
    count = f"{len(requests)} request{'s' if len(requests) != 1 else ''}"
    started = min(event.time for event in events)
    lines = [f"Session summary: {count}{on_branch}, {_time_range(started, now)}.", "Requests:"]
    if len(requests) > MAX_LISTED:
        hidden = len(requests) - KEEP_FIRST - KEEP_LAST
        listed = [*requests[:KEEP_FIRST], f"… {hidden} more", *requests[-KEEP_LAST:]]
    else:
        listed = requests
    lines += [f"- {request}" for request in listed]
    responses = [event.text for event in events if event.kind == "response" and event.text.strip()]
    if responses:
        lines += ["Final response:", cut(one_line(responses[-1]), MAX_RESPONSE)]
    compactions = [event.text for event in events if event.kind == "compact" and event.text.strip()]
    if compactions:
        lines += ["Summary at compaction:", cut(one_line(compactions[-1]), MAX_COMPACTION)]
    # Redacted before and after the cut: cutting can turn a redaction marker back into part of a secret's
    # shape, and a secret split by the cut must not survive as a recognisable prefix.
    return redact_secrets(cut(redact_secrets("\n".join(lines)), MAX_SUMMARY))
