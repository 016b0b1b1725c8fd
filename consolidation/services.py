"""Writes of consolidation (spec §1.14): a run that judges candidate pairs and writes a digest of old
session summaries, and the owner's decisions on the proposals it leaves.

Every surface (the worker, `manage.py consolidate`, the dashboard) calls these functions. A proposal
changes nothing until the owner applies it; applying re-checks, under row locks, that every memory it
names is still served, so a proposal made before a memory was forgotten or superseded cannot retire
what is there now.
"""

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction

from consolidation import prompts, selectors
from consolidation.models import Consolidation, ConsolidationScan, Kind, ProposalStatus
from kenfold import clock
from kenfold.db_functions import one_at_a_time
from kenfold_common.errors import Conflict, InvalidInput, NotFound, Unavailable
from kenfold_common.identity import USER_SCOPE
from kenfold_common.secrets import redact_secrets
from memories import extensions
from memories.audit import audit_record
from memories.insert import memory_insert
from memories.models import Memory, MemoryAction, MemoryEdge, MemoryType, Status, Trust, served_sql
from memories.providers import configured
from memories.providers.chat import ChatError, ChatModel, ChatOutputError
from memories.selectors import extraction_counts

log = logging.getLogger(__name__)

CONSOLIDATOR_AGENT = "kenfold-consolidator"
PAIR_LIMIT = 4  # pairs judged per run: two chat calls each, 7-15 s a call on a CPU model
DIGEST_CONFIDENCE = 0.9
MAX_NOTE_CHARS = 500
UNUSABLE = "the model's answer was unusable"
INVALID_ANSWER = "invalid_answer"
RUN_LOCK = "kenfold consolidation run"
# Searching look-alikes of one memory costs a vector and a trigram index lookup; a run stops starting new
# batches after this long, so a first run over a large store is spread over several ticks.
SCAN_BUDGET_SECONDS = 60
NOT_STORED = "(not stored: the digest failed validation)"


def consolidation_enabled() -> bool:
    """The worker runs when KENFOLD_CONSOLIDATE allows it and a chat model is configured."""
    return settings.CONSOLIDATE and configured.chat_model() is not None


@dataclass
class RunReport:
    judged: int = 0  # pairs judged (one or two readings each)
    proposed: int = 0  # new pending proposals, pairs and digest
    stale: int = 0  # pending proposals found stale at the start
    digest: str = ""  # "proposed", "dismissed", or "" when no group of old sessions was due
    skipped: str = ""  # why the worker did nothing


def consolidation_run(
    *,
    limit: int = PAIR_LIMIT,
    wait_for_extraction: bool = False,
    progress: Callable[[str], None] | None = None,
) -> RunReport:
    """One consolidation run: mark stale proposals, judge up to ``limit`` candidate pairs, and write at
    most one digest. Each judgement is committed as it is made.

    ``progress`` is told what the model is asked before each question (each takes seconds on a CPU model).
    ``wait_for_extraction`` (the worker): do nothing while session summaries wait for extraction, so a
    digest never retires a summary before its durable facts were extracted. A chat model that cannot be
    reached ends the run (Unavailable); what was judged before stays, the rest waits for the next run.
    """
    chat = configured.required_chat_model(then="run consolidation again")
    if wait_for_extraction:
        pending = extraction_counts().pending
        if pending:
            return RunReport(skipped=f"{pending} session summaries wait for extraction")
    # The worker and a command never ask the model about the same pairs at once (the unique member set
    # would keep one answer; the other would be paid for for nothing), nor do two workers.
    with one_at_a_time(RUN_LOCK) as alone:
        if not alone:
            return RunReport(skipped="another consolidation run is in progress (the worker or a command)")
        return _run(chat=chat, limit=limit, progress=progress)


