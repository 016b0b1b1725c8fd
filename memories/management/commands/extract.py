"""`manage.py extract status|run [--limit N] [--json]`: the extraction of memories from session summaries."""

import json
from dataclasses import asdict

from django.core.management.base import CommandParser

from kenfold.management.base import KenfoldCommand
from memories import selectors
from memories.capture.extraction import DEFAULT_RUN_LIMIT, extraction_run


class Command(KenfoldCommand):
    help = "Extract durable memories from session summaries with the chat model, or show the counts."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        status = sub.add_parser("status", help="session summaries by extraction state")
        status.add_argument("--json", action="store_true")
        run = sub.add_parser("run", help="extract now from due summaries, without the worker's settle delay")
        run.add_argument("--limit", type=int, default=DEFAULT_RUN_LIMIT, help="at most N summaries")
        run.add_argument("--json", action="store_true")

    def handle(self, *args: object, **options: object) -> None:
        if options["action"] == "status":
            counts = asdict(selectors.extraction_counts())
            if options["json"]:
                self.stdout.write(json.dumps(counts))
            else:
                refused = counts.pop("refused")
                self.stdout.write("  ".join(f"{name} {value}" for name, value in counts.items()))
                if refused:
                    self.stdout.write(
                        "refused: " + ", ".join(f"{kind} {count}" for kind, count in refused.items())
                    )
            return
        report = extraction_run(limit=max(1, int(options["limit"])), settle=False)
        if options["json"]:
            self.stdout.write(json.dumps(asdict(report)))
        else:
            self.stdout.write(
                f"processed {report.processed} summaries, stored {report.stored} proposed memories, "
                f"{report.failed} failed (see `extract status`; review with `manage.py memory review`)"
            )
