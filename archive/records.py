"""The archive format (spec §1.18): one JSON value per line, a header, then records, then an end record.

```
{"format": "kenfold-archive/1", "exported_at": "...", "kenfold_version": "0.1.0"}
{"memory": {"id": "...", "type": "project", "scope": "project:github.com/o/r", "content": "...", ...}}
{"edge": {"src": "...", "relation": "replaces", "dst": "...", "weight": 1.0, ...}}
{"ref": {"memory_id": "...", "path": "internal/auth.go", "symbol": "", "state": "current", ...}}
{"end": {"memories": 1, "edges": 1, "refs": 1}}
```

Each record is decoded strictly (unknown fields, wrong types, NaN and out-of-range values refused) before
anything is written, and every string in it, keys included, passes the secret filter: an archive is data
from elsewhere, and shared memory must never take a credential from it.
"""

import json
import math
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from coderefs.models import RefState
from kenfold import clock
from kenfold_common.errors import InvalidInput, SecretDetected
from kenfold_common.identity import (
    PROJECT_SCOPE_PREFIX,
    REPO_SCOPE_PREFIX,
    UNKNOWN_AGENT,
    USER_SCOPE,
    is_reserved_agent_name,
    is_valid_agent_name,
    normalize_project,
)
from kenfold_common.secrets import NestedFinding, find_nested_secrets, find_secrets
from memories.capture.extraction import EXTRACTOR_AGENT
from memories.models import CodeState, MemoryType, Status, Trust
from memories.services.remember import MAX_CONTENT_CHARS

FORMAT = "kenfold-archive/1"
MAX_LINE_BYTES = 1024 * 1024
RECORD_KINDS = ("memory", "edge", "ref", "end")

# The memory columns an archive carries: all but the vectors (and the columns PostgreSQL generates).
MEMORY_FIELDS = (
    "id",
    "type",
    "scope",
    "content",
    "attrs",
    "source_agent",
    "source_session",
    "evidence_uri",
    "trust",
    "confidence",
    "status",
    "supersedes",
    "valid_from",
    "valid_to",
    "expires_at",
    "created_at",
    "updated_at",
    "code_state",
    "active_from",
    "ended_at",
)
EDGE_FIELDS = ("src", "relation", "dst", "weight", "source_agent", "created_at")
REF_FIELDS = (
    "memory_id",
    "scope",
    "path",
    "symbol",
    "state",
    "resolved_path",
    "anchor_hash",
    "anchor_commit",
    "checked_commit",
    "checked_at",
    "created_at",
)

_STRICT = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False, frozen=True, use_enum_values=True)
NonEmpty = Annotated[str, Field(min_length=1)]


# The reserved names (`kenfold-*`, `unknown`) under which Kenfold itself stores memories: the extractor,
# the consolidator and an unnamed stdio client. Any other reserved name on a memory (`kenfold-dashboard`,
# which only approves, rejects and forgets) was written by hand, to pass a memory off as Kenfold's own.
# (The consolidator's name is spelled here because archive may not import consolidation; a test holds
# the two equal.)
MEMORY_WRITERS_RESERVED = frozenset({EXTRACTOR_AGENT, "kenfold-consolidator", UNKNOWN_AGENT})
# How far ahead of this server's clock a stored time may be: another machine's clock drifts, but Kenfold
# stamps the moment it stored a record, so a time beyond this (2999) was edited in.
CLOCK_SKEW = timedelta(hours=1)


def _check_agent(name: str) -> None:
    if not is_valid_agent_name(name):
        raise ValueError(
            "source_agent must be an agent name: lowercase letters, digits, '.', '_' or '-', at most 64"
        )


def _check_not_future(**stamps: datetime | None) -> None:
    latest = clock.now() + CLOCK_SKEW
    for name, stamp in stamps.items():
        if stamp is not None and stamp > latest:
            raise ValueError(
                f"{name} is in the future (more than an hour after this server's clock); Kenfold stamps "
                "the time it stored a record, so fix the time in the archive or the clock of this server"
            )


def _check_memory_scope(scope: str) -> None:
    if scope == USER_SCOPE:
        return
    for prefix in (PROJECT_SCOPE_PREFIX, REPO_SCOPE_PREFIX):
        if scope.startswith(prefix):
            rest = scope.removeprefix(prefix)
            try:
                normalized = normalize_project(rest)
            except SecretDetected:
                raise ValueError(
                    "scope appears to contain a credential; remove it from the archive"
                ) from None
            except InvalidInput:
                normalized = None
            if normalized != rest:
                raise ValueError(f"scope must be {prefix}<normalized identity> (as Kenfold writes it)")
            return
    raise ValueError("scope must be 'user', 'project:<identity>' or 'repo:<identity>'")


