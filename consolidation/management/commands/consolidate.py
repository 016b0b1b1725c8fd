"""`manage.py consolidate status|run|list|apply|reject`: the owner's side of consolidation (spec §1.14)."""

import json
import sys
from dataclasses import asdict

from django.core.management.base import CommandError, CommandParser

from consolidation import selectors, services
from consolidation.models import ProposalStatus
from kenfold.management.base import KenfoldCommand
from kenfold_common.errors import KenfoldError
from memories.services.review import CLI_AGENT

PREVIEW_CHARS = 160


def _preview(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS else line[: PREVIEW_CHARS - 1] + "…"


class Command(KenfoldCommand):
    help = (
        "Consolidation proposals made by the chat model: duplicates, conflicts, and digests of old "
        "session summaries. Show them, make new ones now, or apply or reject them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        status = sub.add_parser("status", help="proposals by status, and whether the worker is on")
        status.add_argument("--json", action="store_true")
        run = sub.add_parser("run", help="judge candidate pairs and write a digest now")
        run.add_argument("--limit", type=int, default=services.PAIR_LIMIT, help="at most N pairs (default 4)")
        run.add_argument("--json", action="store_true")
        listing = sub.add_parser("list", help="proposals with their memories (pending by default)")
        listing.add_argument("--status", choices=[*ProposalStatus.values, "all"], default="pending")
        listing.add_argument("--limit", type=int, default=50)
        listing.add_argument("--json", action="store_true")
        apply = sub.add_parser("apply", help="apply proposals by id")
        apply.add_argument("ids", nargs="+", metavar="id")
        reject = sub.add_parser("reject", help="reject proposals by id (never proposed again)")
        reject.add_argument("ids", nargs="+", metavar="id")
        reject.add_argument("--reason", default=None, help="why (kept with the proposal)")

    def handle(self, *args: object, **options: object) -> None:
        action = options["action"]
        if action == "status":
            self._status(as_json=bool(options["json"]))
        elif action == "run":
            self._run(limit=int(options["limit"]), as_json=bool(options["json"]))
        elif action == "list":
            status = None if options["status"] == "all" else str(options["status"])
            self._list(status=status, limit=int(options["limit"]), as_json=bool(options["json"]))
        else:
            self._decide(action=str(action), ids=list(options["ids"]), reason=options.get("reason"))

    def _status(self, *, as_json: bool) -> None:
        counts = asdict(selectors.proposal_counts())
        enabled = services.consolidation_enabled()
        if as_json:
            self.stdout.write(json.dumps({**counts, "worker": enabled}))
            return
        refused = counts.pop("refused")
        self.stdout.write("  ".join(f"{name} {value}" for name, value in counts.items()))
        if refused:
            self.stdout.write(
                "refused answers: " + ", ".join(f"{kind} {count}" for kind, count in refused.items())
            )
        if enabled:
            self.stdout.write("The worker runs every 15 minutes (`manage.py qcluster`).")
        else:
            self.stdout.write(
                "The worker is off: it needs KENFOLD_CHAT_URL, and KENFOLD_CONSOLIDATE not false."
            )
        if counts["pending"]:
            self.stdout.write("Review them with `manage.py consolidate list`, then apply or reject.")

    def _run(self, *, limit: int, as_json: bool) -> None:
        if limit < 1:
            raise CommandError("--limit must be at least 1")
        # A progress line on a terminal only: each question takes seconds on a CPU model.
        progress = None
        if not as_json and sys.stderr.isatty():

            def progress(step: str) -> None:
                sys.stderr.write(f"\r\033[K{step}…")
                sys.stderr.flush()

        try:
            report = services.consolidation_run(limit=limit, progress=progress)
        finally:
            if progress is not None:
                sys.stderr.write("\r\033[K")
        if as_json:
            self.stdout.write(json.dumps(asdict(report)))
            return
        if report.skipped:
            self.stdout.write(f"Nothing judged: {report.skipped}; try again when it has finished.")
            return
        self.stdout.write(f"Judged {report.judged} pairs; {report.proposed} new proposals")
        if report.digest:
            self.stdout.write(f"Digest of old session summaries: {report.digest}")
        if report.proposed:
            self.stdout.write("Review them with `manage.py consolidate list`.")

    def _list(self, *, status: str | None, limit: int, as_json: bool) -> None:
        views = selectors.proposal_list(status=status, limit=max(1, limit))
        if as_json:
            self.stdout.write(json.dumps([_as_json(view) for view in views], ensure_ascii=False))
            return
        if not views:
            self.stdout.write(f"No {status or ''} proposals.".replace("  ", " "))
            return
        for view in views:
            p = view.proposal
            self.stdout.write(f"{p.id}  {p.kind}  {p.status}  {p.scope}  ({p.model})")
            if p.reason:
                self.stdout.write(f"  reason: {p.reason}")
            for member in view.members:
                mark = "keep  " if view.keep is not None and member.pk == view.keep.pk else "retire"
                self.stdout.write(
                    f"  {mark} {member.id} {member.created_at:%Y-%m-%d} {member.status}: "
                    f"{_preview(member.content)}"
                )
            if p.kind == "digest":
                self.stdout.write("  digest:")
                for line in p.content.splitlines():
                    self.stdout.write(f"    {line}")
            if view.action and p.status == ProposalStatus.PENDING:
                self.stdout.write(f"  apply: {view.action.lower()} (`manage.py consolidate apply {p.id}`)")

    def _decide(self, *, action: str, ids: list[str], reason: object) -> None:
        failures = 0
        for proposal_id in ids:
            try:
                if action == "apply":
                    applied = services.proposal_apply(proposal_id=proposal_id, actor=CLI_AGENT)
                    self.stdout.write(_applied_message(applied))
                else:
                    services.proposal_reject(
                        proposal_id=proposal_id, actor=CLI_AGENT, reason=str(reason) if reason else None
                    )
                    self.stdout.write(f"Rejected {proposal_id}; these memories are never proposed again.")
            except KenfoldError as exc:
                failures += 1
                self.stderr.write(f"{proposal_id}: {exc}")
        if failures:
            done = "applied" if action == "apply" else "rejected"
            raise CommandError(f"{failures} of {len(ids)} proposals were not {done}; see the messages above")


def _applied_message(applied: services.Applied) -> str:
    if applied.proposal.kind == "digest":
        return f"Replaced {len(applied.retired)} session summaries with a digest ({applied.result.id})."
    retired = ", ".join(str(m.id) for m in applied.retired)
    return f"Retired {retired}; kept {applied.result.id}."


def _as_json(view: selectors.ProposalView) -> dict[str, object]:
    p = view.proposal
    return {
        "id": str(p.id),
        "kind": p.kind,
        "status": p.status,
        "scope": p.scope,
        "model": p.model,
        "reason": p.reason,
        "content": p.content,
        "keep_id": str(p.keep_id) if p.keep_id else None,
        "members": [
            {
                "id": str(m.id),
                "created_at": m.created_at.isoformat(),
                "status": m.status,
                "content": m.content,
            }
            for m in view.members
        ],
        "created_at": p.created_at.isoformat(),
    }
