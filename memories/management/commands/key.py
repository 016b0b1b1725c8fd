"""`manage.py key create <agent> [--read-only] [--label L] | list [--all] | revoke <id|prefix>
| quota <id|prefix> [--writes-per-minute N] [--memories-per-day N] [--reset]`."""

from datetime import datetime

from django.core.management.base import CommandParser

from kenfold.management.base import KenfoldCommand
from memories import keys, quotas


class Command(KenfoldCommand):
    help = "Create, list and revoke the API keys agents use to reach Kenfold."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="create a key for an agent; the key is printed once")
        create.add_argument("agent", help="the agent this key writes as, e.g. claude-code")
        create.add_argument("--read-only", action="store_true", help="the key may search but not write")
        create.add_argument(
            "--label", default="", help="where the key is used (e.g. laptop), to tell keys of one agent apart"
        )
        listing = sub.add_parser("list", help="list keys (active ones unless --all)")
        listing.add_argument("--all", action="store_true", help="include revoked keys")
        revoke = sub.add_parser("revoke", help="revoke a key by id or by its prefix")
        revoke.add_argument("ident", help="key id or prefix as shown by `key list`")
        quota = sub.add_parser("quota", help="show or set a key's write quotas (0 = no limit)")
        quota.add_argument("ident", help="key id or prefix as shown by `key list`")
        add_quota_arguments(quota)

    def handle(self, *args: object, **options: object) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _create(self, options: dict) -> None:
        key, raw = keys.api_key_create(
            agent=options["agent"], read_only=options["read_only"], label=options["label"]
        )
        # stdout carries the key alone, so `KEY=$(manage.py key create x)` works; the rest goes to stderr.
        self.stdout.write(raw)
        access = "read-only" if key.read_only else "read and write"
        self.stderr.write(
            f"Created {access} key {key.prefix}… (id {key.id}) for agent {key.agent}"
            f"{f' ({key.label})' if key.label else ''}. "
            "It is shown only now: store it in your agent's configuration."
        )

    def _list(self, options: dict) -> None:
        rows = keys.api_key_list(include_revoked=options["all"])
        header = (
            f"{'ID':36}  {'PREFIX':11}  {'AGENT':20}  {'LABEL':16}  {'ACCESS':10}  {'CREATED':16}  "
            f"{'LAST USED':16}  STATUS"
        )
        self.stdout.write(header)
        for key in rows:
            self.stdout.write(
                f"{key.id!s:36}  {key.prefix:11}  {key.agent:20}  {key.label or '-':16}  "
                f"{'read' if key.read_only else 'read+write':10}  "
                f"{_when(key.created_at):16}  {_when(key.last_used_at):16}  {'revoked' if key.revoked else 'active'}"
            )

    def _revoke(self, options: dict) -> None:
        key = keys.api_key_revoke(ident=options["ident"])
        self.stdout.write(f"Revoked key {key.prefix}… (id {key.id}) of agent {key.agent}.")

    def _quota(self, options: dict) -> None:
        key = keys.api_key_find(ident=options["ident"], action="set the quota of")
        self.stdout.write(f"Key {key.prefix}… of agent {key.agent}: " + set_quota(f"key:{key.id}", options))


def add_quota_arguments(parser: CommandParser) -> None:
    parser.add_argument(
        "--writes-per-minute", type=int, metavar="N", help="writes per UTC minute (0 = no limit)"
    )
    parser.add_argument(
        "--memories-per-day", type=int, metavar="N", help="memories created per UTC day (0 = no limit)"
    )
    parser.add_argument(
        "--reset", action="store_true", help="drop the credential's own limits: the defaults apply"
    )


def set_quota(credential: str, options: dict) -> str:
    """Apply the quota options (if any) to `credential`; the limits in force, in words."""
    if (
        options["reset"]
        or options["writes_per_minute"] is not None
        or options["memories_per_day"] is not None
    ):
        quotas.quota_set(
            credential=credential,
            writes_per_minute=options["writes_per_minute"],
            memories_per_day=options["memories_per_day"],
            reset=options["reset"],
        )
    limits = quotas.quota_limits(credentials=[credential])[credential]

    def said(value: int, own: bool, unit: str) -> str:
        amount = "no limit" if value == 0 else f"{value} {unit}"
        return f"{amount} ({'its own' if own else 'the default'})"

    return (
        f"{said(limits.writes_per_minute, limits.own_writes, 'writes per minute')}, "
        f"{said(limits.memories_per_day, limits.own_memories, 'memories per day')}."
    )


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "-"
