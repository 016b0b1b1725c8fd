"""The audit trail: who did what to which memory, with the credential that did it.

`audit_record` is the one way an event is written; each service that changes a memory calls it in the
same transaction as the change, so an event exists exactly when the change does. Events hold ids, the
acting agent and credential, and a small detail (a reason already cleaned of secrets, the id of the
memory that replaced this one): never a memory's content. They are kept as long as the memories are
(no retention limit: a few hundred bytes per change, and history is what the owner asks for).
"""

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Max
from psycopg.types.json import Jsonb

from access.keys import KEY_PREFIX, api_key_find
from access.models import ApiKey
from kenfold import clock
from kenfold_common.errors import InvalidInput, NotFound
from memories.models import Memory, MemoryAction, MemoryEvent
from memories.selectors import parse_memory_id

MAX_DETAIL_TEXT = 200

_INSERT = """
INSERT INTO memory_event (memory_id, action, agent, credential, at, detail)
SELECT id, %(action)s, %(agent)s, %(credential)s, %(at)s, %(detail)s FROM unnest(%(ids)s::uuid[]) AS id
"""


def audit_record(
    *,
    action: MemoryAction,
    memory_ids: Iterable[uuid.UUID | str],
    agent: str,
    credential: str | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Record that `agent` (through `credential`, None for stdio, the owner and the worker) did `action`
    to each memory of `memory_ids`, now. One statement for any number of memories."""
    ids = [str(memory_id) for memory_id in memory_ids]
    if not ids:
        return
    clean = {
        key: value[:MAX_DETAIL_TEXT] if isinstance(value, str) else value
        for key, value in (detail or {}).items()
        if value not in (None, "")
    }
    with connection.cursor() as cursor:
        cursor.execute(
            _INSERT,
            {
                "action": str(action),
                "agent": agent,
                "credential": credential,
                "at": clock.now(),
                "detail": Jsonb(clean),
                "ids": ids,
            },
        )


# --- reading ---------------------------------------------------------------------------------------------


def event_json(event: MemoryEvent, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """An event as commands print it with --json."""
    return {
        "memory_id": str(event.memory_id),
        "action": event.action,
        "agent": event.agent,
        "credential": event.credential,
        "credential_label": (labels or {}).get(event.credential or "", None),
        "at": event.at.isoformat(),
        "detail": event.detail,
    }


def credential_labels(credentials: Iterable[str | None]) -> dict[str, str]:
    """How listings name each credential: `key kf_AbCdEfGh` (its displayed prefix), `grant 1a2b3c4d`."""
    wanted = {credential for credential in credentials if credential}
    key_ids = [c.partition(":")[2] for c in wanted if c.startswith("key:")]
    prefixes = {
        str(key_id): prefix
        for key_id, prefix in ApiKey.objects.filter(pk__in=_uuids(key_ids)).values_list("id", "prefix")
    }
    labels = {}
    for credential in wanted:
        kind, _, ident = credential.partition(":")
        labels[credential] = (
            f"key {prefixes.get(ident, ident[:8])}" if kind == "key" else f"{kind} {ident[:8]}"
        )
    return labels


def _uuids(values: Iterable[str]) -> list[uuid.UUID]:
    ids = []
    for value in values:
        try:
            ids.append(uuid.UUID(value))
        except ValueError:
            continue
    return ids


def memory_trail(*, memory_id: str) -> tuple[Memory | None, list[MemoryEvent]]:
    """A memory (None if its row is gone) and its events, oldest first; NotFound when neither exists."""
    target = parse_memory_id(memory_id)
    memory = Memory.objects.for_views().filter(pk=target).first()
    events = memory_events(memory_id=target)
    if memory is None and not events:
        raise NotFound(f"memory {target} does not exist and has no recorded history; check the id")
    return memory, events


def credential_for(ident: str) -> str:
    """The credential an owner names: `key:<id>`, `grant:<id>`, or an API key's id or prefix (kf_…)."""
    ident = ident.strip()
    if ident.startswith(("key:", "grant:")) and len(ident.partition(":")[2]) >= 4:
        return ident
    if ident.startswith(KEY_PREFIX):
        return f"key:{api_key_find(ident=ident, action='list the events of').pk}"
    raise InvalidInput(
        "name the credential as key:<id>, grant:<id> (the CREDENTIAL column of `manage.py audit`) or by an "
        "API key's prefix (kf_…, from `key list --all`)"
    )


def memory_events(*, memory_id: uuid.UUID) -> list[MemoryEvent]:
    """A memory's events, oldest first."""
    return list(MemoryEvent.objects.filter(memory_id=memory_id).order_by("at", "id"))


def audit_events(
    *, days: int, credential: str | None = None, agent: str | None = None, limit: int | None = None
) -> list[MemoryEvent]:
    """Events of the last `days` days, newest first, optionally of one credential or one agent."""
    events = MemoryEvent.objects.filter(at__gte=clock.now() - timedelta(days=days))
    if credential is not None:
        events = events.filter(credential=credential)
    if agent is not None:
        events = events.filter(agent=agent)
    events = events.order_by("-at", "-id")
    return list(events[:limit] if limit else events)


@dataclass
class CredentialActivity:
    """One credential's (or the credential-less callers') events of a period, counted by action."""

    credential: str | None
    agents: list[str]
    counts: dict[str, int]
    last_at: datetime

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def audit_by_credential(*, days: int) -> list[CredentialActivity]:
    """Per credential, what it did in the last `days` days; the most recently active first."""
    since = clock.now() - timedelta(days=days)
    grouped = (
        MemoryEvent.objects.filter(at__gte=since)
        .values("credential", "agent", "action")
        .order_by()
        .annotate(n=Count("id"), last=Max("at"))
    )
    activity: dict[str | None, CredentialActivity] = {}
    for row in grouped:
        entry = activity.setdefault(
            row["credential"], CredentialActivity(row["credential"], [], {}, row["last"])
        )
        if row["agent"] not in entry.agents:
            entry.agents.append(row["agent"])
        entry.counts[row["action"]] = entry.counts.get(row["action"], 0) + row["n"]
        entry.last_at = max(entry.last_at, row["last"])
    for entry in activity.values():
        # In the actions' own order (created, superseded, ...), not the order the database grouped them in.
        entry.counts = {
            action: entry.counts[action] for action in MemoryAction.values if action in entry.counts
        }
    return sorted(activity.values(), key=lambda entry: entry.last_at, reverse=True)
