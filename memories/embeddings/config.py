"""Which embedders the KENFOLD_EMBED* variables describe."""

from kenfold_common.env import ConfigError, env_choice, env_int, env_str, env_url
from memories.embeddings import MAX_DIMENSIONS, Embedder
from memories.embeddings.minilm import LocalMiniLMEmbedder
from memories.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memories.embeddings.use import LocalUSEEmbedder

DEFAULT_HTTP_MODEL = "bge-m3"
LOCAL_MODES = ("local", "local-english", "local-multilingual")


def embedders_from_settings() -> list[Embedder]:
    """Every embedder the KENFOLD_EMBED* variables describe, the primary one first (empty when off).

    KENFOLD_EMBED is ``local`` (the default: both local models, MiniLM first), ``local-english`` (MiniLM
    only), ``local-multilingual`` (the Universal Sentence Encoder only), ``http`` (the default when
    KENFOLD_EMBED_URL is set) or ``off`` (full-text search only). Bad or contradictory values raise
    ``ConfigError``.

    The two local models are each their own ranking in the fusion: MiniLM ranks English paraphrases best
    and reads nothing else; the multilingual model finds a Korean memory for an English question and the
    reverse (docs/benchmarks.md: dev.json R@5 0.933 with MiniLM alone, 0.962 with both).
    """
    url = env_url("KENFOLD_EMBED_URL")
    mode = env_choice("KENFOLD_EMBED", "http" if url else "local", (*LOCAL_MODES, "http", "off"))
    if mode == "off":
        return []
    if mode in LOCAL_MODES:
        if url:
            raise ConfigError(
                f"KENFOLD_EMBED={mode} but KENFOLD_EMBED_URL is set; unset one of them "
                "(KENFOLD_EMBED=http, or no KENFOLD_EMBED, uses the URL)"
            )
        threads = env_int("KENFOLD_EMBED_THREADS", 1, minimum=1, maximum=64)
        if mode == "local-multilingual":
            return [LocalUSEEmbedder(threads=threads)]
        if mode == "local-english":
            return [LocalMiniLMEmbedder(threads=threads)]
        return [LocalMiniLMEmbedder(threads=threads), LocalUSEEmbedder(threads=threads)]
    return [_http_embedder(url)]


def _http_embedder(url: str | None) -> Embedder:
    if not url:
        raise ConfigError(
            "KENFOLD_EMBED=http needs KENFOLD_EMBED_URL, the API base URL of an OpenAI-compatible embedding "
            "server, for example http://127.0.0.1:11434/v1"
        )
    return OpenAICompatibleEmbedder(
        url=url,
        model=env_str("KENFOLD_EMBED_MODEL", DEFAULT_HTTP_MODEL),
        name=env_str("KENFOLD_EMBED_NAME"),
        api_key=env_str("KENFOLD_EMBED_API_KEY"),
        # 0 stands for "not set": env_int checks the range only of values that are set.
        dimensions=env_int("KENFOLD_EMBED_DIMENSIONS", 0, minimum=1, maximum=MAX_DIMENSIONS) or None,
    )
