"""What every agent write shares: its input checks, the insert with the review rule and the write quota,
and the embedding once the write has committed (remember and handoff both write this way)."""

import logging
from datetime import timedelta

from django.db import transaction

from access.caller import Caller
from kenfold import clock
from kenfold_common.errors import InvalidInput
from kenfold_common.identity import SESSION_ID_META_KEY
from kenfold_common.secrets import reject_secrets
from memories.insert import memory_insert
from memories.models import Memory, MemoryType, Status, Trust
from memories.providers import configured
from memories.quotas import quota_charge
from memories.search.embedding_store import BACKFILL_TIMEOUT, embed_now, store_vectors
from memories.search.embedding_store import DEFAULT_BATCH as EMBED_BATCH

log = logging.getLogger(__name__)


def clean_text(value: str, *, field: str, limit: int, advice: str) -> str:
    """`value` stripped; refused when empty, holding a NUL or longer than `limit` (`advice`: what to do)."""
    text = (value or "").strip()
    if not text:
        raise InvalidInput(f"{field} must not be empty")
    if "\x00" in text:
        # PostgreSQL text cannot hold NUL; refusing here keeps it a clear input error, not a crash.
        raise InvalidInput(f"{field} contains a NUL character (\\x00); remove it and try again")
    if len(text) > limit:
        raise InvalidInput(f"{field} is {len(text)} characters; the limit is {limit}. {advice}")
    return text


def reject_secret_session_id(session_id: str | None) -> None:
    """The session id is stored with the memory (source_session) and exported with it: a client that
    puts a credential there is refused like content, rather than dropping it and losing the session."""
    if session_id:
        reject_secrets(field=f"the session id (_meta {SESSION_ID_META_KEY})", text=session_id, named=True)


def parse_ttl(
    ttl_seconds: int | None, *, maximum: timedelta, default: timedelta | None = None
) -> timedelta | None:
    """`ttl_seconds` as a timedelta (`default` for none or 0); refused when negative or past `maximum`."""
    if ttl_seconds is None or ttl_seconds == 0:
        return default
    if ttl_seconds < 0:
        raise InvalidInput("ttl_seconds must not be negative")
    if ttl_seconds > maximum.total_seconds():
        raise InvalidInput(
            f"ttl_seconds is {ttl_seconds}; the limit is {maximum.days} days ({int(maximum.total_seconds())} seconds)"
        )
    return timedelta(seconds=ttl_seconds)


def agent_insert(
    *,
    caller: Caller,
    content: str,
    type: str,
    scope: str,
    ttl: timedelta | None,
    session_id: str | None,
    attrs: dict,
    supersedes: Memory | None,
    retire_superseded: bool = True,
) -> Memory:
    """An agent's new memory, through memory_insert: refused when temporary without a ttl, charged to the
    caller's write quota, and proposed for the owner's review when needs_review says so (else active)."""
    if type == MemoryType.TEMPORARY and ttl is None:
        raise InvalidInput("temporary memories need ttl_seconds (how long to keep them, at most 365 days)")
    # Every other lock of the write is taken by now (the module doc of memories.quotas says why it matters).
    quota_charge(caller=caller, writes=1, memories=1)
    now = clock.now()
    return memory_insert(
        type=type,
        scope=scope,
        content=content,
        attrs=attrs,
        source_agent=caller.agent,
        source_session=session_id,
        trust=Trust.AGENT,
        status=Status.PROPOSED if needs_review(type=type, supersedes=supersedes) else Status.ACTIVE,
        supersedes=supersedes,
        retire_superseded=retire_superseded,
        expires_at=now + ttl if ttl else None,
        created_at=now,
        credential=caller.credential,
    )


def needs_review(*, type: str, supersedes: Memory | None) -> bool:
    """Whether an agent's new memory waits for the owner before it is served.

    Preferences shape every future session, so the owner confirms them. A replacement of a memory the
    owner approved (trust `user`) waits too: otherwise any agent could retire the owner's word by
    superseding it, and review would be skipped. The approved memory stays served until then.
    """
    return type == MemoryType.PREFERENCE or (supersedes is not None and supersedes.trust == Trust.USER)


def embed_committed(memory: Memory) -> tuple[str, list[float]] | None:
    """Embed a memory whose write has committed, with every configured model; the primary model's name
    and vector (for similar[]), or None.

    Before the answer, so the memory is found by meaning at once by every ranking. Nothing goes to the
    job queue: every configuration with more than one model runs them in this process (a few ms each,
    no network wait), and queueing the second local model measured slower (remember p95 +26 % with 4
    clients, +40 % with 1: the worker's embedding competes for the same cores; docs/benchmarks.md), and
    `manage.py mcp` runs no worker at all. After the commit nothing may fail the call: the memory is
    stored, so a failing model is logged with the memory id and the periodic backfill embeds what is
    missing. Run after the commit, so no lock is held while a provider answers and a deduplicated
    remember (returned earlier) is never embedded again.
    """
    try:
        embedders = configured.embedders()
        vectors = embed_now(embedders=embedders, memory=memory)
    except Exception:
        log.warning(
            "embedding a new memory failed; the backfill embeds it",
            exc_info=True,
            extra={"memory_id": str(memory.id)},
        )
        return None
    primary = None
    if embedders and vectors[0] is not None:
        primary = (embedders[0].name, vectors[0])
    return primary


def embed_committed_batch(memories: list[Memory]) -> None:
    """Embed memories whose write has committed (a docs sync's new sections), in batches, with every
    configured model. Best effort, like a remember's embedding: a failing model is logged and the
    periodic backfill embeds what is missing."""
    if not memories:
        return
    try:
        embedders = configured.embedders()
    except Exception:
        log.warning("loading the embedders failed; the backfill embeds the memories", exc_info=True)
        return
    for embedder in embedders:
        for start in range(0, len(memories), EMBED_BATCH):
            batch = memories[start : start + EMBED_BATCH]
            try:
                vectors = embedder.embed([memory.content for memory in batch], timeout=BACKFILL_TIMEOUT)
                with transaction.atomic():
                    store_vectors(
                        model=embedder.name,
                        items=[(m.id, m.content, v) for m, v in zip(batch, vectors, strict=True)],
                    )
            except Exception:
                log.warning(
                    "embedding new memories failed; the backfill embeds them",
                    exc_info=True,
                    extra={"model": embedder.name},
                )
                break
