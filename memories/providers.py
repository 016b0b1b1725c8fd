"""The process's model providers (embedders, reranker, chat model), built once from settings.EMBEDDING,
RERANK and CHAT.

Built lazily: commands that never search do not load the ONNX model. The settings themselves are
parsed and checked at start (kenfold.settings). Changing either setting (a test's `settings` fixture,
override_settings) drops the built providers, so the next call builds them from the new values.
"""

import threading

from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

from kenfold_common.errors import InvalidInput
from memories.chat import ChatModel, chat_from_settings
from memories.embeddings import Embedder
from memories.embeddings.config import embedders_from_settings
from memories.rerank import Reranker, reranker_from_settings

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
