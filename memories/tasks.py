"""Background jobs run by the django-q2 worker (`python manage.py qcluster`)."""

import logging

from kenfold import clock
from kenfold.db_functions import one_at_a_time
from memories import extensions
from memories.capture.extraction import extraction_run
from memories.providers import configured
from memories.providers.embeddings import Embedder
from memories.search.embedding_store import backfill
from memories.search.scope_indexes import build_scope_indexes
from memories.usage import usage_prune

log = logging.getLogger(__name__)

BACKFILL_TASK = "memories.tasks.embeddings_backfill"


def embeddings_backfill() -> str:
    """Embed every live memory that lacks a current vector of the configured model, then build the
    per-scope vector indexes that are missing (memories.search.scope_indexes).

    Scheduled every five minutes and at worker start; a memory whose embedding failed at write time
    (provider down, timeout) or that predates a model switch is picked up here.
    """
    embedders = configured.embedders()
    if not embedders:
        extensions.retrieval_changed(extensions.VECTORS_CURRENT)
        return "embeddings are off"
    # One run at a time across every worker: a run longer than the interval (a model switch at a million
    # memories) would otherwise meet the next one on another worker and pay to embed the same rows twice.
    with one_at_a_time(BACKFILL_TASK) as alone:
        if not alone:
            return "another worker is running the embedding backfill"
        return _backfill(embedders)


def _backfill(embedders: list[Embedder]) -> str:
    lines = []
    remaining = 0
    for embedder in embedders:
        report = backfill(embedder=embedder)
        remaining += report.remaining
        if report.embedded or report.failed:  # an idle worker runs this every five minutes: no news, no line
            log.info(
                "embedding backfill",
                extra={"embedded": report.embedded, "failed": report.failed, "model": embedder.name},
            )
        lines.append(
            f"{embedder.name}: embedded {report.embedded}, failed {report.failed}, remaining {report.remaining}"
        )
    if not remaining:
        # Each run says so, whether or not it embedded anything: a switch back to a model whose vectors
        # were kept needs no embedding, and is a switch all the same.
        extensions.retrieval_changed(extensions.VECTORS_CURRENT)
    # After the vectors are written, so a scope that just grew past the thresholds gets its graph now.
    indexes = build_scope_indexes()
    if indexes.busy:
        lines.append("per-scope vector indexes: another process is building them")
    else:
        left = f", {indexes.left} left for the next run" if indexes.left else ""
        lines.append(f"per-scope vector indexes: built {indexes.built}, {indexes.present} present{left}")
    return "; ".join(lines)


EXTRACTION_TASK = "memories.tasks.extraction_drain"
# Below the worker's task timeout (Q_CLUSTER timeout, 600 s): one summary can take the chat client's
# full 3 minutes, and a drain that is cut off mid-summary would only waste that attempt.
EXTRACTION_BUDGET_SECONDS = 300


def extraction_drain() -> str:
    """Extract from every settled session summary that is due (scheduled every minute)."""
    if configured.chat_model() is None:
        return "no chat model (KENFOLD_CHAT_URL) is configured"
    report = extraction_run(limit=10_000, budget_seconds=EXTRACTION_BUDGET_SECONDS)
    return f"processed {report.processed}, stored {report.stored}, failed {report.failed}"


def usage_prune_old() -> str:
    """Delete served-answer records older than KENFOLD_USAGE_DAYS (scheduled hourly; memories.usage)."""
    deleted = usage_prune(now=clock.now())
    if deleted:
        log.info("usage records pruned", extra={"deleted": deleted})
    return f"deleted {deleted} usage records"
