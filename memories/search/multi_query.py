"""Recall with several phrasings of one question (`queries`): each runs through the whole retrieval
pipeline, and the answers are fused by Reciprocal Rank Fusion.

For agents that ask the same thing in several words or languages: a memory that several phrasings find
rises, one that a single phrasing finds still comes back. Measured on the retrieval sets
(bench/multi_query_eval.py, docs/benchmarks.md).
"""

from collections.abc import Callable

from memories.schemas import MemoryView

MIN_QUERIES = 2
MAX_QUERIES = 5
# The usual RRF constant for fusing whole result lists (Cormack et al.): ranks differ little (1/61 for a
# first place, 1/80 for a twentieth), so agreement between phrasings counts more than one phrasing's order.
RRF_K = 60
# How deep each phrasing's answer is read: a memory that every phrasing ranks just below the limit
# should still be able to beat one that a single phrasing ranks first.
MIN_DEPTH = 20


def fuse_answers(answers: list[list[MemoryView]], *, limit: int, k: int = RRF_K) -> list[MemoryView]:
    """One ranking from each phrasing's answer, best first; each memory once, scored in (0, 1] (1.0:
    first for every phrasing)."""
    fused: dict[str, float] = {}
    first_seen: dict[str, MemoryView] = {}
    for answer in answers:
        for rank, view in enumerate(answer, start=1):
            fused[view.id] = fused.get(view.id, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(view.id, view)
    best = len(answers) / (k + 1)
    ordered = sorted(fused, key=lambda memory_id: (-fused[memory_id], memory_id))[:limit]
    views = []
    for memory_id in ordered:
        view = first_seen[memory_id]
        view.score = round(min(fused[memory_id] / best, 1.0), 6)
        views.append(view)
    return views


def retrieve_many(
    *, queries: list[str], limit: int, retrieve_one: Callable[[str, int], list[MemoryView]]
) -> list[MemoryView]:
    """Each phrasing through `retrieve_one(query, depth)`, fused."""
    depth = max(limit, MIN_DEPTH)
    return fuse_answers([retrieve_one(query, depth) for query in queries], limit=limit)
