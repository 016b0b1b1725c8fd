"""`manage.py refs status [--scope S] [--limit N]`: code references by state and the stale memories."""

from django.core.management.base import CommandParser

from coderefs.selectors import refs_status
from kenfold.management.base import KenfoldCommand
from kenfold_common.identity import scope_from_owner


class Command(KenfoldCommand):
    help = "Report code references by state and list memories whose referenced code changed or went."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        status = sub.add_parser("status", help="counts by state and the stale memories")
        status.add_argument("--scope", help='a stored scope ("project:…") or a project as agents pass it')
        status.add_argument("--limit", type=int, default=50, help="stale memories to list (1-500)")

    def handle(self, *args: object, **options: object) -> None:
        scope = options["scope"]
        if scope:
            scope = scope_from_owner(str(scope))
        report = refs_status(scope=scope, limit=int(options["limit"]))
        self.stdout.write(", ".join(f"{count} {state}" for state, count in report.counts.items()))
        if not report.stale:
            self.stdout.write("No stale memories.")
            return
        self.stdout.write("Stale memories (review, supersede or forget them):")
        for item in report.stale:
            text = " ".join(item.content.split())[:160]
            self.stdout.write(f"  {item.memory_id}  {item.description}\n      {text}")
