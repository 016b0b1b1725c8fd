"""A learned order for the first stage's best candidates, without a cross-encoder (spec §1.7).

The first stage finds the answer more often than it puts it in the top 10: on LoCoMo 86.5% of evidence
turns are in some ranking's top 50, 68.6% in some top 10 (docs/benchmarks.md). Fusion by rank alone
cannot tell a memory that the full-text search ranks 2nd because it repeats one rare word of the
question from one that shares every word of it. This model reads more than ranks: per candidate, its
place in each ranking, its fused score, how much of the question it contains, its script against the
question's, its length, type and age; a logistic regression turns them into the probability that the
memory answers the question, and the candidates are reordered by it.

The weights (``memories.search.ranker_weights``) are trained by ``bench/train_ranker.py`` on data that is none
of our evaluation sets, and are small enough to read. Scoring 50 candidates is a few hundred
multiplications, a few substring searches each and one query for their texts. Off by default
(KENFOLD_SEARCH_LEARNED_RANK=true turns it on): it lifts LoCoMo's held-out conversations but loses on
bench/data/dev.json, whose paraphrases share no word with their answers (docs/benchmarks.md).
"""

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

from memories.search import ranker_weights, ranking
from memories.search.lexical import korean_stem
from memories.search.ranking import Ranking

# What the model reads of each candidate, in the order of ranker_weights' numbers. Not the memory's age:
# in the training conversations older turns answered more questions, which says nothing about a store.
FEATURES = (
    "lexical",
    "english",
    "multilingual",
    "recent",
    "feedback",
    "fused",
    "fused_place",
    "rankings_share",
    "overlap",
    "cross_script",
    "length",
    "episodic",
    "temporary",
)
if ranker_weights.FEATURES != FEATURES:
    raise ImportError(
        "memories/search/ranker_weights.py does not match learned_rank.FEATURES; run bench/train_ranker.py"
    )

# Reciprocal ranks in the features use a fixed constant, so the weights stay valid whatever
# KENFOLD_SEARCH_RRF_K is.
FEATURE_K = 3
DEPTH = 50
_WORD = re.compile(r"[^\W_]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# Words every question has; they say nothing about a memory containing them.
_QUESTION_WORDS = frozenset(
    """
    a an the and or but of to in on at by for with from is are was were be been do does did have has had
    i me my we our you your he she it its they them their this that what which who whom when where why how
    can could should would will any some did does about into than then there here so if not no yes
    뭐 뭐야 뭐지 어떻게 어디 언제 왜 누가 무엇 무슨 어느
    """.split()
)
# A word matches another when they share this many leading characters (or are equal when shorter):
# "retries" finds "retried", "deploys" finds "deployment", without a stemmer.
_PREFIX = 5


@dataclass(frozen=True)
class Candidate:
    """What the model reads of one memory besides its ranks."""

    content: str
    type: str


def _keys(query: str) -> set[str]:
    """The question's words as lowercase prefixes: "retries" -> "retri", a Korean word's stem's first two
    syllables. A memory contains a word when it contains the prefix (a substring test, so scoring 50
    candidates costs ~10 substring searches each, not a tokenization of every memory)."""
    keys = set()
    for word in _WORD.findall(query.lower()):
        if word in _QUESTION_WORDS or (len(word) < 2 and not word.isdigit()):
            continue
        keys.add(korean_stem(word)[:2] if _HANGUL.search(word) else word[:_PREFIX])
    return keys


def features(
    *,
    query: str,
    rankings: Sequence[Ranking],
    fused: dict[UUID, float],
    candidates: dict[UUID, Candidate],
) -> dict[UUID, list[float]]:
    """The FEATURES of each candidate, in that order."""
    places: dict[str, dict[UUID, int]] = {}
    for one in rankings:
        best = places.setdefault(one.kind, {})
        for rank, memory_id in enumerate(one.ids, 1):
            if rank < best.get(memory_id, DEPTH + 1):
                best[memory_id] = rank
    query_keys = _keys(query)
    query_non_latin = ranking.non_latin(query)
    order = sorted(fused, key=lambda memory_id: -fused[memory_id])
    fused_rank = {memory_id: rank for rank, memory_id in enumerate(order, 1)}
    count = max(1, len(rankings))
    out: dict[UUID, list[float]] = {}
    for memory_id, candidate in candidates.items():
        text = candidate.content.lower()
        memory_non_latin = ranking.non_latin(candidate.content)

        def place(kind: str, memory_id: UUID = memory_id) -> float:
            rank = places.get(kind, {}).get(memory_id)
            return 0.0 if rank is None else (FEATURE_K + 1) / (FEATURE_K + rank)

        values = {
            "lexical": place(ranking.LEXICAL),
            "english": place(ranking.ENGLISH_VECTORS),
            "multilingual": place(ranking.MULTILINGUAL_VECTORS),
            "recent": place(ranking.RECENT),
            "feedback": place(ranking.FEEDBACK),
            "fused": fused.get(memory_id, 0.0),
            "fused_place": 1.0 / fused_rank.get(memory_id, DEPTH + 1),
            "rankings_share": sum(memory_id in p for p in places.values()) / count,
            "overlap": sum(key in text for key in query_keys) / len(query_keys) if query_keys else 0.0,
            "cross_script": float(query_non_latin != memory_non_latin),
            "length": math.log1p(len(candidate.content)) / 8,
            "episodic": float(candidate.type == "episodic"),
            "temporary": float(candidate.type == "temporary"),
        }
        out[memory_id] = [values[name] for name in FEATURES]
    return out


def probabilities(vectors: dict[UUID, list[float]]) -> dict[UUID, float]:
    """The model's probability that each memory answers the question."""
    scored = {}
    for memory_id, vector in vectors.items():
        logit = ranker_weights.BIAS + sum(
            weight * (value - mean) / scale
            for weight, value, mean, scale in zip(
                ranker_weights.WEIGHTS, vector, ranker_weights.MEANS, ranker_weights.SCALES, strict=True
            )
        )
        scored[memory_id] = 1.0 / (1.0 + math.exp(-logit)) if logit > -500 else 0.0
    return scored
