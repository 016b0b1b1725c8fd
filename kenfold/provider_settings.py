"""The model providers' settings (embeddings, rerank, chat: the KENFOLD_EMBED, KENFOLD_RERANK_URL and
KENFOLD_CHAT_URL families), parsed and checked.

kenfold.settings builds ``EMBEDDING``, ``RERANK`` and ``CHAT`` with these functions while it loads, so a bad
value stops the process before it serves anything: read lazily on first use, ``KENFOLD_EMBED=locl``
passed `check`, `serve` and /readyz, and the first remember stored its memory and then reported an error.
Free of Django, so that a test can rebuild a value from changed variables through the same rules.
The clients are built from these values (memories.embeddings.config, memories.rerank).
"""

import os
from dataclasses import dataclass, field

from kenfold_common.env import ConfigError, env_choice, env_int, env_str, env_url

EMBED_LOCAL_MODES = ("local", "local-english", "local-multilingual")
# http+local: the HTTP model first (the primary, whose vectors also find similar memories), then both
# local models, each its own ranking in the fusion.
EMBED_HTTP_MODES = ("http", "http+local")
EMBED_MODES = (*EMBED_LOCAL_MODES, *EMBED_HTTP_MODES, "off")
MAX_EMBED_PREFIX = 200
DEFAULT_EMBED_MODEL = "bge-m3"
# pgvector's vector type holds at most 16,000 dimensions.
MAX_EMBED_DIMENSIONS = 16_000
DEFAULT_RERANK_MODEL = "bge-reranker-v2-m3"
DEFAULT_CHAT_MODEL = "qwen3.5:4b"
# The chat client's reasoning_effort (spec §1.12); "omit" leaves the field out of the request.
CHAT_REASONING = ("none", "minimal", "low", "medium", "high", "omit")


@dataclass(frozen=True)
class EmbeddingSettings:
    """KENFOLD_EMBED*: which embedders run. ``url``, ``model``, ``name``, ``api_key`` and ``dimensions``
    apply to mode http, ``threads`` to the local modes."""

    mode: str
    threads: int
    url: str
    model: str
    name: str
    # Kept out of repr: settings values end up in tracebacks and debug output.
    api_key: str = field(repr=False)
    dimensions: int | None
    # Asymmetric models (e5, nomic, instruction-tuned bge) embed a question and a passage differently:
    # a text put before each side, and/or a field of the request naming the side (input_type).
    query_prefix: str = ""
    passage_prefix: str = ""
    input_type: tuple[str, str] | None = None


@dataclass(frozen=True)
class RerankSettings:
    """KENFOLD_RERANK_URL/MODEL/API_KEY: the reranker, off when ``url`` is empty."""

    url: str
    model: str
    api_key: str = field(repr=False)


@dataclass(frozen=True)
class ChatSettings:
    """KENFOLD_CHAT_URL/MODEL/API_KEY/REASONING: the chat model, none when ``url`` is empty."""

    url: str
    model: str
    api_key: str = field(repr=False)
    reasoning: str


def embedding_from_env() -> EmbeddingSettings:
    """KENFOLD_EMBED is ``local`` (the default: both local models, MiniLM first), ``local-english``
    (MiniLM only), ``local-multilingual`` (the Universal Sentence Encoder only), ``http`` (the default when
    KENFOLD_EMBED_URL is set) or ``off`` (full-text search only). Every variable is checked whatever the
    mode, so a typo is found before the day it would matter. Raises ``ConfigError``."""
    url = env_url("KENFOLD_EMBED_URL")
    mode = env_choice("KENFOLD_EMBED", "http" if url else "local", EMBED_MODES)
    if mode in EMBED_LOCAL_MODES and url:
        raise ConfigError(
            f"KENFOLD_EMBED={mode} but KENFOLD_EMBED_URL is set; unset one of them "
            "(KENFOLD_EMBED=http, or no KENFOLD_EMBED, uses the URL)"
        )
    if mode in EMBED_HTTP_MODES and not url:
        raise ConfigError(
            f"KENFOLD_EMBED={mode} needs KENFOLD_EMBED_URL, the API base URL of an OpenAI-compatible embedding "
            "server, for example http://127.0.0.1:11434/v1"
        )
    return EmbeddingSettings(
        mode=mode,
        threads=env_int("KENFOLD_EMBED_THREADS", 1, minimum=1, maximum=64),
        url=url,
        model=env_str("KENFOLD_EMBED_MODEL", DEFAULT_EMBED_MODEL),
        name=env_str("KENFOLD_EMBED_NAME"),
        api_key=env_str("KENFOLD_EMBED_API_KEY"),
        # 0 stands for "not set": env_int checks the range only of values that are set.
        dimensions=env_int("KENFOLD_EMBED_DIMENSIONS", 0, minimum=1, maximum=MAX_EMBED_DIMENSIONS) or None,
        query_prefix=_env_prefix("KENFOLD_EMBED_QUERY_PREFIX"),
        passage_prefix=_env_prefix("KENFOLD_EMBED_PASSAGE_PREFIX"),
        input_type=_env_input_type("KENFOLD_EMBED_INPUT_TYPE"),
    )


def _env_prefix(name: str) -> str:
    """A text put before every input of one side, read as written: "query: " keeps its trailing space,
    which e5 was trained with (other variables are stripped)."""
    value = os.environ.get(name, "")
    if not value.strip():
        return ""
    if len(value) > MAX_EMBED_PREFIX:
        raise ConfigError(
            f"{name} is longer than {MAX_EMBED_PREFIX} characters; give the model's short prefix"
        )
    if any(ord(char) < 32 and char != "\n" for char in value):
        raise ConfigError(f"{name} contains a control character; give plain text, such as 'query: '")
    return value


def _env_input_type(name: str) -> tuple[str, str] | None:
    """QUERY,PASSAGE: the input_type values a server expects for each side (query,passage for e5 servers,
    search_query,search_document for Cohere-style APIs); unset, no input_type field is sent."""
    value = env_str(name)
    if not value:
        return None
    parts = [part.strip() for part in value.split(",")]
    if (
        len(parts) != 2
        or not all(parts)
        or any(not part.replace("_", "").replace("-", "").isalnum() for part in parts)
    ):
        raise ConfigError(
            f"{name} must be two names separated by a comma, the query's then the passage's "
            "input_type, for example query,passage or search_query,search_document"
        )
    return parts[0], parts[1]


def rerank_from_env() -> RerankSettings:
    return RerankSettings(
        url=env_url("KENFOLD_RERANK_URL"),
        model=env_str("KENFOLD_RERANK_MODEL", DEFAULT_RERANK_MODEL),
        api_key=env_str("KENFOLD_RERANK_API_KEY"),
    )


def chat_from_env() -> ChatSettings:
    return ChatSettings(
        url=env_url("KENFOLD_CHAT_URL"),
        model=env_str("KENFOLD_CHAT_MODEL", DEFAULT_CHAT_MODEL),
        api_key=env_str("KENFOLD_CHAT_API_KEY"),
        reasoning=env_choice("KENFOLD_CHAT_REASONING", "none", CHAT_REASONING),
    )
