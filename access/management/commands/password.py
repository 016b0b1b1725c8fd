"""`manage.py password [--stdin]`: set the owner password (consent page, dashboard) and clear a lockout."""

import getpass
import sys

from django.core.management.base import CommandError, CommandParser

from access.password import MIN_PASSWORD_CHARS, password_set
from kenfold.management.base import KenfoldCommand


class Command(KenfoldCommand):
    help = (
        "Set the owner password that approves OAuth clients on the consent page (Argon2id, at least "
        f"{MIN_PASSWORD_CHARS} characters). Setting it also clears a consent lockout."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--stdin",
            action="store_true",
            help="read the password from the first line of standard input (scripts)",
        )

    def handle(self, *args: object, **options: object) -> None:
        if options["stdin"]:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            if not sys.stdin.isatty():
                raise CommandError("no terminal to ask on; pipe the password with --stdin")
            password = getpass.getpass("New owner password: ")
            if getpass.getpass("Once more: ") != password:
                raise CommandError("the two passwords differ; nothing was changed")
        password_set(password=password)
        self.stderr.write("Owner password set; any consent lockout is cleared.")
