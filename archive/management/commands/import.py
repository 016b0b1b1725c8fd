"""`manage.py import [--dry-run] <file|->`: read a JSON Lines archive written by `export` (spec §1.18)."""

import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from archive.services import ImportReport, archive_import
from kenfold.management.base import KenfoldCommand
from kenfold.management.progress import ProgressBar


class Command(KenfoldCommand):
    help = (
        "Import an archive written by `manage.py export`. Every line is validated (and scanned for secrets) "
        "before anything is written; then all of it is imported in one transaction. Memories already here "
        "are left as they are, so importing twice changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("archive", help="the archive file, or - for stdin")
        parser.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args: object, **options: object) -> None:
        source = str(options["archive"])
        bar = ProgressBar("validating")
        try:
            report = archive_import(
                lines=self._lines(source), dry_run=bool(options["dry_run"]), progress=self._every(bar)
            )
        finally:
            bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(asdict(report)))
        else:
            self.stdout.write(self._summary(report))

    @staticmethod
    def _every(bar: ProgressBar) -> Callable[[int], None]:
        def progress(line: int) -> None:
            if line % 1000 == 0:
                bar.update(line)

        return progress

    @staticmethod
    def _lines(source: str) -> Iterator[bytes]:
        if source == "-":
            yield from sys.stdin.buffer
            return
        path = Path(source)
        try:
            handle = path.open("rb")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        with handle:
            yield from handle

    @staticmethod
    def _summary(report: ImportReport) -> str:
        verb = "Would import" if report.dry_run else "Imported"
        lines = [
            f"{verb} {report.memories} memories, {report.edges} edges and {report.refs} code references "
            f"(the archive holds {report.read['memories']}, {report.read['edges']} and {report.read['refs']})."
        ]
        here = (report.memories_already_here, report.edges_already_here, report.refs_already_here)
        if any(here):
            lines.append(
                f"Already here, left as they are: {here[0]} memories, {here[1]} edges, {here[2]} code references."
            )
        if report.edges_skipped or report.refs_skipped:
            lines.append(
                f"Skipped {report.edges_skipped} edges and {report.refs_skipped} code references whose "
                "memories are neither in the archive nor here."
            )
        if report.supersedes_unlinked:
            lines.append(
                f"{report.supersedes_unlinked} memories supersede a memory that is neither in the archive nor "
                "here; they were imported without that link (export the whole store to keep it)."
            )
        if report.trust_user_served:
            verb = "would carry" if report.dry_run else "carry"
            lines.append(
                f"{report.trust_user_served} active preferences {verb} trust: user: get_context serves them to "
                "every agent as the owner's own word. Review them on the dashboard's Memories page and "
                "forget any the owner did not write."
            )
        if report.dry_run:
            lines.append("Nothing was written (--dry-run); run again without it to import.")
        elif report.memories:
            lines.append(
                "Vectors are not in archives: the worker's embedding backfill computes them at its next run, "
                "or run `manage.py reindex` now."
            )
        return "\n".join(lines)
