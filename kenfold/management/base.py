"""The base of every Kenfold management command: domain errors become CommandError in one place."""

from typing import Any, ClassVar

from django.core.management.base import BaseCommand, CommandError

from kenfold_common.errors import KenfoldError


class KenfoldCommand(BaseCommand):
    """A command whose KenfoldErrors reach the operator as their message, without a traceback.

    Django prints a CommandError as "CommandError: <message>" and exits 1 (call_command raises it);
    the message already says what to do next, so it is passed on unchanged.
    """

    # Errors whose message is written for the operator. A command may add its own: db adds the embedded
    # server's errors, which are not KenfoldErrors because their text (server output) is not for agents.
    translated_errors: ClassVar[tuple[type[Exception], ...]] = (KenfoldError,)

    def execute(self, *args: Any, **options: Any) -> str | None:
        try:
            return super().execute(*args, **options)
        except self.translated_errors as exc:
            raise CommandError(str(exc)) from exc