def _run(*, chat: ChatModel, limit: int, progress: Callable[[str], None] | None) -> RunReport:
    report = RunReport()
    now = clock.now()
    report.stale = proposals_mark_stale(now=now)
    embedders = configured.embedders()
    model = embedders[0].name if embedders else None
    deadline = time.monotonic() + SCAN_BUDGET_SECONDS
    held: set[UUID] = set()
    # The oldest unscanned memories, a batch at a time, until `limit` pairs were judged, the scan budget
    # is spent, or every memory is scanned. A memory is marked scanned once every pair it found was
    # judged; one whose pairs wait for the limit is scanned again first next run.
    while report.judged < limit and time.monotonic() < deadline:
        batch = selectors.scan_batch(model=model, now=now, size=selectors.SCAN_BATCH)
        if not batch:
            break
        waiting: set[UUID] = set()
        for pair in selectors.pair_candidates(model=model, now=now, candidates=batch):
            if report.judged >= limit:
                waiting |= pair.found_by
                continue
            if pair.older.pk in held or pair.newer.pk in held:
                # A proposal of this run holds one of them; deciding it scans its members again.
                continue
            report.judged += 1
            if progress is not None:
                progress(f"judging pair {report.judged} of at most {limit}")
            if _judge_pair(chat=chat, pair=pair):
                report.proposed += 1
                held |= {pair.older.pk, pair.newer.pk}
        ConsolidationScan.objects.bulk_create(
            [
                ConsolidationScan(memory_id=memory_id, model=model or "")
                for memory_id in batch
                if memory_id not in waiting
            ],
            ignore_conflicts=True,
        )
    report.digest = _digest(chat=chat, now=now, progress=progress)
    report.proposed += report.digest == "proposed"
    return report


@contextmanager
def _transient_failure_ends_run() -> Iterator[None]:
    """A chat model that cannot be reached (or refuses the request) ends the run with an error the
    operator can act on; an answer that is unusable (ChatOutputError) is the caller's to record."""
    try:
        yield
    except ChatOutputError:
        raise
    except ChatError as exc:
        log.warning("consolidation stopped: the chat model did not answer", extra={"error": str(exc)})
        raise Unavailable(
            f"the chat model did not answer ({exc}); nothing more was judged in this run, and the "
            "next run continues"
        ) from exc


def _shown(memory: Memory) -> prompts.Shown:
    return prompts.Shown(
        type=memory.type, content=memory.content, created_at=memory.created_at, agent=memory.source_agent
    )


def _judge_pair(*, chat: ChatModel, pair: selectors.Pair) -> bool:
    """Judge one pair (two readings unless the first says distinct) and record it; True when the record
    is a new pending proposal."""
    older, newer = _shown(pair.older), _shown(pair.newer)
    try:
        with _transient_failure_ends_run():
            first = prompts.judge(chat=chat, a=older, b=newer)
            second = None
            if first.relation != "distinct":
                second = prompts.judge(chat=chat, a=newer, b=older)
    except ChatOutputError:
        # Asked again, a model that answered garbage answers garbage: recorded, never re-asked. The log
        # line names the kind only: the error may quote the answer.
        log.info(
            "consolidation refused the judge's answer on memories %s and %s: %s",
            pair.older.pk,
            pair.newer.pk,
            INVALID_ANSWER,
            extra={"refused": INVALID_ANSWER},
        )
        proposal_record(
            kind=Kind.DISTINCT,
            scope=pair.older.scope,
            member_ids=[pair.older.pk, pair.newer.pk],
            reason=UNUSABLE,
            refused=INVALID_ANSWER,
            model=chat.model,
        )
        return False
    verdict = prompts.combine(first, second)
    keep = None
    if verdict.keep is not None:
        keep = pair.older.pk if verdict.keep == "older" else pair.newer.pk
    return proposal_record(
        kind=verdict.relation,
        scope=pair.older.scope,
        member_ids=[pair.older.pk, pair.newer.pk],
        keep_id=keep,
        reason=verdict.reason,
        model=chat.model,
    )


def _project_label(scope: str) -> str:
    if scope == USER_SCOPE:
        return "(none: user-wide sessions)"
    return scope.removeprefix("project:")


