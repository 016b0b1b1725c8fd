"""`manage.py export [--out F] [--scope S] [--active]`: write memories, edges and code references as a
JSON Lines archive (spec §1.18)."""

import json
import os
from collections.abc import Generator
from pathlib import Path
from typing import TextIO

from django.core.management.base import CommandError, CommandParser

from archive.selectors import ExportSelection, archive_lines
from kenfold.management.base import KenfoldCommand
from kenfold.management.progress import ProgressBar
from kenfold_common.identity import scope_from_owner


class Command(KenfoldCommand):
    help = (
        "Write memories (all statuses), their edges and code references as a JSON Lines archive, from one "
        "consistent snapshot. Vectors, API keys, OAuth state and jobs are never exported."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--out",
            type=Path,
            help="write to this new file (mode 0600; refused if it exists); default stdout",
        )
        parser.add_argument(
            "--scope", help="only this scope: user, project:<id>, or a project as agents name it"
        )
        parser.add_argument(
            "--active", action="store_true", help="only active and proposed memories (no retired history)"
        )

    def handle(self, *args: object, **options: object) -> None:
        scope = options["scope"]
        selection = ExportSelection(
            scope=scope_from_owner(str(scope)) if scope else None, active=bool(options["active"])
        )
        out = options["out"]
        bar = ProgressBar("exporting")
        lines = archive_lines(selection=selection, progress=bar.update)
        if out is None:
            # The archive goes to stdout unescaped (past TerminalOutput): it is data for `import`.
            stream = self.stdout._out
            counts = self._write(lines, stream, bar)
            stream.flush()
        else:
            path = Path(str(out))
            try:
                # O_EXCL: never overwrite (an older archive, or a file an attacker linked there).
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                raise CommandError(
                    f"{path} already exists; choose another --out or remove it first"
                ) from None
            except OSError as exc:
                raise CommandError(f"cannot create {path}: {exc.strerror}") from None
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as stream:
                    counts = self._write(lines, stream, bar)
            except BaseException:
                # A partial archive would be refused by import anyway; do not leave it lying around.
                path.unlink(missing_ok=True)
                raise
        message = (
            f"Exported {counts}{f' to {out}' if out else ''}. Import it elsewhere with "
            "`manage.py import <file>`; vectors are recomputed there by the embedding backfill."
        )
        if out is None:
            # stdout holds the archive.
            self.stderr.write(message, style_func=str)
        else:
            self.stdout.write(message)

    @staticmethod
    def _write(lines: Generator[str], stream: TextIO, bar: ProgressBar) -> str:
        last = ""
        try:
            for line in lines:
                stream.write(line)
                last = line
        finally:
            # Ends the snapshot's transaction at once if writing failed half way.
            lines.close()
            bar.close()
        end = json.loads(last)["end"]
        return f"{end['memories']} memories, {end['edges']} edges and {end['refs']} code references"
