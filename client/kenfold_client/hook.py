"""`kenfold hook`: the session hook of Claude Code and Codex (seeds/000 "Session hooks", spec §1.10).

SessionStart loads memory into the session (after sending summaries spooled by earlier sessions and
syncing code references); UserPromptSubmit, Stop and PostCompact append to a local log without touching
the network; SessionEnd turns the log into an extractive summary, spools it and sends it. A hook must never
break the agent's session: every failure becomes a one-line ``systemMessage`` and the exit code is 0.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kenfold_client import git
from kenfold_client.context import render_context
from kenfold_client.errors import ClientError, ServerError
from kenfold_client.hook_state import Event, SessionLog, Spool, clean_up, destination_id
from kenfold_client.http import HTTP_TIMEOUT_SECONDS, KenfoldApi
from kenfold_client.mcp import McpClient, ToolRejected
from kenfold_client.refs import Deadline, refs_sync
from kenfold_client.summary import build_summary, cut, one_line
from kenfold_client.usage import Served, served_in_answer, session_reuse
from kenfold_common.secrets import redact_secrets

MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_CAPTURE = 2000
MAX_MESSAGE = 200
CONTEXT_BUDGET_TOKENS = 1500
GIT_SECONDS = 2.0
FLUSH_SECONDS = 3.0
FLUSH_MAX_SENDS = 20
REFS_SECONDS = 2.0
CONTEXT_SECONDS = 4.0
# SessionEnd runs under the client's own time limit (Codex allows 3 s in all): the summary is spooled
# first, so a send that does not finish in time is delivered at the next SessionStart.
DEFAULT_SEND_SECONDS = 1.0
DEFAULT_CLIENT_NAME = "kenfold-hook"
# The server's limit for one report (memories.usage.MAX_USED).
MAX_REUSED = 50
# What each capturing event records, and from which field of the hook's input.
CAPTURES = {
    "UserPromptSubmit": ("prompt", "prompt"),
    "Stop": ("response", "last_assistant_message"),
    "PostCompact": ("compact", "compact_summary"),
}


@dataclass(frozen=True)
class HookSettings:
    """Where the hook sends, as whom, and what it may do."""

    mcp_url: str
    api_key: str | None
    client_name: str
    state_dir: Path
    capture: bool = True
    refs: bool = True
    send_timeout: float = DEFAULT_SEND_SECONDS

    @property
    def destination(self) -> str:
        return destination_id(url=self.mcp_url, api_key=self.api_key, client_name=self.client_name)

    def connect(self) -> McpClient:
        return McpClient(mcp_url=self.mcp_url, api_key=self.api_key, client_name=self.client_name)


@dataclass
class HookOutcome:
    """What the hook prints: the JSON for the agent (or nothing) and lines for stderr."""

    output: dict[str, Any] | None = None
    warnings: list[str] | None = None

    def warn(self, message: str) -> None:
        self.warnings = [*(self.warnings or []), message]


def message_line(prefix: str, error: object) -> str:
    """``prefix: error`` on one line of at most 200 characters, as a ``systemMessage`` shows it."""
    return cut(one_line(f"{prefix}: {error}"), MAX_MESSAGE)


def failure(prefix: str, error: object) -> HookOutcome:
    line = message_line(prefix, error)
    return HookOutcome(output={"systemMessage": line}, warnings=[line])


def parse_input(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_INPUT_BYTES:
        raise ClientError("the hook input is larger than 16 MiB")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise ClientError("the hook input is not JSON; run kenfold hook only from an agent's hooks") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("hook_event_name"), str):
        raise ClientError(
            "the hook input has no hook_event_name; run kenfold hook only from an agent's hooks"
        )
    return payload


def run_hook(*, raw: bytes, settings: HookSettings) -> HookOutcome:
    """Handle one hook call. Never raises: failures are in the outcome."""
    try:
        payload = parse_input(raw)
    except ClientError as error:
        return failure("Kenfold hook failed", error)
    event = payload["hook_event_name"]
    session_id = _field(payload, "session_id").strip() or None
    cwd = Path(_field(payload, "cwd") or ".")
    try:
        if event == "SessionStart":
            return session_start(settings=settings, session_id=session_id, cwd=cwd)
        if event in CAPTURES:
            kind, field = CAPTURES[event]
            return capture(
                settings=settings, session_id=session_id, cwd=cwd, kind=kind, text=_field(payload, field)
            )
        if event == "SessionEnd":
            transcript = _field(payload, "transcript_path")
            return session_end(
                settings=settings,
                session_id=session_id,
                cwd=cwd,
                transcript=Path(transcript) if transcript else None,
            )
    except (ClientError, OSError) as error:
        # OSError: the state folder cannot be written (a full disk, a folder owned by someone else).
        return failure(f"Kenfold {event} hook failed", error)
    return HookOutcome()  # an event this version does not know: nothing to do


def _field(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    return value if isinstance(value, str) else ""


def _checkout(cwd: Path) -> tuple[str | None, str | None]:
    """The project and branch of ``cwd``; (None, None) outside a repository."""
    repo = git.toplevel(cwd, timeout=GIT_SECONDS)
    if repo is None:
        return None, None
    return git.detect_project(repo, timeout=GIT_SECONDS), git.current_branch(repo, timeout=GIT_SECONDS)


def session_start(*, settings: HookSettings, session_id: str | None, cwd: Path) -> HookOutcome:
    outcome = HookOutcome()
    try:
        project, branch = _checkout(cwd)
    except ClientError as error:
        outcome.warn(message_line("Kenfold could not read the git checkout", error))
        project, branch = None, None
    if settings.capture and session_id and project:
        SessionLog(root=settings.state_dir, session_id=session_id).append(
            Event(time=datetime.now(UTC), kind="start", project=project, branch=branch)
        )
    clean_up(root=settings.state_dir)
    with settings.connect() as client:
        for warning in flush_spool(settings=settings, client=client):
            outcome.warn(warning)
        if settings.refs and project:
            _sync_refs(settings=settings, cwd=cwd, outcome=outcome)
        arguments: dict[str, Any] = {"budget_tokens": CONTEXT_BUDGET_TOKENS}
        if project:
            arguments["project"] = project
        try:
            context = client.call_tool(
                name="get_context", arguments=arguments, session_id=session_id, timeout=CONTEXT_SECONDS
            )
        except ClientError as error:
            line = message_line("Kenfold memory was not loaded", error)
            outcome.output = {"systemMessage": line}
            outcome.warn(line)
            return outcome
    if settings.capture and session_id and project:
        # Fingerprints of what was served, for SessionEnd to recognise reuse (kenfold_client.usage).
        served = [memory.as_json() for memory in served_in_answer(context)]
        SessionLog(root=settings.state_dir, session_id=session_id).append(
            Event(
                time=datetime.now(UTC),
                kind="served",
                text=json.dumps(served, ensure_ascii=False),
                project=project,
            )
        )
    text = render_context(output=context, project=project)
    if text:
        outcome.output = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}
    return outcome


def _sync_refs(*, settings: HookSettings, cwd: Path, outcome: HookOutcome) -> None:
    try:
        with KenfoldApi(mcp_url=settings.mcp_url, api_key=settings.api_key) as api:
            refs_sync(directory=cwd, api=api, budget_seconds=REFS_SECONDS)
    except ServerError as error:
        # An older server without the REST API (404/405) is nobody's fault; anything else is worth a line.
        if error.status_code not in (404, 405) and error.status_code < 500:
            outcome.warn(message_line("Kenfold could not sync code references", error))
    except ClientError:
        pass  # timeouts, an unreachable server, git trouble: the next session tries again


def flush_spool(*, settings: HookSettings, client: McpClient) -> list[str]:
    """Send summaries spooled for this destination, oldest first, within 3 s and at most 20 sends.

    Summaries for another destination (another server, key or client name) stay where they are and do
    not use up the budget; a transient failure stops the flush, since the next send would fail the same way.
    """
    entries, warnings = Spool(root=settings.state_dir).pending()
    deadline = Deadline(FLUSH_SECONDS)
    sends = 0
    for entry in entries:
        if entry.destination is None:
            warnings.append(
                f"kept the spooled summary {entry.path.name}: it records no destination (written by an "
                "older kenfold); delete it if it is not needed"
            )
            continue
        if entry.destination != settings.destination:
            continue
        if sends >= FLUSH_MAX_SENDS or deadline.expired():
            break
        sends += 1
        try:
            _send_summary(
                client=client,
                project=entry.project,
                content=entry.content,
                session_id=entry.session_id,
                timeout=deadline.cap(HTTP_TIMEOUT_SECONDS),
            )
        except ToolRejected as error:
            if error.transient:
                break
            entry.path.unlink(missing_ok=True)
            warnings.append(message_line("Kenfold refused a spooled session summary (dropped)", error))
            continue
        except ClientError:
            break
        entry.path.unlink(missing_ok=True)
    return warnings


def _send_summary(*, client: McpClient, project: str, content: str, session_id: str, timeout: float) -> None:
    client.call_tool(
        name="remember",
        arguments={"content": content, "type": "episodic", "project": project},
        session_id=session_id,
        timeout=timeout,
    )


def capture(
    *, settings: HookSettings, session_id: str | None, cwd: Path, kind: str, text: str
) -> HookOutcome:
    """Append a prompt, response or compaction summary to the session log; no network call.

    Sessions outside a repository are not recorded. A session belongs to the project of its first
    recorded event; a capture from another checkout (the agent changed directory) is skipped.
    """
    if not settings.capture or not session_id or not text.strip():
        return HookOutcome()
    project, _branch = _checkout(cwd)
    if project is None:
        return HookOutcome()
    log = SessionLog(root=settings.state_dir, session_id=session_id)
    bound = _bound_project(log.events())
    if bound is not None and bound != project:
        return HookOutcome(
            warnings=[f"kenfold: not recorded: this session belongs to {bound}, not to {project}"]
        )
    # Redacted before it reaches the disk, then cut: the log must never hold a credential.
    log.append(
        Event(time=datetime.now(UTC), kind=kind, text=cut(redact_secrets(text), MAX_CAPTURE), project=project)
    )
    return HookOutcome()


def _bound_project(events: list[Event]) -> str | None:
    return next((event.project for event in events if event.project), None)


def session_end(
    *, settings: HookSettings, session_id: str | None, cwd: Path, transcript: Path | None = None
) -> HookOutcome:
    """Summarize the session, spool the summary, then send it (with the session id in ``_meta``); then
    report which served memories the session reused."""
    if not settings.capture or not session_id:
        return HookOutcome()
    events = SessionLog(root=settings.state_dir, session_id=session_id).events()
    project = _bound_project(events)
    if project is None:
        return HookOutcome()
    outcome = _summarize(settings=settings, session_id=session_id, project=project, events=events)
    if not outcome.warnings:  # a server that refused or missed the summary would miss this too
        report_reuse(settings=settings, session_id=session_id, events=events, transcript=transcript)
    return outcome


def report_reuse(
    *, settings: HookSettings, session_id: str, events: list[Event], transcript: Path | None
) -> None:
    """Tell the server which served memories the session reused (kenfold_client.usage). Best effort:
    usage is a statistic, so a failure is neither spooled nor shown."""
    served = [memory for event in events if event.kind == "served" for memory in _served_records(event.text)]
    responses = [event.text for event in events if event.kind == "response" and event.text.strip()]
    reused = session_reuse(
        served=served, transcript=transcript, final_response=responses[-1] if responses else ""
    )
    if not reused:
        return
    try:
        with KenfoldApi(mcp_url=settings.mcp_url, api_key=settings.api_key) as api:
            api.usage_used(used=reused[:MAX_REUSED], session_id=session_id, timeout=settings.send_timeout)
    except ClientError:
        pass


def _served_records(text: str) -> list[Served]:
    try:
        records = json.loads(text)
    except ValueError:
        return []
    return (
        [memory for record in records if (memory := Served.from_json(record))]
        if isinstance(records, list)
        else []
    )


def _summarize(*, settings: HookSettings, session_id: str, project: str, events: list[Event]) -> HookOutcome:
    content = build_summary(
        events=[event for event in events if event.project == project], now=datetime.now(UTC)
    )
    if content is None:
        return HookOutcome()
    spool = Spool(root=settings.state_dir)
    spooled = spool.add(
        project=project, content=content, session_id=session_id, destination=settings.destination
    )
    try:
        with settings.connect() as client:
            _send_summary(
                client=client,
                project=project,
                content=content,
                session_id=session_id,
                timeout=settings.send_timeout,
            )
    except ToolRejected as error:
        if not error.transient:
            spooled.unlink(missing_ok=True)
            return failure("Kenfold refused the session summary", error)
        return failure("Kenfold session summary kept for the next session start", error)
    except ClientError as error:
        return failure("Kenfold session summary kept for the next session start", error)
    spooled.unlink(missing_ok=True)
    return HookOutcome()
