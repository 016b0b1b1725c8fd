"""The process's model providers (embedder, reranker), built once from the environment.

Built lazily: commands that never search do not load the ONNX model. `reset()` drops them so tests and
the evaluation harness can switch configuration through the same environment variables users set.
"""

import threading

from memories.embeddings import Embedder
from memories.embeddings.config import embedders_from_settings
from memories.rerank import Reranker, reranker_from_env

_lock = threading.Lock()
_loaded = False
_embedders: list[Embedder] = []
_reranker: Reranker | None = None


def _load() -> None:
    global _loaded, _embedders, _reranker
    with _lock:
        if not _loaded:
            _embedders = embedders_from_settings()
            _reranker = reranker_from_env()
            _loaded = True


def embedders() -> list[Embedder]:
    """Every configured embedder, the primary first (its vectors also find remember's similar memories);
    search ranks by each of them."""
    if not _loaded:
        _load()
    return list(_embedders)


def reranker() -> Reranker | None:
    if not _loaded:
        _load()
    return _reranker


def reset() -> None:
    global _loaded, _embedders, _reranker
    with _lock:
        _loaded, _embedders, _reranker = False, [], None
