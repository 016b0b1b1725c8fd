"""Scheduled jobs of the authorization server (django-q2)."""

import logging

from oauth.services import prune

log = logging.getLogger(__name__)


def prune_expired() -> dict[str, int]:
    """Hourly: expired codes and tokens, and clients that never completed a consent."""
    counts = prune()
    if any(counts.values()):
        log.info("oauth state pruned", extra=counts)
    return counts
