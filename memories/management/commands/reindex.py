"""`manage.py reindex [--batch N]`: embed every live memory lacking a current vector, with progress."""

import sys

from django.core.management.base import CommandError, CommandParser

from kenfold.management.base import KenfoldCommand
from memories import providers
from memories.embedding_store import DEFAULT_BATCH, backfill


class Command(KenfoldCommand):
    help = "Embed memories that have no vector of the configured model (after a model switch, an outage)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=DEFAULT_BATCH, help="memories per provider call (16-256)"
        )

    def handle(self, *args: object, **options: object) -> None:
        embedders = providers.embedders()
        if not embedders:
            raise CommandError("embeddings are off (KENFOLD_EMBED=off): there is nothing to reindex")

        def progress(done: int, total: int) -> None:
            width = 30
            filled = width * done // max(total, 1)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
            sys.stderr.flush()

        for embedder in embedders:
            report = backfill(embedder=embedder, batch=int(options["batch"]), progress=progress)
            sys.stderr.write("\n")
            self.stdout.write(
                f"Embedded {report.embedded} memories with {embedder.name}; {report.failed} failed "
                f"(retried at the next backfill), {report.remaining} still without a current vector."
            )
