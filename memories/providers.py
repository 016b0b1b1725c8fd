"""The process's model providers (embedders, reranker), built once from settings.EMBEDDING and RERANK.

Built lazily: commands that never search do not load the ONNX model. The settings themselves are
parsed and checked at start (kenfold.settings). Changing either setting (a test's `settings` fixture,
override_settings) drops the built providers, so the next call builds them from the new values.
"""

import threading

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from memories.embeddings import Embedder
from memories.embeddings.config import embedders_from_settings
from memories.rerank import Reranker, reranker_from_settings

_lock = threading.Lock()
_loaded = False
_embedders: list[Embedder] = []
_reranker: Reranker | None = None


def _load() -> None:
    global _loaded, _embedders, _reranker
    with _lock:
        if not _loaded:
            _embedders = embedders_from_settings(embedding=settings.EMBEDDING)
            _reranker = reranker_from_settings(rerank=settings.RERANK)
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


@receiver(setting_changed)
def _provider_setting_changed(*, setting: str, **kwargs: object) -> None:
    global _loaded, _embedders, _reranker
    if setting in ("EMBEDDING", "RERANK"):
        with _lock:
            _loaded, _embedders, _reranker = False, [], None
