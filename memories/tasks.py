"""Background jobs run by the django-q2 worker (`python manage.py qcluster`)."""

import logging

from memories import providers
from memories.embedding_store import backfill
from memories.extraction import extraction_run

log = logging.getLogger(__name__)

BACKFILL_TASK = "memories.tasks.embeddings_backfill"


def embeddings_backfill() -> str:
    """Embed every live memory that lacks a current vector of the configured model.

    Scheduled every five minutes and at worker start; a memory whose embedding failed at write time
    (provider down, timeout) or that predates a model switch is picked up here.
    """
    embedders = providers.embedders()
    if not embedders:
        return "embeddings are off"
    lines = []
    for embedder in embedders:
        report = backfill(embedder=embedder)
        log.info(
            "embedding backfill",
            extra={"embedded": report.embedded, "failed": report.failed, "model": embedder.name},
        )
        lines.append(
            f"{embedder.name}: embedded {report.embedded}, failed {report.failed}, remaining {report.remaining}"
        )
    return "; ".join(lines)


EXTRACTION_TASK = "memories.tasks.extraction_drain"
# Below the worker's task timeout (Q_CLUSTER timeout, 600 s): one summary can take the chat client's
# full 3 minutes, and a drain that is cut off mid-summary would only waste that attempt.
EXTRACTION_BUDGET_SECONDS = 300


def extraction_drain() -> str:
    """Extract from every settled session summary that is due (scheduled every minute)."""
    if providers.chat_model() is None:
        return "no chat model (KENFOLD_CHAT_URL) is configured"
    report = extraction_run(limit=10_000, budget_seconds=EXTRACTION_BUDGET_SECONDS)
    return f"processed {report.processed}, stored {report.stored}, failed {report.failed}"
