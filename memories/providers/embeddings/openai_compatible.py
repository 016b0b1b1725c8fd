"""OpenAI-compatible HTTP embedding providers: POST {base}/embeddings."""

import math
import time
from collections.abc import Sequence

from memories.providers.embeddings import EmbeddingError, Side, deadline_left, prepare_input
from memories.providers.embeddings.endpoint import ProviderEndpoint, ProviderVariables

HTTP_BATCH_SIZE = 32
HTTP_REQUEST_TIMEOUT = 30.0
# 32 vectors of a few thousand floats are a few MB of JSON; anything far larger is not an embeddings
# answer (a wrong URL serving a file, say) and must not be buffered whole.
HTTP_MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class OpenAICompatibleEmbedder:
    """POST {base}/embeddings in batches of 32, with the answers checked before anyone stores them.

    ``dimensions``, when configured, is sent to the provider (models with Matryoshka or truncatable
    outputs honour it) and every vector must have it; otherwise the first answer fixes it and a later
    change is an error, since the model behind the URL changed without a new name.

    Asymmetric models embed a question and a passage differently: ``query_prefix``/``passage_prefix`` are
    put before each side's texts (e5's "query: "/"passage: "), and ``input_type`` names the side in the
    request for servers that add the model's prefixes themselves. Both change the vectors, so a change of
    either needs a new ``name`` (KENFOLD_EMBED_NAME) for the memories to be embedded again.
    """

    # The spec's cutoff, measured with bge-m3 (the usual model behind an HTTP provider).
    max_distance: float = 0.55
    multilingual: bool = True  # unknown; most served embedding models are

    def __init__(
        self,
        *,
        url: str,
        model: str,
        name: str = "",
        api_key: str = "",
        dimensions: int | None = None,
        query_prefix: str = "",
        passage_prefix: str = "",
        input_type: tuple[str, str] | None = None,
    ) -> None:
        self.model = model
        self.prefixes: dict[Side, str] = {"query": query_prefix, "passage": passage_prefix}
        self.input_types: dict[Side, str] | None = (
            {"query": input_type[0], "passage": input_type[1]} if input_type else None
        )
        self.name = name or model
        self.configured_dimensions = dimensions
        self.dimensions: int | None = dimensions
        self._endpoint = ProviderEndpoint(
            url,
            "embeddings",
            api_key=api_key,
            variables=ProviderVariables("KENFOLD_EMBED_URL", "KENFOLD_EMBED_API_KEY", "KENFOLD_EMBED_MODEL"),
            what="the embedding provider",
            error=EmbeddingError,
            max_response_bytes=HTTP_MAX_RESPONSE_BYTES,
        )

    def embed(self, texts: Sequence[str], *, timeout: float, side: Side = "passage") -> list[list[float]]:
        # The prefix comes after the cut, so that a long memory keeps it.
        inputs = [self.prefixes[side] + prepare_input(text) for text in texts]
        deadline = time.monotonic() + timeout
        vectors: list[list[float]] = []
        for start in range(0, len(inputs), HTTP_BATCH_SIZE):
            batch = inputs[start : start + HTTP_BATCH_SIZE]
            left = deadline_left(deadline, timeout, len(inputs), "the embedding provider")
            payload: dict[str, object] = {"model": self.model, "input": batch, "encoding_format": "float"}
            if self.configured_dimensions is not None:
                payload["dimensions"] = self.configured_dimensions
            if self.input_types is not None:
                payload["input_type"] = self.input_types[side]
            body = self._endpoint.post(payload, timeout=min(HTTP_REQUEST_TIMEOUT, left))
            vectors.extend(self._vectors(body, len(batch)))
        return vectors

    def _vectors(self, body: object, count: int) -> list[list[float]]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError(
                "the embedding provider answered JSON without a data list, so it is not an OpenAI-compatible "
                "/embeddings API; check KENFOLD_EMBED_URL"
            )
        if len(data) != count:
            raise EmbeddingError(f"the embedding provider returned {len(data)} vectors for {count} inputs")
        vectors: list[list[float] | None] = [None] * count
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            if type(index) is not int or not 0 <= index < count:
                raise EmbeddingError(
                    f"the embedding provider returned a vector with index {index!r}; "
                    f"expected indexes 0 to {count - 1}"
                )
            if vectors[index] is not None:
                raise EmbeddingError(f"the embedding provider returned index {index} twice")
            vectors[index] = _vector(item.get("embedding"))
        checked = [vector for vector in vectors if vector is not None]
        sizes = sorted({len(vector) for vector in checked})
        if len(sizes) > 1:
            raise EmbeddingError(
                f"the embedding provider returned vectors of mixed dimensions ({', '.join(map(str, sizes))})"
            )
        self._check_dimensions(sizes[0])
        return checked

    def _check_dimensions(self, size: int) -> None:
        if self.configured_dimensions is not None and size != self.configured_dimensions:
            raise EmbeddingError(
                f"the embedding provider returned {size}-dimensional vectors but KENFOLD_EMBED_DIMENSIONS="
                f"{self.configured_dimensions}; the model may ignore the dimensions parameter: unset "
                "KENFOLD_EMBED_DIMENSIONS or set it to the model's size"
            )
        if self.dimensions is None:
            self.dimensions = size
        elif size != self.dimensions:
            raise EmbeddingError(
                f"the embedding provider returned {size}-dimensional vectors after {self.dimensions}-dimensional "
                "ones: the model behind KENFOLD_EMBED_URL changed; give the new one its own KENFOLD_EMBED_NAME "
                "and restart, so that memories are re-embedded"
            )


def _vector(value: object) -> list[float]:
    if not isinstance(value, list) or not value:
        raise EmbeddingError(
            "the embedding provider returned an embedding that is not a list of numbers; it must accept "
            'encoding_format "float"'
        )
    for number in value:
        # bool is an int subclass: true/false in a vector is a broken answer, not 1 and 0.
        if type(number) not in (int, float):
            raise EmbeddingError(f"the embedding provider returned a vector containing {number!r}")
        if not math.isfinite(number):
            raise EmbeddingError(
                "the embedding provider returned a vector with a non-finite value (NaN or infinity)"
            )
    return [float(number) for number in value]
