"""`manage.py oauth clients [--all] [--json] | revoke <grant|prefix> | quota <grant|prefix> [...]`: the remote
clients the owner let in."""

import json
from datetime import datetime

from django.core.management.base import CommandParser

from access.reach import projects_column
from kenfold.management.base import KenfoldCommand
from memories.management.commands.key import add_quota_arguments, set_quota
from oauth import services


class Command(KenfoldCommand):
    help = "List the OAuth clients (ChatGPT, claude.ai, remote agents) the owner approved, and revoke them."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        listing = sub.add_parser("clients", help="list grants: client, agent, access, last use")
        listing.add_argument("--all", action="store_true", help="include revoked grants")
        listing.add_argument("--json", action="store_true", help="one JSON object per grant, for scripts")
        revoke = sub.add_parser("revoke", help="revoke a grant and all its tokens; the client must ask again")
        revoke.add_argument(
            "grant", help="grant id, or its first characters (at least 4) as `oauth clients` shows"
        )

        quota = sub.add_parser("quota", help="show or set a grant's write quotas (0 = no limit)")
        quota.add_argument("grant", help="grant id, or its first characters (at least 4)")
        add_quota_arguments(quota)

    def handle(self, *args: object, **options: object) -> None:
        getattr(self, f"_{options['action']}")(options)

    def _clients(self, options: dict) -> None:
        rows = services.grant_list(include_revoked=options["all"])
        if options["json"]:
            for row in rows:
                g = row.grant
                self.stdout.write(
                    json.dumps(
                        {
                            "grant": str(g.id),
                            "client": row.client_name,
                            "client_id": row.client_id,
                            "agent": g.agent,
                            "access": g.access,
                            "projects": g.projects,
                            "user_memories": g.user_memories,
                            "created_at": g.created_at.isoformat(),
                            "last_used_at": g.last_used_at.isoformat() if g.last_used_at else None,
                            "revoked_at": g.revoked_at.isoformat() if g.revoked_at else None,
                        }
                    )
                )
            return
        if not rows:
            self.stderr.write(
                "No OAuth clients yet. Add Kenfold as a connector in a client (docs/deploy.md)."
            )
            return
        self.stdout.write(
            f"{'GRANT':8}  {'CLIENT':24}  {'AGENT':20}  {'ACCESS':10}  {'LAST USED':16}  {'STATUS':7}  PROJECTS"
        )
        for row in rows:
            g = row.grant
            status = f"revoked ({g.revoke_reason})" if g.revoked_at else "active"
            self.stdout.write(
                f"{str(g.id)[:8]}  {row.client_name[:24]:24}  {g.agent[:20]:20}  {g.access:10}  "
                f"{_when(g.last_used_at):16}  {status:7}  {projects_column(g.projects, g.user_memories)}"
            )

    def _revoke(self, options: dict) -> None:
        grant = services.grant_revoke(ident=options["grant"])
        self.stdout.write(
            f"Revoked grant {grant.id} (agent {grant.agent}); the client must be approved again to reconnect."
        )

    def _quota(self, options: dict) -> None:
        grant = services.grant_find(ident=options["grant"])
        self.stdout.write(
            f"Grant {grant.id} (agent {grant.agent}): " + set_quota(f"grant:{grant.id}", options)
        )


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else "-"
