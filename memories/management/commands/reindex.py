"""`manage.py reindex [--batch N]`: embed every live memory lacking a current vector, with progress."""

import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memories import providers
from memories.embedding_store import DEFAULT_BATCH, backfill
from memories.embeddings import EmbeddingError


class Command(BaseCommand):
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
            try:
                report = backfill(embedder=embedder, batch=int(options["batch"]), progress=progress)
            except EmbeddingError as exc:
                raise CommandError(str(exc)) from None
            sys.stderr.write("\n")
            self.stdout.write(
                f"Embedded {report.embedded} memories with {embedder.name}; {report.failed} failed "
                f"(retried at the next backfill), {report.remaining} still without a current vector."
            )
