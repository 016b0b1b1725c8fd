"""`manage.py audit [--credential C | --agent A] [--days N] [--json]`: who changed which memories lately."""

import json

from django.core.management.base import CommandParser

from kenfold.management.base import KenfoldCommand
from kenfold_common.errors import InvalidInput
from memories import audit


class Command(KenfoldCommand):
    help = "List the audit trail of the last N days per credential: who created, retired or changed memories."

    def add_arguments(self, parser: CommandParser) -> None:
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--credential", help="key:<id>, grant:<id>, or an API key's prefix (kf_…)")
        who.add_argument("--agent", help="only the events of this agent name")
        parser.add_argument("--days", type=int, default=7, help="how many days back (default 7)")
        parser.add_argument("--json", action="store_true", help="one JSON object per event, newest first")

    def handle(self, *args: object, **options: object) -> None:
        days = options["days"]
        if not isinstance(days, int) or days < 1:
            raise InvalidInput("--days must be 1 or more")
        credential = audit.credential_for(str(options["credential"])) if options["credential"] else None
        events = audit.audit_events(days=days, credential=credential, agent=options["agent"])
        labels = audit.credential_labels(event.credential for event in events)
        if options["json"]:
            for event in events:
                self.stdout.write(json.dumps(audit.event_json(event, labels)))
            return
        if not events:
            self.stderr.write(f"No memory changes recorded in the last {days} days for this selection.")
            return
        totals: dict[str | None, dict[str, int]] = {}
        for event in events:
            counts = totals.setdefault(event.credential, {})
            counts[event.action] = counts.get(event.action, 0) + 1
        self.stdout.write(f"Last {days} days, per credential:")
        for cred, counts in totals.items():
            said = ", ".join(f"{n} {action}" for action, n in sorted(counts.items()))
            self.stdout.write(f"  {_credential(cred, labels):40}  {said}")
        self.stdout.write("")
        self.stdout.write(f"{'AT (UTC)':19}  {'ACTION':10}  {'MEMORY':36}  {'AGENT':20}  CREDENTIAL")
        for event in events:
            self.stdout.write(
                f"{event.at:%Y-%m-%d %H:%M:%S}  {event.action:10}  {event.memory_id!s:36}  "
                f"{event.agent[:20]:20}  {_credential(event.credential, labels)}"
            )


def _credential(credential: str | None, labels: dict[str, str]) -> str:
    if credential is None:
        return "- (owner, stdio or worker)"
    return f"{labels.get(credential, credential)} ({credential})"
