"""The base of every Kenfold management command: domain errors become CommandError in one place, and
everything written to the terminal is escaped in one place."""

import sys
from typing import Any, ClassVar, TextIO

from django.core.management.base import BaseCommand, CommandError, OutputWrapper

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
        try:
            return super().execute(*args, **options)
        except self.translated_errors as exc:
            raise CommandError(str(exc)) from exc