def _digest(*, chat: ChatModel, now: datetime, progress: Callable[[str], None] | None) -> str:
    group = selectors.digest_group(now=now)
    if group is None:
        return ""
    scope, sessions = group
    if progress is not None:
        progress(f"writing a digest of {len(sessions)} session summaries")
    shown = [
        prompts.Session(content=s.content, created_at=s.created_at, agent=s.source_agent) for s in sessions
    ]
    prompt = prompts.digest_prompt(project_label=_project_label(scope), sessions=shown)
    try:
        with _transient_failure_ends_run():
            digest = prompts.write_digest(chat=chat, prompt=prompt)
        problem = prompts.digest_problem(digest=digest, prompt=prompt)
    except ChatOutputError:
        problem = (INVALID_ANSWER, UNUSABLE)
    members = [s.pk for s in sessions]
    if problem is not None:
        refused, reason = problem
        log.info(
            "consolidation refused the digest of session summaries %s: %s",
            ", ".join(str(member) for member in members),
            refused,
            extra={"refused": refused},
        )
        # Recorded, so this group is not asked for again; the sessions stay as they are.
        proposal_record(
            kind=Kind.DIGEST,
            scope=scope,
            member_ids=members,
            content=NOT_STORED,
            reason=reason,
            refused=refused,
            model=chat.model,
            dismissed=True,
        )
        return "dismissed"
    content = prompts.digest_content(digest=digest, sessions=shown)
    inserted = proposal_record(
        kind=Kind.DIGEST, scope=scope, member_ids=members, content=content, model=chat.model
    )
    return "proposed" if inserted else ""


