"""Reranker client: a cross-encoder's relevance probability for each candidate (spec §1.7).

Speaks the rerank APIs people run: llama.cpp's ``llama-server --reranking``, Jina, Cohere, Voyage and
Hugging Face TEI, all behind POST {base}/rerank. Scores come back as probabilities in [0, 1] in input
order; servers that answer raw logits (llama.cpp does) are mapped through a sigmoid. Every failure,
a timeout or a malformed answer included, raises ``RerankError``: the search pipeline then keeps its
first-stage order, so a wrong answer must never pass as a ranking.
"""

import math
import time
from collections.abc import Sequence

from kenfold.provider_settings import DEFAULT_RERANK_MODEL, RerankSettings
from memories.providers.embeddings.endpoint import ProviderEndpoint, ProviderError, ProviderVariables

# The pipeline's budget for one rerank call; the request itself never waits longer than the client
# timeout, whatever a caller passes.
RERANK_TIMEOUT = 4.0
REQUEST_TIMEOUT = 10.0
MAX_QUERY_CHARS = 500
MAX_DOCUMENT_CHARS = 600
MAX_RESPONSE_BYTES = 1024 * 1024


class RerankError(ProviderError):
    """The reranker gave no usable scores; keep the first-stage order."""


class Reranker:
    """POST {base}/rerank {model, query, documents, top_n}; one probability per document, in order."""

    def __init__(self, *, url: str, model: str = DEFAULT_RERANK_MODEL, api_key: str = "") -> None:
        self.model = model
        self._endpoint = ProviderEndpoint(
            url,
            "rerank",
            api_key=api_key,
            variables=ProviderVariables(
                "KENFOLD_RERANK_URL", "KENFOLD_RERANK_API_KEY", "KENFOLD_RERANK_MODEL"
            ),
            what="the reranker",
            error=RerankError,
            max_response_bytes=MAX_RESPONSE_BYTES,
        )
        # TEI's native /rerank takes `texts` where everyone else takes `documents`, and Cohere refuses
        # unknown fields, so no single request suits both: TEI's 422 naming `texts` switches this
        # client to TEI's shape for good (one extra round trip per process).
        self._tei = False

    def rerank(self, query: str, documents: Sequence[str], *, timeout: float = RERANK_TIMEOUT) -> list[float]:
        if not documents:
            return []
        query = query[:MAX_QUERY_CHARS]
        texts = [document[:MAX_DOCUMENT_CHARS] for document in documents]
        texts = [text if text.strip() else " " for text in texts]
        deadline = time.monotonic() + timeout
        if not self._tei:
            payload = {"model": self.model, "query": query, "documents": texts, "top_n": len(texts)}
            try:
                return _scores(
                    self._endpoint.post(payload, timeout=min(REQUEST_TIMEOUT, timeout)), len(texts)
                )
            except RerankError as exc:
                if exc.status != 422 or "texts" not in exc.body:
                    raise
                self._tei = True
        left = deadline - time.monotonic()
        if left <= 0:
            raise self._endpoint.timeout_error(timeout)
        tei_payload = {"query": query, "texts": texts, "truncate": True}
        return _scores(self._endpoint.post(tei_payload, timeout=min(REQUEST_TIMEOUT, left)), len(texts))


def _scores(body: object, count: int) -> list[float]:
    if isinstance(body, list):  # TEI: [{"index", "score"}]
        items = body
    elif isinstance(body, dict) and isinstance(body.get("results"), list):  # llama.cpp, Jina, Cohere
        items = body["results"]
    elif isinstance(body, dict) and isinstance(body.get("data"), list):  # Voyage
        items = body["data"]
    else:
        raise RerankError(
            'the reranker answered JSON without results (expected a list, {"results": [...]} or '
            '{"data": [...]}); check that KENFOLD_RERANK_URL is a rerank API base URL'
        )
    if len(items) != count:
        raise RerankError(f"the reranker returned {len(items)} scores for {count} documents")
    scores: list[float | None] = [None] * count
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count:
            raise RerankError(f"the reranker returned index {index!r}; expected indexes 0 to {count - 1}")
        if scores[index] is not None:
            raise RerankError(f"the reranker returned index {index} twice")
        score = item.get("relevance_score", item.get("score"))
        # bool is an int subclass; `true` is not a score.
        if type(score) not in (int, float) or not math.isfinite(score):
            raise RerankError(
                f"the reranker returned score {score!r} for document {index}; expected a finite number"
            )
        scores[index] = float(score)
    checked = [score for score in scores if score is not None]
    # Probabilities stay in [0, 1]; one score outside means the server sends raw logits (llama.cpp's
    # bge-reranker does), and they are mapped together so the order is kept.
    if any(not 0.0 <= score <= 1.0 for score in checked):
        return [_sigmoid(score) for score in checked]
    return checked


def _sigmoid(logit: float) -> float:
    # Split by sign so that exp never overflows on large logits.
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    exp = math.exp(logit)
    return exp / (1.0 + exp)


def reranker_from_settings(*, rerank: RerankSettings) -> Reranker | None:
    """The reranker of ``rerank`` (settings.RERANK), or None when reranking is off (no URL)."""
    if not rerank.url:
        return None
    return Reranker(url=rerank.url, model=rerank.model, api_key=rerank.api_key)
