"""The embedders that the checked KENFOLD_EMBED* settings describe (settings.EMBEDDING)."""

from kenfold.provider_settings import EmbeddingSettings
from memories.providers.embeddings import Embedder
from memories.providers.embeddings.minilm import LocalMiniLMEmbedder
from memories.providers.embeddings.openai_compatible import OpenAICompatibleEmbedder
from memories.providers.embeddings.use import LocalUSEEmbedder


def embedders_from_settings(*, embedding: EmbeddingSettings) -> list[Embedder]:
    """Every embedder of ``embedding``, the primary one first (empty when off).

    The two local models are each their own ranking in the fusion: MiniLM ranks English paraphrases best
    and reads nothing else; the multilingual model finds a Korean memory for an English question and the
    reverse (docs/benchmarks.md: dev.json R@5 0.933 with MiniLM alone, 0.962 with both).
    """
    both_local: list[Embedder] = [
        LocalMiniLMEmbedder(threads=embedding.threads),
        LocalUSEEmbedder(threads=embedding.threads),
    ]  # cheap: each loads its model on first use
    match embedding.mode:
        case "off":
            return []
        case "local-english":
            return [LocalMiniLMEmbedder(threads=embedding.threads)]
        case "local-multilingual":
            return [LocalUSEEmbedder(threads=embedding.threads)]
        case "local":
            return both_local
        case "http+local":
            # The served model (bge-m3, say) is the primary; the local models stay as their own rankings,
            # so search keeps them when the server is down and their vectors need no new backfill.
            return [_http_embedder(embedding), *both_local]
    return [_http_embedder(embedding)]


def _http_embedder(embedding: EmbeddingSettings) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(
        url=embedding.url,
        model=embedding.model,
        name=embedding.name,
        api_key=embedding.api_key,
        dimensions=embedding.dimensions,
        query_prefix=embedding.query_prefix,
        passage_prefix=embedding.passage_prefix,
        input_type=embedding.input_type,
    )
