"""`manage.py memory list|review|approve|reject|forget|history|guidelines`: what the owner does that agents cannot."""

import json
import sys
from pathlib import Path
from typing import TextIO

from django.core.management.base import CommandError, CommandParser

from access.caller import Caller
from kenfold.management.base import KenfoldCommand
from kenfold_common.errors import KenfoldError
from memories import audit, guidelines, selectors
from memories.models import MemoryType, Status
from memories.services.review import CLI_AGENT, memory_approve, memory_forget, memory_reject

REVIEW_PROMPT = "[a]pprove, [r]eject, replace similar #[1-3], [s]kip, [q]uit: "


class Command(KenfoldCommand):
    help = "Review and manage memories: list, review, approve or reject proposals, forget."
    # call_command(..., stdin=...) feeds the interactive review in tests.
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("list", help="list memories, newest first")
        listing.add_argument("--status", choices=Status.values)
        listing.add_argument("--type", choices=MemoryType.values)
        listing.add_argument("--scope", help='"user", a stored scope, or a project as agents pass it')
        listing.add_argument(
            "--stale", action="store_true", help="only memories whose referenced code changed or went"
        )
        listing.add_argument("--limit", type=int, default=50)
        sub.add_parser("review", help="go through proposed memories one by one, oldest first")
        approve = sub.add_parser("approve", help="serve proposed memories (trust becomes user)")
        approve.add_argument("ids", nargs="+")
        approve.add_argument("--replaces", help="an active memory the approved one replaces")
        reject = sub.add_parser("reject", help="refuse proposed memories")
        reject.add_argument("ids", nargs="+")
        reject.add_argument("--reason", default="")
        forget = sub.add_parser("forget", help="soft-delete a memory")
        forget.add_argument("id")
        forget.add_argument("--reason", default="")
        history = sub.add_parser("history", help="who did what to a memory: the audit trail, oldest first")
        history.add_argument("id")
        history.add_argument("--json", action="store_true", help="one JSON object per event")
        rules = sub.add_parser(
            "guidelines", help="the project's memory guidelines (KENFOLD.md), served first by get_context"
        )
        rules.add_argument("guidelines_action", choices=["set", "show", "clear"])
        rules.add_argument("--project", required=True, help="the repository's git remote URL or name")
        rules.add_argument("--file", type=Path, help="set: the guidelines file, e.g. KENFOLD.md")

    def handle(self, *args: object, **options: object) -> None:
        action = options["action"]
        if action == "list":
            self._list(options)
        elif action == "review":
            self._review(options.get("stdin") or sys.stdin)
        elif action == "history":
            self._history(options)
        elif action == "forget":
            result = memory_forget(
                caller=Caller(agent=CLI_AGENT), memory_id=options["id"], reason=options["reason"]
            )
            self.stdout.write(f"{result.id} {result.status}")
        elif action == "guidelines":
            self._guidelines(options)
        else:
            self._decide(action, options)

    def _list(self, options: dict) -> None:
        rows = selectors.memory_list(
            status=options["status"],
            type=options["type"],
            scope=options["scope"],
            stale=options["stale"],
            limit=options["limit"],
        )
        self.stdout.write(
            f"{'ID':36}  {'STATUS':10}  {'TYPE':10}  {'TRUST':8}  {'AGENT':16}  SCOPE / CONTENT"
        )
        for memory in rows:
            text = " ".join(memory.content.split())
            self.stdout.write(
                f"{memory.id!s:36}  {memory.status:10}  {memory.type:10}  {memory.trust:8}  "
                f"{memory.source_agent[:16]:16}  {memory.scope}\n{'':40}{text[:200]}"
            )
            if memory.status == Status.PROPOSED and memory.supersedes_id is not None:
                self.stdout.write(f"{'':40}replaces {memory.supersedes_id} once approved")

    def _history(self, options: dict) -> None:
        memory, events = audit.memory_trail(memory_id=options["id"])
        labels = audit.credential_labels(event.credential for event in events)
        if options["json"]:
            for event in events:
                self.stdout.write(json.dumps(audit.event_json(event, labels)))
            return
        if memory is not None:
            self.stdout.write(
                f"{memory.id}  {memory.status}  {memory.type}  {memory.scope}  written by {memory.source_agent} "
                f"at {memory.created_at:%Y-%m-%d %H:%M:%S} UTC"
            )
        if not events:
            self.stdout.write("No changes recorded (it predates the audit trail).")
        for event in events:
            who = f"{labels[event.credential]} ({event.credential})" if event.credential else "no credential"
            detail = ", ".join(f"{key}={value}" for key, value in sorted(event.detail.items()))
            self.stdout.write(
                f"{event.at:%Y-%m-%d %H:%M:%S}  {event.action:10}  {event.agent}  {who}"
                + (f"  {detail}" if detail else "")
            )

    def _guidelines(self, options: dict) -> None:
        what, project = options["guidelines_action"], options["project"]
        if what == "set":
            path = options["file"]
            if path is None:
                raise CommandError("set needs --file: the guidelines file, e.g. --file KENFOLD.md")
            try:
                content = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise CommandError(
                    f"cannot read the guidelines file ({exc.__class__.__name__}): check --file"
                ) from None
            memory, changed = guidelines.guidelines_set(
                project=project, content=content, actor=CLI_AGENT, source="owner"
            )
            self.stdout.write(f"{'set' if changed else 'unchanged'} {memory.id} {memory.scope}")
        elif what == "show":
            memory = guidelines.guidelines_current(scope=guidelines.guidelines_scope(project))
            if memory is None:
                raise CommandError("this project has no guidelines; set them with: memory guidelines set")
            self.stdout.write(f"{memory.id} {memory.scope}\n{memory.content}")
        else:
            retired = guidelines.guidelines_clear(project=project, actor=CLI_AGENT)
            self.stdout.write(f"cleared {retired.id}" if retired else "this project had no guidelines")

    def _decide(self, action: str, options: dict) -> None:
        failures = 0
        for position, memory_id in enumerate(options["ids"], 1):
            try:
                if action == "approve":
                    memory = memory_approve(memory_id=memory_id, replaces=options["replaces"])
                    self.stdout.write(f"approved {memory.id}")
                else:
                    memory = memory_reject(memory_id=memory_id, reason=options["reason"])
                    self.stdout.write(f"rejected {memory.id}")
            except KenfoldError as exc:
                failures += 1
                # By position, not by value: what was typed where an id belongs may be anything pasted.
                self.stderr.write(f"argument {position}: {exc}")
        if failures:
            raise CommandError(f"{failures} of {len(options['ids'])} could not be {action}d")

    def _review(self, stdin: TextIO) -> None:
        """One proposal at a time: its provenance, evidence and similar memories, then a decision. Input
        that is not a decision asks again; end of input quits like `q`."""
        queue = selectors.memory_review_queue()
        if not queue:
            self.stdout.write("Nothing to review.")
            return
        counts = {"approved": 0, "rejected": 0, "skipped": 0}
        for number, item in enumerate(queue, 1):
            self._show(number, len(queue), item)
            decision = self._decide_one(item, stdin)
            if decision is None:
                break
            counts[decision] += 1
        self.stdout.write(", ".join(f"{value} {name}" for name, value in counts.items()))

    def _show(self, number: int, total: int, item: selectors.ReviewItem) -> None:
        memory = item.memory
        attrs = memory.attrs or {}
        self.stdout.write(f"\n[{number}/{total}] {memory.type} in {memory.scope}  ({memory.id})")
        self.stdout.write(f"  {memory.content}")
        provenance = f"  by {memory.source_agent}"
        if attrs.get("session_agent"):
            provenance += f" from a session of {attrs['session_agent']}"
        if memory.source_session:
            provenance += f" (session {memory.source_session})"
        if attrs.get("extractor_model"):
            provenance += f", model {attrs['extractor_model']}, confidence {memory.confidence:.2f}"
        self.stdout.write(provenance)
        if item.flagged:
            self.stdout.write(
                "  held: it reads like an instruction to an AI model: "
                + "; ".join(item.flagged)
                + "\n  (approving serves it with these flags, as data; reject it if you did not mean it)"
            )
        if item.evidence:
            self.stdout.write(f'  evidence: "{item.evidence}"')
        if item.source_summary is not None:
            first = " ".join(item.source_summary.content.split())[:160]
            self.stdout.write(f"  summary {item.source_summary.id}: {first}")
        if item.replaces is not None:
            old = " ".join(item.replaces.content.split())[:200]
            self.stdout.write(
                f"  replaces ({item.replaces.trust}) {item.replaces.id}: {old}\n"
                "  (approving retires it; until then it is served)"
            )
        for index, similar in enumerate(item.similar, 1):
            text = " ".join(similar.content.split())[:200]
            self.stdout.write(f"  similar #{index}: {text}  ({similar.id})")

    def _decide_one(self, item: selectors.ReviewItem, stdin: TextIO) -> str | None:
        while True:
            self.stdout.write(REVIEW_PROMPT, ending="")
            self.stdout.flush()
            line = stdin.readline()
            if not line:
                return None
            answer = line.strip().lower()
            try:
                if answer in ("q", "quit"):
                    return None
                if answer in ("s", "skip"):
                    return "skipped"
                if answer in ("a", "approve"):
                    memory_approve(memory_id=str(item.memory.id))
                    self.stdout.write("approved")
                    return "approved"
                if answer in ("r", "reject"):
                    self.stdout.write("reason (optional): ", ending="")
                    self.stdout.flush()
                    reason = stdin.readline().strip()
                    memory_reject(memory_id=str(item.memory.id), reason=reason)
                    self.stdout.write("rejected")
                    return "rejected"
                if answer.isdigit() and 1 <= int(answer) <= len(item.similar):
                    old = item.similar[int(answer) - 1]
                    memory_approve(memory_id=str(item.memory.id), replaces=str(old.id))
                    self.stdout.write(f"approved, replacing {old.id}")
                    return "approved"
            except KenfoldError as exc:
                self.stderr.write(str(exc))
                return "skipped"
            choices = f"a, r, s, q or 1-{len(item.similar)}" if item.similar else "a, r, s or q"
            self.stdout.write(f"{answer[:20]!r} is not a choice; answer {choices}")
