"""`manage.py key create <agent> [--read-only] [--label L] [--project P …] [--no-user-memories] |
projects <id|prefix> (--set P … | --add P … | --remove P … | --all) [--user-memories | --no-user-memories] |
list [--all] [--json] | revoke <id|prefix> | quota <id|prefix> [--writes-per-minute N] [--memories-per-day N] [--reset]`."""

import json
from datetime import datetime

from django.core.management.base import CommandParser

from access import keys
from access.reach import limit_summary, projects_column
from kenfold.management.base import KenfoldCommand
from memories import quotas


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
        create.add_argument(
            "--project",
            action="append",
            dest="projects",
            metavar="P",
            help="limit the key to this project (git remote URL or name; repeat for more); default: all",
        )
        create.add_argument(
            "--no-user-memories",
            action="store_false",
            dest="user_memories",
            help="keep user-wide memories (the owner's preferences) from the key",
        )
        projects = sub.add_parser("projects", help="change the projects a key reaches, without a new key")
        projects.add_argument("ident", help="key id or prefix as shown by `key list`")
        change = projects.add_mutually_exclusive_group()
        change.add_argument("--set", nargs="+", metavar="P", help="limit the key to exactly these projects")
        change.add_argument("--add", nargs="+", metavar="P", help="add projects to the key's list")
        change.add_argument("--remove", nargs="+", metavar="P", help="remove projects from the key's list")
        change.add_argument("--all", action="store_true", help="let the key reach every project")
        reading = projects.add_mutually_exclusive_group()
        reading.add_argument(
            "--user-memories", action="store_true", default=None, help="let the key read user-wide memories"
        )
        reading.add_argument(
            "--no-user-memories",
            action="store_false",
            dest="user_memories",
            help="keep user-wide memories from the key",
        )
        listing = sub.add_parser("list", help="list keys (active ones unless --all)")
        listing.add_argument("--all", action="store_true", help="include revoked keys")
        listing.add_argument("--json", action="store_true", help="one JSON object per key, for scripts")
        revoke = sub.add_parser("revoke", help="revoke a key by id or by its prefix")
        revoke.add_argument("ident", help="key id or prefix as shown by `key list`")
        quota = sub.add_parser("quota", help="show or set a key's write quotas (0 = no limit)")
        quota.add_argument("ident", help="key id or prefix as shown by `key list`")
        add_quota_arguments(quota)

    def handle(self, *args: object, **options: object) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _create(self, options: dict) -> None:
        key, raw = keys.api_key_create(
            agent=options["agent"],
            read_only=options["read_only"],
            label=options["label"],
            projects=options["projects"],
            user_memories=options["user_memories"],
        )
        # stdout carries the key alone, so `KEY=$(manage.py key create x)` works; the rest goes to stderr.
        self.stdout.write(raw)
        access = "read-only" if key.read_only else "read and write"
        self.stderr.write(
            f"Created {access} key {key.prefix}… (id {key.id}) for agent {key.agent}"
            f"{f' ({key.label})' if key.label else ''}. "
            f"It reaches {limit_summary(key.projects, key.user_memories)}. "
            "It is shown only now: store it in your agent's configuration."
        )

    def _projects(self, options: dict) -> None:
        key = keys.api_key_limit(
            ident=options["ident"],
            set_to=options["set"],
            add=options["add"],
            remove=options["remove"],
            all_projects=options["all"],
            user_memories=options["user_memories"],
        )
        self.stdout.write(
            f"Key {key.prefix}… (id {key.id}) of agent {key.agent} now reaches "
            f"{limit_summary(key.projects, key.user_memories)}."
        )

    def _list(self, options: dict) -> None:
        rows = keys.api_key_list(include_revoked=options["all"])
        if options["json"]:
            for key in rows:
                self.stdout.write(
                    json.dumps(
                        {
                            "id": str(key.id),
                            "prefix": key.prefix,
                            "agent": key.agent,
                            "label": key.label,
                            "access": "read" if key.read_only else "read+write",
                            "projects": key.projects,
                            "user_memories": key.user_memories,
                            "created_at": key.created_at.isoformat(),
                            "last_used_at": key.last_used_at.isoformat() if key.last_used_at else None,
                            "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
                        }
                    )
                )
            return
        header = (
            f"{'ID':36}  {'PREFIX':11}  {'AGENT':20}  {'LABEL':16}  {'ACCESS':10}  {'CREATED':16}  "
            f"{'LAST USED':16}  {'STATUS':7}  PROJECTS"
        )
        self.stdout.write(header)
        for key in rows:
            self.stdout.write(
                f"{key.id!s:36}  {key.prefix:11}  {key.agent:20}  {key.label or '-':16}  "
                f"{'read' if key.read_only else 'read+write':10}  "
                f"{_when(key.created_at):16}  {_when(key.last_used_at):16}  "
                f"{'revoked' if key.revoked else 'active':7}  {projects_column(key.projects, key.user_memories)}"
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
