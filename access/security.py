"""Security events as JSON lines (logger `kenfold.security`): who, which client, what happened.

Never a password, a token or a code: callers pass identifiers (client id, grant id, remote address) only.
"""

import logging

log = logging.getLogger("kenfold.security")


def security_event(event: str, /, **fields: object) -> None:
    log.warning("oauth %s", event, extra={"event": event, **fields})
