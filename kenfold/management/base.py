"""The base of every Kenfold management command: domain errors become CommandError in one place, a
database that is missing or behind the code is one line saying what to run, misspelt KENFOLD_* variables
are named, and everything written to the terminal is escaped in one place."""

import sys
from typing import Any, ClassVar, TextIO

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, OutputWrapper
from django.db.utils import ProgrammingError

from kenfold.schema import (
    database_is_created,
    has_been_migrated,
    no_database_message,
    schema_behind_message,
    schema_is_current,
)
from kenfold_common.env import unknown_variable_warnings
from kenfold_common.errors import KenfoldError
from kenfold_common.text import for_terminal


class TerminalOutput(OutputWrapper):
    """stdout/stderr of a command: agent-written text (memory content, reasons) cannot drive the
    terminal; control and bidi characters are shown as escapes. Our own styling is applied after."""

    def write(self, msg: str = "", style_func: Any = None, ending: str | None = None) -> None:
        super().write(for_terminal(msg), style_func, ending)


class KenfoldCommand(BaseCommand):
    """A command whose KenfoldErrors reach the operator as their message, without a traceback.

    Django prints a CommandError as "CommandError: <message>" and exits 1 (call_command raises it);
    the message already says what to do next, so it is passed on unchanged.
    """

    # Errors whose message is written for the operator. A command may add its own: db adds the embedded
    # server's errors, which are not KenfoldErrors because their text (server output) is not for agents.
    translated_errors: ClassVar[tuple[type[Exception], ...]] = (KenfoldError,)
    # Whether the command works on Kenfold's tables. Then a home without a database is refused before
    # anything starts (a command run without the server's KENFOLD_HOME must not create and leave running a
    # second cluster), so is a database never migrated, and a query that fails on a missing table or
    # column (a migration not applied yet) is reported as a schema behind the code. `db` and `serve` create
    # or migrate the database themselves.
    uses_tables: ClassVar[bool] = True

    def __init__(
        self,
        stdout: TextIO | None = None,
        stderr: TextIO | None = None,
        no_color: bool = False,
        force_color: bool = False,
    ) -> None:
        super().__init__(stdout, stderr, no_color, force_color)
        self.stdout = TerminalOutput(stdout or sys.stdout)
        self.stderr = self._error_output(stderr or sys.stderr)

    def _error_output(self, out: TextIO) -> TerminalOutput:
        output = TerminalOutput(out)
        output.style_func = self.style.ERROR  # as BaseCommand styles its stderr
        return output

    def execute(self, *args: Any, **options: Any) -> str | None:
        # BaseCommand.execute wraps a given stdout/stderr itself; wrap them here instead.
        if options.get("stdout"):
            self.stdout = TerminalOutput(options.pop("stdout"))
        if options.get("stderr"):
            self.stderr = self._error_output(options.pop("stderr"))
        for warning in unknown_variable_warnings(settings.KNOWN_VARIABLES):
            self.stderr.write(f"WARNING: {warning}")
        if self.uses_tables:
            if not database_is_created():
                raise CommandError(no_database_message())
            if not has_been_migrated():
                raise CommandError(schema_behind_message())
        try:
            return super().execute(*args, **options)
        except self.translated_errors as exc:
            raise CommandError(str(exc)) from exc
        except ProgrammingError as exc:
            # Checked only after a failure: the check loads every migration, which no command should pay.
            if self.uses_tables and not schema_is_current():
                raise CommandError(schema_behind_message()) from exc
            raise
