"""`manage.py memory list|approve|reject|forget`: what the owner does that agents cannot."""

from django.core.management.base import CommandError, CommandParser

from kenfold.caller import Caller
from kenfold.management.base import KenfoldCommand
from kenfold_common.errors import KenfoldError
from memories import selectors, services
from memories.models import MemoryType, Status


class Command(KenfoldCommand):
    help = "Review and manage memories: list, approve or reject proposals, forget."

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
        approve = sub.add_parser("approve", help="serve proposed memories (trust becomes user)")
        approve.add_argument("ids", nargs="+")
        approve.add_argument("--replaces", help="an active memory the approved one replaces")
        reject = sub.add_parser("reject", help="refuse proposed memories")
        reject.add_argument("ids", nargs="+")
        reject.add_argument("--reason", default="")
        forget = sub.add_parser("forget", help="soft-delete a memory")
        forget.add_argument("id")
        forget.add_argument("--reason", default="")

    def handle(self, *args: object, **options: object) -> None:
        action = options["action"]
        if action == "list":
            self._list(options)
        elif action == "forget":
            result = services.memory_forget(
                caller=Caller(agent=services.CLI_AGENT), memory_id=options["id"], reason=options["reason"]
            )
            self.stdout.write(f"{result.id} {result.status}")
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

    def _decide(self, action: str, options: dict) -> None:
        failures = 0
        for memory_id in options["ids"]:
            try:
                if action == "approve":
                    memory = services.memory_approve(memory_id=memory_id, replaces=options["replaces"])
                    self.stdout.write(f"approved {memory.id}")
                else:
                    memory = services.memory_reject(memory_id=memory_id, reason=options["reason"])
                    self.stdout.write(f"rejected {memory.id}")
            except KenfoldError as exc:
                failures += 1
                self.stderr.write(f"{memory_id}: {exc}")
        if failures:
            raise CommandError(f"{failures} of {len(options['ids'])} could not be {action}d")
