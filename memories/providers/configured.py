"""The process's model providers (embedders, reranker, chat model), built once from settings.EMBEDDING,
RERANK and CHAT.

Built lazily: commands that never search do not load the ONNX model. The settings themselves are
parsed and checked at start (kenfold.settings). Changing either setting (a test's `settings` fixture,
override_settings) drops the built providers, so the next call builds them from the new values.
"""

import array
import logging
import threading
from collections import OrderedDict

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from kenfold_common.errors import InvalidInput
from memories.providers.chat import ChatModel, chat_from_settings
from memories.providers.embeddings import Embedder, EmbeddingError
from memories.providers.embeddings.config import embedders_from_settings
from memories.providers.embeddings.minilm import LocalMiniLMEmbedder
from memories.providers.embeddings.use import LocalUSEEmbedder
from memories.providers.rerank import Reranker, reranker_from_settings

log = logging.getLogger(__name__)

QUERY_EMBED_TIMEOUT = 10.0
# Query vectors kept per process, by model name and text. Agents ask the same things again (get_context's
# task at the start of each session, a recall retried with the same words), and every search embeds its
# query with each model: with both local models that is about 8 ms of CPU, half of a recall's own work in
# the server (measured 2026-12-02; `git log -p docs/benchmarks.md`). A vector depends only on the model (the
# pinned file its name stands for) and the text, so a cached one is the vector the model would give.
# Bounded: 1,024 entries of up to 512 doubles per model, ~7 MB per process.
QUERY_VECTOR_CACHE_SIZE = 1024
_query_vectors: OrderedDict[tuple[str, str], array.array] = OrderedDict()
_query_vectors_lock = threading.Lock()

_lock = threading.Lock()
_loaded = False
_embedders: list[Embedder] = []
_reranker: Reranker | None = None
_chat: ChatModel | None = None


def _load() -> None:
    global _loaded, _embedders, _reranker, _chat
    with _lock:
        if not _loaded:
            _embedders = embedders_from_settings(embedding=settings.EMBEDDING)
            _reranker = reranker_from_settings(rerank=settings.RERANK)
            _chat = chat_from_settings(chat=settings.CHAT)
            _loaded = True


def embedders() -> list[Embedder]:
    """Every configured embedder, the primary first (its vectors also find remember's similar memories);
    search ranks by each of them."""
    if not _loaded:
        _load()
    return list(_embedders)


def cached_query_vector(embedder: Embedder, text: str) -> list[float] | None:
    """The vector of a query embedded before by this model, if still cached."""
    with _query_vectors_lock:
        vector = _query_vectors.get((embedder.name, text))
        if vector is None:
            return None
        _query_vectors.move_to_end((embedder.name, text))
    return vector.tolist()


def query_vector(embedder: Embedder, text: str) -> list[float] | None:
    """A search query's vector (cached), or None when the model failed: full-text results are still useful,
    and the embedder's own error, logged here, says what failed. Failures are not cached."""
    cached = cached_query_vector(embedder, text)
    if cached is not None:
        return cached
    try:
        vector = embedder.embed([text], timeout=QUERY_EMBED_TIMEOUT, side="query")[0]
    except EmbeddingError:
        log.warning("query embedding failed; searching without its vectors", exc_info=True)
        return None
    with _query_vectors_lock:
        _query_vectors[(embedder.name, text)] = array.array("d", vector)
        while len(_query_vectors) > QUERY_VECTOR_CACHE_SIZE:
            _query_vectors.popitem(last=False)
    return vector


def load_local_models() -> None:
    """Load the in-process embedding models now (1-3 s of CPU each), not in the first requests that need
    them: those would wait for the load, and under load every request behind them would too. Models
    served over HTTP are not called."""
    for embedder in embedders():
        if isinstance(embedder, LocalMiniLMEmbedder | LocalUSEEmbedder):
            query_vector(embedder, "warm up")


def reranker() -> Reranker | None:
    if not _loaded:
        _load()
    return _reranker


def chat_model() -> ChatModel | None:
    """The chat model of extraction and classification, or None when KENFOLD_CHAT_URL is unset."""
    if not _loaded:
        _load()
    return _chat


def required_chat_model(*, then: str) -> ChatModel:
    """The chat model, or an error telling the operator how to configure one and then to ``then``."""
    chat = chat_model()
    if chat is None:
        raise InvalidInput(
            "no chat model is configured: set KENFOLD_CHAT_URL (an OpenAI-compatible API base URL, for "
            f"example http://127.0.0.1:11434/v1) and KENFOLD_CHAT_MODEL, then {then}"
        )
    return chat


@receiver(setting_changed)
def _provider_setting_changed(*, setting: str, **kwargs: object) -> None:
    global _loaded, _embedders, _reranker, _chat
    if setting in ("EMBEDDING", "RERANK", "CHAT"):
        with _lock:
            _loaded, _embedders, _reranker, _chat = False, [], None, None
        # Another embedding server may give other vectors under the same model name (tests do).
        with _query_vectors_lock:
            _query_vectors.clear()
