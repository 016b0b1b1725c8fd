"""Background jobs run by the django-q2 worker (`python manage.py qcluster`)."""

import logging

from memories import providers
from memories.embedding_store import backfill

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
