"""`manage.py scan [--redact] [--json]`: find credentials stored before a rule caught them (spec §1.11)."""

import json
from dataclasses import asdict

from django.core.management.base import CommandError, CommandParser

from archive.services import ScanReport, memory_scan
from kenfold.management.base import KenfoldCommand
from kenfold.management.progress import ProgressBar


class Command(KenfoldCommand):
    help = (
        "Scan the content and every attrs string of every memory, in any status, for credentials; list "
        "where they are (never the values) and exit 1 if any were found. --redact rewrites them in place."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--redact",
            action="store_true",
            help="replace each credential with [REDACTED:<rule>], delete the memory's vectors, stamp redacted_at",
        )
        parser.add_argument("--json", action="store_true", help="print the findings as JSON")

    def handle(self, *args: object, **options: object) -> None:
        redact = bool(options["redact"])
        bar = ProgressBar("scanning")
        try:
            report = memory_scan(redact=redact, progress=bar.update)
        finally:
            bar.close()
        if options["json"]:
            self.stdout.write(json.dumps(asdict(report)))
        else:
            self.stdout.write(self._table(report, redact=redact))
        if report.hits and not redact:
            raise CommandError(
                f"{len(report.hits)} memories hold credentials; run `manage.py scan --redact` to remove them, "
                "then rotate those credentials"
            )

    @staticmethod
    def _table(report: ScanReport, *, redact: bool) -> str:
        if not report.hits:
            return f"Scanned {report.scanned} memories: no credentials found."
        rows = [("ID", "STATUS", "TYPE", "FIELDS", "FOUND")]
        rows += [(h.id, h.status, h.type, ", ".join(h.fields), ", ".join(h.rules)) for h in report.hits]
        widths = [max(len(row[i]) for row in rows) for i in range(4)]
        lines = [
            "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4] for row in rows
        ]
        if redact:
            lines.append(
                f"Redacted {report.redacted} of {report.scanned} memories scanned; their vectors are recomputed "
                "by the embedding backfill. These credentials were stored in shared memory: rotate them "
                "(revoke and reissue each one) now."
            )
        else:
            lines.append(f"{len(report.hits)} of {report.scanned} memories hold credentials.")
        return "\n".join(lines)
