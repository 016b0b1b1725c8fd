"""`manage.py reindex [--batch N]`: embed every live memory lacking a current vector, then build the missing
per-scope vector indexes, with progress."""

import sys

from django.core.management.base import CommandError, CommandParser

from kenfold.management.base import KenfoldCommand
from memories import extensions
from memories.providers import configured
from memories.search.embedding_store import DEFAULT_BATCH, backfill
from memories.search.scope_indexes import build_scope_indexes


class Command(KenfoldCommand):
    help = (
        "Embed memories that have no vector of the configured model (after a model switch, an outage), "
        "then build the per-scope vector indexes the worker would build."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=DEFAULT_BATCH, help="memories per provider call (16-256)"
        )

    def handle(self, *args: object, **options: object) -> None:
        embedders = configured.embedders()
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
        sys.stderr.write("Building per-scope vector indexes (writers are not blocked)...\n")
        indexes = build_scope_indexes(budget_seconds=float("inf"), progress=progress)
        extensions.retrieval_changed(extensions.REINDEXED)
        sys.stderr.write("\n")
        if indexes.busy:
            self.stdout.write(
                "Per-scope vector indexes: another process is building them; run this again later."
            )
        else:
            self.stdout.write(
                f"Per-scope vector indexes: built {indexes.built} ({indexes.dropped} left invalid by an "
                f"interrupted build were rebuilt), {indexes.present} already present."
            )