def proposal_record(
    *,
    kind: str,
    scope: str,
    member_ids: list[UUID],
    model: str,
    keep_id: UUID | None = None,
    content: str = "",
    reason: str = "",
    refused: str = "",
    dismissed: bool = False,
) -> bool:
    """Record a judgement; True when it is a new pending proposal. A set of memories judged before is
    left as it is (ON CONFLICT DO NOTHING on the unique member set): judged once, ever."""
    members = sorted(set(member_ids))
    status = ProposalStatus.DISMISSED if dismissed or kind == Kind.DISTINCT else ProposalStatus.PENDING
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO consolidation (kind, scope, member_ids, keep_id, content, reason, refused, model,
                status)
            VALUES (%s, %s, %s::uuid[], %s, %s, %s, %s, %s, %s)
            ON CONFLICT (member_ids) DO NOTHING
            RETURNING id
            """,
            [kind, scope, members, keep_id, content, prompts.clean_reason(reason), refused, model, status],
        )
        inserted = cursor.fetchone() is not None
    return inserted and status == ProposalStatus.PENDING


def proposals_mark_stale(*, now: datetime) -> int:
    """Mark pending proposals stale when a member is gone or no longer served (retired, expired)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            UPDATE consolidation x SET status = 'stale'
            WHERE x.status = 'pending' AND EXISTS (
                SELECT 1 FROM unnest(x.member_ids) AS member(id) LEFT JOIN memory m ON m.id = member.id
                WHERE m.id IS NULL OR NOT ({served_sql("m")}))
            RETURNING x.member_ids
            """,
            {"now": now},
        )
        decided = cursor.fetchall()
    _scan_again(member_ids=[memory_id for (members,) in decided for memory_id in members])
    return len(decided)


def _scan_again(*, member_ids: list[UUID]) -> None:
    """A decided proposal no longer holds its memories: search their look-alikes again (pairs left out
    while it was pending are found; pairs judged before stay judged)."""
    ConsolidationScan.objects.filter(memory_id__in=member_ids).delete()


# --- the owner's decisions -----------------------------------------------------------------------------

STALE_MESSAGE = (
    "the memories changed since the proposal was made; nothing was changed "
    "(the next consolidation run judges them again if they still look alike)"
)


@dataclass(frozen=True)
class Applied:
    proposal: Consolidation
    result: Memory  # the memory kept, or the new digest
    retired: list[Memory]


def _locked(proposal_id: str) -> Consolidation:
    parsed = selectors.parse_proposal_id(proposal_id)
    proposal = Consolidation.objects.select_for_update().filter(pk=parsed).first()
    if proposal is None:
        raise NotFound(f"proposal {parsed} does not exist (use an id shown by `manage.py consolidate list`)")
    if proposal.status == ProposalStatus.STALE:
        raise Conflict(f"proposal {parsed} is stale: {STALE_MESSAGE}")
    if proposal.status != ProposalStatus.PENDING:
        raise Conflict(f"proposal {parsed} was already decided ({proposal.status}); nothing was changed")
    return proposal


def _require_actor(actor: str) -> str:
    if not actor or not actor.strip():
        raise InvalidInput("actor must name who decides (an agent name such as kenfold-cli)")
    return actor.strip()


def proposal_apply(*, proposal_id: str, actor: str) -> Applied:
    """Apply a pending proposal in one transaction: a pair retires every member but the one it keeps; a
    digest becomes a new active episodic memory dated like its last session and retires the sessions.
    The result gets a `replaces` edge to each retired memory.

    Refused, changing nothing: an unknown id, a proposal already decided, and a stale one (a member is
    no longer served; the proposal is marked stale, which is kept).
    """
    actor = _require_actor(actor)
    with transaction.atomic():
        proposal = _locked(proposal_id)
        now = clock.now()
        # In id order, as every applier locks them, so two applies sharing a memory cannot deadlock.
        members = list(Memory.objects.select_for_update().filter(pk__in=proposal.member_ids).order_by("id"))
        served = Memory.objects.served(now).filter(pk__in=[m.pk for m in members]).count()
        if len(members) != len(proposal.member_ids) or served != len(members):
            proposal.status = ProposalStatus.STALE
            proposal.save(update_fields=["status"])
            _scan_again(member_ids=proposal.member_ids)
            stale = True
        else:
            stale = False
            applied = _apply(proposal=proposal, members=members, actor=actor, now=now)
            extensions.retrieval_changed(extensions.CONSOLIDATION_APPLIED)
    if stale:
        raise Conflict(f"proposal {proposal.pk} is stale: {STALE_MESSAGE}")
    return applied


def _apply(*, proposal: Consolidation, members: list[Memory], actor: str, now: datetime) -> Applied:
    if proposal.kind == Kind.DIGEST:
        sessions = sorted(members, key=lambda m: (m.created_at, m.id))
        result = memory_insert(
            type=MemoryType.EPISODIC,
            scope=proposal.scope,
            content=proposal.content,
            attrs={
                "kind": "digest",
                "consolidator_model": proposal.model,
                "consolidation_id": str(proposal.pk),
                "session_count": len(sessions),
                "period_from": sessions[0].created_at.isoformat(),
                "period_to": sessions[-1].created_at.isoformat(),
                "consolidated_at": now.isoformat(),
            },
            source_agent=CONSOLIDATOR_AGENT,
            trust=Trust.USER,
            confidence=DIGEST_CONFIDENCE,
            status=Status.ACTIVE,
            # Dated like the last session it covers, so it never counts as a recent session.
            created_at=sessions[-1].created_at,
            actor=actor,
            audit_detail={"consolidation": str(proposal.pk)},
        )
        retired = sessions
    else:
        result = next(m for m in members if m.pk == proposal.keep_id)
        retired = [m for m in members if m.pk != proposal.keep_id]
    Memory.objects.filter(pk__in=[m.pk for m in retired]).update(status=Status.SUPERSEDED)
    audit_record(
        action=MemoryAction.SUPERSEDED,
        memory_ids=[m.pk for m in retired],
        agent=actor,
        detail={"by": str(result.pk), "consolidation": str(proposal.pk)},
    )
    MemoryEdge.objects.bulk_create(
        [MemoryEdge(src=result, relation="replaces", dst=m, source_agent=actor) for m in retired],
        ignore_conflicts=True,
    )
    proposal.status = ProposalStatus.APPLIED
    proposal.decided_by = actor
    proposal.decided_at = now
    proposal.result = result
    proposal.save(update_fields=["status", "decided_by", "decided_at", "result"])
    _scan_again(member_ids=proposal.member_ids)
    return Applied(proposal=proposal, result=result, retired=retired)


def proposal_reject(*, proposal_id: str, actor: str, reason: str | None = None) -> Consolidation:
    """Reject a pending proposal: kept forever, so these memories are never proposed together again."""
    actor = _require_actor(actor)
    note = " ".join(redact_secrets(reason or "").split())[:MAX_NOTE_CHARS]
    with transaction.atomic():
        proposal = _locked(proposal_id)
        proposal.status = ProposalStatus.REJECTED
        proposal.decided_by = actor
        proposal.decided_at = clock.now()
        proposal.decision_note = note
        proposal.save(update_fields=["status", "decided_by", "decided_at", "decision_note"])
        _scan_again(member_ids=proposal.member_ids)
    return proposal