class MemoryRecord(BaseModel):
    model_config = _STRICT

    id: uuid.UUID
    type: MemoryType
    scope: str
    content: NonEmpty
    attrs: dict[str, Any] = Field(default_factory=dict)
    source_agent: str
    source_session: str | None = None
    evidence_uri: str | None = None
    trust: Trust = Trust.AGENT
    confidence: float = Field(default=0.5, ge=0, le=1)
    status: Status = Status.ACTIVE
    supersedes: uuid.UUID | None = None
    valid_from: AwareDatetime | None = None
    valid_to: AwareDatetime | None = None
    expires_at: AwareDatetime | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    code_state: CodeState | None = None
    # When it was served (what `as_of` reads); absent from archives made before they were kept.
    active_from: AwareDatetime | None = None
    ended_at: AwareDatetime | None = None

    @model_validator(mode="after")
    def _rules(self) -> "MemoryRecord":
        _check_memory_scope(self.scope)
        _check_agent(self.source_agent)
        if is_reserved_agent_name(self.source_agent) and self.source_agent not in MEMORY_WRITERS_RESERVED:
            raise ValueError(
                "source_agent is a name reserved for Kenfold itself, which never stores memories under it; "
                "give the agent that wrote the memory"
            )
        if not self.content.strip():
            raise ValueError("content must not be blank")
        if len(self.content) > MAX_CONTENT_CHARS:
            raise ValueError(
                f"content is {len(self.content)} characters; the limit is {MAX_CONTENT_CHARS} (as remember "
                "allows): split the memory into self-contained facts"
            )
        _check_not_future(created_at=self.created_at, updated_at=self.updated_at)
        if self.supersedes == self.id:
            raise ValueError("supersedes must name another memory, not the memory itself")
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError("valid_to must not be before valid_from")
        if self.type == MemoryType.TEMPORARY and self.expires_at is None:
            raise ValueError("a temporary memory needs expires_at")
        return self


class EdgeRecord(BaseModel):
    model_config = _STRICT

    src: uuid.UUID
    relation: NonEmpty
    dst: uuid.UUID
    weight: float = 1.0
    source_agent: str
    created_at: AwareDatetime

    @model_validator(mode="after")
    def _rules(self) -> "EdgeRecord":
        _check_agent(self.source_agent)
        _check_not_future(created_at=self.created_at)
        if self.src == self.dst:
            raise ValueError("an edge must link two different memories (src equals dst)")
        return self


class RefRecord(BaseModel):
    model_config = _STRICT

    memory_id: uuid.UUID
    scope: str
    path: str = ""
    symbol: str = ""
    state: RefState = RefState.PENDING
    resolved_path: str | None = None
    anchor_hash: str | None = None
    anchor_commit: str | None = None
    checked_commit: str | None = None
    checked_at: AwareDatetime | None = None
    created_at: AwareDatetime

    @model_validator(mode="after")
    def _rules(self) -> "RefRecord":
        if not self.scope.startswith((PROJECT_SCOPE_PREFIX, REPO_SCOPE_PREFIX)):
            raise ValueError("a code reference's scope must be 'project:<identity>' or 'repo:<identity>'")
        if not self.path and not self.symbol:
            raise ValueError("a code reference needs a path or a symbol")
        if (self.anchor_hash is None) != (self.anchor_commit is None):
            raise ValueError("anchor_hash and anchor_commit go together: give both or neither")
        _check_not_future(created_at=self.created_at, checked_at=self.checked_at)
        return self


class EndRecord(BaseModel):
    model_config = _STRICT

    memories: int = Field(ge=0)
    edges: int = Field(ge=0)
    refs: int = Field(ge=0)


class Header(BaseModel):
    model_config = _STRICT

    format: str
    exported_at: AwareDatetime
    kenfold_version: str


class _Line(BaseModel):
    model_config = _STRICT

    memory: MemoryRecord | None = None
    edge: EdgeRecord | None = None
    ref: RefRecord | None = None
    end: EndRecord | None = None


Record = MemoryRecord | EdgeRecord | RefRecord | EndRecord


class ArchiveError(InvalidInput):
    """The archive is refused as a whole; nothing was written."""


def refused(line_number: int, problem: str) -> ArchiveError:
    return ArchiveError(
        f"line {line_number}: {problem}. Nothing was imported; fix the archive (or export it again) "
        "and import it again"
    )


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _json_value(text: str | bytes, line_number: int) -> Any:
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise refused(line_number, "is not UTF-8 text") from None
    except ValueError as exc:
        # The decoder's message names the position only (never the text there).
        reason = exc.args[0].split(":")[0] if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise refused(line_number, f"is not one JSON value ({reason})") from None


