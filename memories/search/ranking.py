"""The first stage's fusion: rankings of one question merged into one order (spec §1.7).

Each ranking (full-text, each embedder, the newest memories, the feedback search) is a list of memory ids,
best first, with a weight. Weighted Reciprocal Rank Fusion adds up w / (k + rank) per memory.

Cross-language fusion. A ranking that cannot read a memory's language says nothing about it: the English
MiniLM model reads Korean as noise, and full-text search cannot match a Korean question to an English
memory beyond the identifiers they share. Plain fusion counts that silence as a vote against the memory,
so a Korean session summary on the question's topic, found by full-text search and the multilingual
model, outranks the English rule that answers the question, found by the multilingual model alone. Here
each memory's sum is divided by the weight of the rankings that could have found it, counting a blind
ranking at ``1 - cross_language`` of its weight: 0 is plain fusion, 1 ignores blind rankings entirely.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from uuid import UUID

# Letters beyond Latin (Latin, its extensions and IPA end at U+02AF).
_NON_LATIN_LETTER = re.compile(r"[^\W\d_\u0000-\u02af]")
# Characters of other scripts, counted by range (fast): Greek to Ethiopic, the Indic and South-East Asian
# scripts, then kana, CJK and Hangul; general punctuation and symbols (U+2000-U+2BFF) are left out.
_OTHER_SCRIPT = re.compile(r"[\u0370-\u1fff\u3040-\ud7af\uf900-\ufaff]")
# A text is in another script when at least this share of its letters is (Hangul syllables carry more
# meaning per letter than Latin ones, so a Korean sentence with English identifiers stays Korean).
NON_LATIN_SHARE = 0.3
SCRIPT_SAMPLE = 200

LEXICAL = "lexical"
FEEDBACK = "feedback"
RECENT = "recent"
ENGLISH_VECTORS = "english"
MULTILINGUAL_VECTORS = "multilingual"
# Words of the other script, through the candidates that hold both (memories.search.crosslang): it ranks only
# memories in the other script than the question's, so it is blind to the question's own.
BRIDGE = "bridge"
# The rankings that match words, and so cannot match across scripts.
_WORD_RANKINGS = frozenset({LEXICAL, FEEDBACK})
# Share of the cross-language setting applied to questions in Latin script (English): their blind
# rankings are the stronger ones (MiniLM reads English best), so discounting them costs more. On dev.json
# at setting 0.5: share 0 gives R@5 0.963, 0.3 gives 0.967, 0.6 gives 0.963 (English paraphrases lose).
LATIN_QUESTION_SHARE = 0.3


@dataclass(frozen=True)
class Ranking:
    """One ranking of the first stage: memory ids best first, its kind and its weight in the fusion."""

    kind: str
    ids: Sequence[UUID]
    weight: float


def has_non_latin(text: str) -> bool:
    return _NON_LATIN_LETTER.search(text) is not None


def non_latin(text: str) -> bool:
    """Whether ``text`` is written mostly in a script other than Latin (Korean, say), judged on its
    beginning (a memory keeps to its language; counting every letter of long ones cost milliseconds)."""
    head = text[:SCRIPT_SAMPLE]
    if head.isascii():
        return False
    letters = sum(map(str.isalpha, head))
    return letters > 0 and len(_OTHER_SCRIPT.findall(head)) >= NON_LATIN_SHARE * letters


def blind_rankings(*, query_non_latin: bool, memory_non_latin: bool) -> frozenset[str]:
    """The kinds of ranking that cannot read a memory for this question."""
    blind: set[str] = set()
    if memory_non_latin:
        blind.add(ENGLISH_VECTORS)
    if memory_non_latin != query_non_latin:
        blind |= _WORD_RANKINGS
    else:
        blind.add(BRIDGE)
    return frozenset(blind)


def fuse(
    rankings: Sequence[Ranking],
    *,
    k: int,
    blind: dict[UUID, frozenset[str]] | None = None,
    cross_language: float = 0.0,
) -> dict[UUID, float]:
    """Weighted Reciprocal Rank Fusion, normalized so that first place in every ranking that can read a
    memory scores 1.0. ``blind`` maps a memory to the kinds of ranking that cannot read it (memories
    missing from it are readable by all)."""
    fused: dict[UUID, float] = {}
    for ranking in rankings:
        for rank, memory_id in enumerate(ranking.ids, 1):
            fused[memory_id] = fused.get(memory_id, 0.0) + ranking.weight / (k + rank)
    total = sum(ranking.weight for ranking in rankings)
    weights = {ranking.kind: 0.0 for ranking in rankings}
    for ranking in rankings:
        weights[ranking.kind] += ranking.weight
    scores: dict[UUID, float] = {}
    for memory_id, value in fused.items():
        unseen = blind.get(memory_id, frozenset()) if blind and cross_language > 0 else frozenset()
        readable = total - cross_language * sum(weights.get(kind, 0.0) for kind in unseen)
        scores[memory_id] = value * (k + 1) / max(1e-9, readable)
    return scores
