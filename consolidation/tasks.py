"""The consolidation worker's job (django-q2, scheduled every 15 minutes by migration 0002)."""

import logging

from consolidation.services import consolidation_enabled, consolidation_run
from kenfold_common.errors import Unavailable

log = logging.getLogger(__name__)

CONSOLIDATION_TASK = "consolidation.tasks.consolidation_tick"


def consolidation_tick() -> str:
    """One run: judge up to 4 pairs and write at most one digest (spec §1.14)."""
    if not consolidation_enabled():
        return "consolidation is off (KENFOLD_CONSOLIDATE=false, or no KENFOLD_CHAT_URL)"
    try:
        report = consolidation_run(wait_for_extraction=True)
    except Unavailable as exc:
        # Retried at the next tick; what this run judged before the outage is kept.
        log.warning("consolidation run ended early", extra={"error": str(exc)})
        return str(exc)
    if report.skipped:
        return f"skipped: {report.skipped}"
    return f"judged {report.judged} pairs; {report.proposed} new proposals; {report.stale} stale"