def _location(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "record"


def _describe(error: dict[str, Any]) -> str:
    """A pydantic error without its input: never the value, which may be anything the file held."""
    loc = error.get("loc", ())
    if error["type"] == "extra_forbidden":
        if find_secrets(_location(loc)):
            return "a field name holds a credential; remove it from the archive"
        if len(loc) == 1:
            return f'unknown record kind "{str(loc[0])[:40]}" (expected one of {", ".join(RECORD_KINDS)})'
        return f'unknown field "{_location(loc)}" (this Kenfold does not know it; remove it)'
    if error["type"] == "missing":
        return f'missing field "{_location(loc)}"'
    message = error["msg"].removeprefix("Value error, ")
    if error["type"].endswith("_parsing"):
        # "Input should be a valid UUID, invalid character: ... found `x` at 1" quotes the input.
        message = message.split(",")[0]
    return f"{_location(loc)}: {message}" if loc else message


# The fields that hold free text. The others are decoded as UUIDs, timestamps, numbers or one of a few
# words before the scan, so they cannot carry a credential; scanning only these keeps the secret filter
# (about 0.2 ms of CPU per memory) the main cost of an import rather than five times it.
_TEXT_FIELDS = {
    MemoryRecord: ("scope", "content", "attrs", "source_agent", "source_session", "evidence_uri"),
    EdgeRecord: ("relation", "source_agent"),
    RefRecord: ("scope", "path", "symbol", "resolved_path", "anchor_hash", "anchor_commit", "checked_commit"),
}


def _strings(value: Any) -> Any:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _scan_strings(kind: str, record: "Record", line_number: int) -> None:
    """Refuse the archive on a credential or a NUL in any text of the record (attrs keys included)."""
    texts = {name: getattr(record, name) for name in _TEXT_FIELDS.get(type(record), ())}
    # A memory's content is free text, scanned as remember scans it; the other fields are named values.
    content = texts.pop("content", None)
    findings = [
        NestedFinding(path=f"{kind}.content", rule=finding.rule, label=finding.label)
        for finding in (find_secrets(content) if isinstance(content, str) else [])
    ]
    findings += find_nested_secrets(texts, path=kind)
    if findings:
        labels = ", ".join(dict.fromkeys(f.label for f in findings))
        raise refused(
            line_number,
            f"{findings[0].path} appears to contain a {labels}. Credentials must never be stored in shared "
            "memory: remove the value from the archive (or run `manage.py scan --redact` on the Kenfold it "
            "came from and export again)",
        )
    if any("\x00" in text for text in _strings(texts)):
        raise refused(line_number, "a string holds a NUL character (\\u0000), which PostgreSQL cannot store")


def parse_header(text: str | bytes) -> Header:
    value = _json_value(text, 1)
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise refused(
            1,
            f'is not a Kenfold archive header (expected {{"format": "{FORMAT}", ...}}); '
            "make the archive with `manage.py export`",
        )
    try:
        return Header.model_validate_json(text)
    except ValidationError as exc:
        raise refused(1, _describe(exc.errors()[0])) from None


def parse_record(text: str | bytes, line_number: int) -> Record:
    """One line after the header, decoded strictly and scanned for secrets; ArchiveError names the line."""
    try:
        line = _Line.model_validate_json(text)
    except ValidationError as exc:
        errors = exc.errors()
        if errors[0]["type"] == "json_invalid":
            # Decode again for the standard library's message, which names a position, never the text.
            _json_value(text, line_number)
        raise refused(line_number, _describe(errors[0])) from None
    kinds = [kind for kind in RECORD_KINDS if getattr(line, kind) is not None]
    if len(kinds) != 1:
        raise refused(line_number, f"must hold exactly one of {', '.join(RECORD_KINDS)}")
    record = getattr(line, kinds[0])
    _scan_strings(kinds[0], record, line_number)
    return record


# --- writing -----------------------------------------------------------------------------------------


def _plain(value: object) -> object:
    if isinstance(value, uuid.UUID):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()  # type: ignore[union-attr]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("a stored number is not finite")
    return value


def dump_line(kind: str, row: dict[str, object]) -> str:
    """One record line; a memory's attrs are left out when empty (§1.18)."""
    body = {key: _plain(value) for key, value in row.items() if not (key == "attrs" and not value)}
    return json.dumps({kind: body}, ensure_ascii=False, separators=(",", ":")) + "\n"


def dump_header(*, exported_at: object, version: str) -> str:
    header = {"format": FORMAT, "exported_at": _plain(exported_at), "kenfold_version": version}
    return json.dumps(header, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class Counts:
    memories: int
    edges: int
    refs: int

    def as_record(self) -> dict[str, object]:
        return {"memories": self.memories, "edges": self.edges, "refs": self.refs}
