"""The retrieval pipeline behind recall and get_context's `relevant` (spec §1.7).

1. First stage: lexical and vector rankings fused by Reciprocal Rank Fusion into a pool.
2. With a reranker: graph expansion (derived facts, their summary, sibling facts), then a cross-encoder
   scores the best candidates. If it fails, the first-stage order is kept, without graph neighbours.
3. Signals: stale code references, recency intent, and (only with calibrated rerank scores) the aging
   of session summaries.
Scores end in (0, 1]: the reranker's probability, or the fused score (1.0 = first in every ranker).
"""

import logging
import math
import re
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db import connection

from kenfold import clock
from memories import extensions
from memories.models import CodeState, Memory, MemoryType
from memories.presenters import memory_view
from memories.providers import configured
from memories.providers.embeddings import Embedder
from memories.providers.rerank import RerankError
from memories.schemas import MemoryView
from memories.search import crosslang, fulltext, learned_rank, ranking
from memories.search.graph import graph_neighbors
from memories.search.hits import WHOLE_TEXT, Hit, candidate_texts, memories_by_id
from memories.search.lexical import feedback_words
from memories.search.ranking import Ranking
from memories.search.recent import recent_memories
from memories.search.vector import vector_hits

log = logging.getLogger(__name__)

MIN_RANKER_DEPTH = 50
# Vector rankings are read less deep than the lexical one. A filtered HNSW scan costs in proportion to the
# rows it must return (30 cost 65% of 50 at 100,000 memories), and with RRF k = 3 a memory found only at
# rank 31-50 of one model adds under a tenth of what rank 1 does: it never reached a top 10.
MIN_VECTOR_DEPTH = 30
GRAPH_SEEDS = 8
GRAPH_NEIGHBOR_LIMIT = 50
GRAPH_SEED_WEIGHT = 0.5
GRAPH_BOOST = 0.1
RECENCY_HALF_LIFE = timedelta(days=7)
SUMMARY_HALF_LIFE = timedelta(days=30)
SUMMARY_MAX_AGING = 0.4
MIN_SCORE = 1e-6
RECENT_RANKING_DEPTH = 10
RECENT_RANKING_WEIGHT = 1.0
# Ranking multipliers (spec §1.7) by the memory's code state: a memory about code that is gone keeps 5% of
# its score, one about a symbol that changed keeps 60%.
STALENESS_FACTORS = {CodeState.MISSING: 0.05, CodeState.CHANGED: 0.6}
# Pseudo-relevance feedback (RM3-like): the words that the best first-stage memories use beyond the
# question's own, weighted by the memory's fused score and the word's share of it, times idf, are searched
# again as one more lexical ranking (weight RETRIEVAL["feedback_weight"]). A question rarely names every
# word of its answer ("how do we avoid charging twice?" against "duplicate charges are dropped by the
# event id"), but its best matches often share them ("the webhook retries; payments stay idempotent on the
# event id"). Candidates are the FEEDBACK_CANDIDATES most frequent words, so that only those need a
# document-frequency lookup. By default ("auto") it runs only when no vector ranking does (KENFOLD_EMBED=off,
# or every embedder failed): there it lifts dev.json R@5 0.817 -> 0.839 and R@10 0.841 -> 0.895; beside the
# vectors it adds little (R@5 +0.003 dev, R@10 +0.014 LoCoMo) for a second lexical search after the first
# stage (10-25 ms), so "always" is a choice, not the default.
FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 10
FEEDBACK_CANDIDATES = 2 * FEEDBACK_TERMS
# An English-only model reads a Korean question as noise; beside a multilingual model its ranking of
# such a question would only push unrelated memories up (consensus in the fusion), so it is left out.
FOREIGN_SCRIPT_WEIGHT = 0.0

# "last-write-wins" is not about recent work, hence the hyphen guard after English words.
_RECENT_ENGLISH = re.compile(
    r"\b(?:most recent|recently|recent|latest|last|previous|yesterday|today|this week|this morning|lately|just now)\b(?!-)",
    re.IGNORECASE,
)
_RECENT_KOREAN = re.compile(r"최근|지난\s?번|지난\s?세션|저번|마지막|어제|오늘|방금|요즘|최신|이번\s?주")


def has_recency_intent(query: str) -> bool:
    return bool(_RECENT_ENGLISH.search(query) or _RECENT_KOREAN.search(query))


@dataclass(frozen=True)
class SearchOptions:
    """Switches for ablations (the evaluation harness) and the clock for scoring."""

    vectors: bool = True
    graph: bool = True
    recency: bool = True
    staleness: bool = True
    rerank: bool = True
    field_weights: bool = True
    learned_rank: bool = True
    now: datetime | None = None
    #: When a list, each search appends its learned-rank features ({memory id: values}) to it: the
    #: training data of bench/train_ranker.py, computed exactly as search computes them.
    trace: list | None = None


@dataclass
class _Candidate:
    memory_id: UUID
    first: float = 0.0  # fused first-stage score
    graph: float = 0.0  # value carried over graph edges from seeds
    score: float = 0.0
    reranked: bool = False
    seeds: set[UUID] = field(default_factory=set)


# A query embedding that is not cached (CPU in onnxruntime or numpy, or an HTTP call) runs here, beside the
# lexical search: both release the GIL while they work or wait, so a search costs the longest of them
# instead of their sum. Under load, only the embedding: the vector searches then run on the request's own
# connection, which costs no pool checkout (two more per search when each ran in its thread with a
# connection of its own: a round trip to check each and a slot in the pool, while the CPU is the limit
# anyway). A search alone in its process runs each vector search in the thread too, on a pooled connection
# of the thread's, beside the lexical search: the CPU has room then, and a lone agent waits the longest of
# the three searches instead of their sum (at 100,000 memories, 2026-12-02: docs/benchmarks.md).
_EMBED_THREADS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="kenfold-embed")
_running_lock = threading.Lock()
_running = 0


@contextmanager
def _search_slot(requests_running: Callable[[], int] | None = None) -> Iterator[bool]:
    """Counts the searches running in this process; yields whether this one is alone (no other search,
    and, where the server's admission gate runs, no other request at work past it: `requests_running`,
    which counts this search's own request too)."""
    global _running
    with _running_lock:
        _running += 1
        alone = _running == 1 and (requests_running is None or requests_running() <= 1)
    try:
        yield alone
    finally:
        with _running_lock:
            _running -= 1


def _vector_ranking(
    *,
    embedder: Embedder,
    vector: list[float],
    scopes: list[str],
    types: list[str] | None,
    now: datetime,
    limit: int,
    text_chars: int | None,
    history: bool,
) -> list[Hit]:
    """Nearest memories to the query's vector."""
    config = settings.RETRIEVAL
    return vector_hits(
        vector=vector,
        model=embedder.name,
        scopes=scopes,
        types=types,
        now=now,
        limit=limit,
        max_distance=config["max_distance"] or embedder.max_distance,
        text_chars=text_chars,
        history=history,
    )


def _vector_ranking_in_thread(
    *, embedder: Embedder, query: str, vector: list[float] | None, arguments: dict
) -> list[Hit] | None:
    """Embed the query if its vector is not cached, then search on this thread's own connection, which
    goes back to the pool at the end (the next search may run on another thread)."""
    try:
        vector = vector if vector is not None else configured.query_vector(embedder, query)
        return None if vector is None else _vector_ranking(embedder=embedder, vector=vector, **arguments)
    finally:
        connection.close()


@dataclass(frozen=True)
class _Request:
    """One retrieval's question and its fixed terms, read by every stage."""

    query: str
    scopes: list[str]
    types: list[str] | None
    limit: int
    options: SearchOptions
    now: datetime
    history: bool  # `now` is a past time (as_of): search among the memories served then
    config: dict  # settings.RETRIEVAL, read once per retrieval
    # The admission gate's count (see retrieve); None where no gate runs.
    requests_running: Callable[[], int] | None = None

    @property
    def depth(self) -> int:
        """How deep the lexical rankings are read."""
        return max(MIN_RANKER_DEPTH, 4 * self.limit)


@dataclass(frozen=True)
class _Plan:
    """What the first stage will run, decided before any query: the vector rankings with their weights, and
    what the steps after the fusion will read of the candidates (so the rankers send it with what they find)."""

    weighted: list[tuple[Embedder, float]]
    text_chars: int | None  # the text the rankers send with each hit (0: none; WHOLE_TEXT: all)
    whole: bool  # a later step reads candidates' whole texts
    learned: bool  # the learned order runs
    bridge_possible: bool  # the bridge ranking across scripts may run
    recency: bool  # the question asks about recent work


def retrieve(
    *,
    query: str,
    scopes: list[str],
    types: list[str] | None,
    limit: int,
    options: SearchOptions | None = None,
    as_of: datetime | None = None,
    requests_running: Callable[[], int] | None = None,
) -> list[MemoryView]:
    """The `limit` best served memories of `scopes` for `query`. With `as_of` (a past time), among the
    memories served then, scored as they would have been then (recency counts from `as_of`).

    The stages, in order: plan the rankers; run them (the first stage); fuse their rankings; correct
    the fusion across scripts; the learned order; rerank a pool of the best; score with the signals;
    shape the views.

    `requests_running` is the admission gate's count of the requests at work in this process, passed by
    the HTTP server's adapters (None where no gate runs: stdio, commands, the job worker). It decides only
    whether the search may take extra connections to run its parts side by side; the answer is the same."""
    options = options or SearchOptions()
    request = _Request(
        query=query,
        scopes=scopes,
        types=types,
        limit=limit,
        options=options,
        now=as_of or options.now or clock.now(),
        history=as_of is not None,
        config=settings.RETRIEVAL,
        requests_running=requests_running,
    )
    plan = _plan(request)
    rankings, carried = _first_stage(request, plan)
    fused = _fuse(request, plan, rankings)
    if not fused:
        return []
    fused, texts = _cross_language(request, plan, rankings, fused=fused, carried=carried)
    fused = _learned_order(request, plan, rankings, fused=fused, texts=texts)
    candidates, rows = _rerank_pool(request, fused=fused, carried=carried)
    facts: dict[UUID, Memory | Hit] = {**carried, **rows}
    scores = _scores(request, plan, candidates=candidates, facts=facts)
    return _shape(request, candidates=candidates, scores=scores, facts=facts, rows=rows)


def _plan(request: _Request) -> _Plan:
    """Takes the request; gives the vector rankings to run, each with its weight in the fusion, and what
    the rankers must send of each memory they find."""
    query, config, options = request.query, request.config, request.options
    embedders = configured.embedders() if options.vectors else []
    # The primary model's ranking has the configured weight, a companion model's its own. Beside a
    # multilingual model, an English-only model's ranking of a question in another script is left out.
    foreign = ranking.has_non_latin(query) and any(e.multilingual for e in embedders)
    weighted = [
        (embedder, weight)
        for index, embedder in enumerate(embedders)
        if (
            weight := (config["vector_weight"] if index == 0 else config["companion_weight"])
            * (FOREIGN_SCRIPT_WEIGHT if foreign and not embedder.multilingual else 1.0)
            * crosslang.script_factor(
                query, multilingual=embedder.multilingual, factor=config["script_weight"]
            )
        )
        > 0
    ]
    # What the steps after the fusion will read of the candidates (the cross-language steps need a
    # multilingual ranking): the rankers send it with what they find.
    multilingual_possible = any(embedder.multilingual for embedder, _weight in weighted)
    learned = config["learned_rank"] and options.learned_rank
    bridge_possible = (
        multilingual_possible and config["bridge_weight"] > 0 and crosslang.reads_question(query)
    )
    whole = bridge_possible or learned or options.trace is not None
    wanted = whole or (multilingual_possible and config["cross_language"] > 0)
    return _Plan(
        weighted=weighted,
        text_chars=0 if not wanted else WHOLE_TEXT if whole else ranking.SCRIPT_SAMPLE,
        whole=whole,
        learned=learned,
        bridge_possible=bridge_possible,
        recency=options.recency and has_recency_intent(query),
    )


def _first_stage(request: _Request, plan: _Plan) -> tuple[list[Ranking], dict[UUID, Hit]]:
    """Takes the request and the plan; gives the lexical ranking and each vector ranking that ran (a model
    that could not embed the query gives none), and the hits they found, by memory id."""
    query, scopes, types, now, history = (
        request.query,
        request.scopes,
        request.types,
        request.now,
        request.history,
    )
    arguments = {
        "scopes": scopes,
        "types": types,
        "now": now,
        "limit": max(MIN_VECTOR_DEPTH, 3 * request.limit),
        "text_chars": plan.text_chars,
        "history": history,
    }
    cached = [configured.cached_query_vector(embedder, query) for embedder, _weight in plan.weighted]
    with _search_slot(request.requests_running) as alone:
        # Another connection cannot see the caller's uncommitted writes: inside a transaction, search in it.
        beside = alone and not connection.in_atomic_block

        def start(embedder: Embedder, vector: list[float] | None) -> Future | list[float] | None:
            """Beside: the whole vector ranking in a thread. Else only a missing embedding."""
            if beside:
                return _EMBED_THREADS.submit(
                    _vector_ranking_in_thread,
                    embedder=embedder,
                    query=query,
                    vector=vector,
                    arguments=arguments,
                )
            return (
                vector
                if vector is not None
                else _EMBED_THREADS.submit(configured.query_vector, embedder, query)
            )

        pending = [
            start(embedder, vector) for (embedder, _weight), vector in zip(plan.weighted, cached, strict=True)
        ]
        lexical = fulltext.lexical_hits(
            query=query,
            scopes=scopes,
            types=types,
            now=now,
            limit=request.depth,
            field_weights=request.options.field_weights,
            text_chars=plan.text_chars,
            history=history,
        )
        nearest: list[list[Hit] | None] = []
        for (embedder, _weight), waiting in zip(plan.weighted, pending, strict=True):
            done = waiting.result() if isinstance(waiting, Future) else waiting
            if beside:
                nearest.append(done)  # the thread's ranking (None: the query could not be embedded)
            else:
                nearest.append(
                    None if done is None else _vector_ranking(embedder=embedder, vector=done, **arguments)
                )
    carried = {hit.memory_id: hit for hit in lexical}
    rankings = [Ranking(ranking.LEXICAL, [hit.memory_id for hit in lexical], 1.0)]
    for (embedder, weight), found in zip(plan.weighted, nearest, strict=True):
        if found is not None:
            kind = ranking.MULTILINGUAL_VECTORS if embedder.multilingual else ranking.ENGLISH_VECTORS
            rankings.append(Ranking(kind, [hit.memory_id for hit in found], weight))
            carried.update((hit.memory_id, hit) for hit in found)
    return rankings, carried


def _fuse(request: _Request, plan: _Plan, rankings: list[Ranking]) -> dict[UUID, float]:
    """Takes the first stage's rankings (and adds to them the recency ranking for a question about recent
    work, then the feedback ranking when it runs); gives their Reciprocal Rank Fusion, {memory id: score}."""
    config, options = request.config, request.options
    feedback = config["feedback"] == "always" or (config["feedback"] == "auto" and len(rankings) == 1)
    if plan.recency:
        # Questions about recent work rarely share words with the newest sessions that answer them.
        recent = recent_memories(
            scopes=request.scopes,
            types=request.types,
            now=request.now,
            limit=RECENT_RANKING_DEPTH,
            history=request.history,
        )
        rankings.append(Ranking(ranking.RECENT, recent, RECENT_RANKING_WEIGHT))
    fused = ranking.fuse(rankings, k=config["rrf_k"])
    if not fused:
        return fused
    if feedback and config["feedback_weight"] > 0:
        expansion = _feedback_query(request.query, fused)
        if expansion:
            hits = fulltext.lexical_search(
                query=expansion,
                scopes=request.scopes,
                types=request.types,
                now=request.now,
                limit=request.depth,
                field_weights=options.field_weights,
                history=request.history,
            )
            rankings.append(Ranking(ranking.FEEDBACK, hits, config["feedback_weight"]))
            fused = ranking.fuse(rankings, k=config["rrf_k"])
    return fused


def _cross_language(
    request: _Request,
    plan: _Plan,
    rankings: list[Ranking],
    *,
    fused: dict[UUID, float],
    carried: dict[UUID, Hit],
) -> tuple[dict[UUID, float], dict[UUID, learned_rank.Candidate]]:
    """Takes the fusion; gives it corrected across scripts (the bridge ranking, added to `rankings`, and
    the fusion that discounts a ranking blind to a memory's script), with the candidates' texts that
    these steps and the learned order read (none when neither runs)."""
    config, query = request.config, request.query
    # Only a multilingual ranking reads across scripts; without one, no ranking could have found a memory
    # the others are blind to, and there is nothing to correct.
    multilingual = any(one.kind == ranking.MULTILINGUAL_VECTORS for one in rankings)
    cross_language = config["cross_language"] if multilingual else 0.0
    if not ranking.non_latin(query):
        cross_language *= ranking.LATIN_QUESTION_SHARE
    bridge = config["bridge_weight"] if multilingual and plan.bridge_possible else 0.0
    texts: dict[UUID, learned_rank.Candidate] = {}
    if cross_language > 0 or bridge > 0 or plan.learned or request.options.trace is not None:
        texts = _candidates(list(fused), carried=carried, whole=plan.whole)
        if bridge > 0:
            _add_bridge(rankings, query=query, texts=texts, weight=bridge)
        if cross_language > 0:
            fused = ranking.fuse(
                rankings, k=config["rrf_k"], blind=_blind(query, texts), cross_language=cross_language
            )
        elif bridge > 0:
            fused = ranking.fuse(rankings, k=config["rrf_k"])
    return fused, texts


def _learned_order(
    request: _Request,
    plan: _Plan,
    rankings: list[Ranking],
    *,
    fused: dict[UUID, float],
    texts: dict[UUID, learned_rank.Candidate],
) -> dict[UUID, float]:
    """Takes the fusion; gives the learned model's probabilities for its best candidates when the learned
    order is on, else the fusion unchanged (a trace records the model's features either way)."""
    options, limit = request.options, request.limit
    if plan.learned or options.trace is not None:
        top = sorted(fused, key=lambda memory_id: -fused[memory_id])[: max(learned_rank.DEPTH, limit)]
        vectors = learned_rank.features(
            query=request.query,
            rankings=rankings,
            fused=fused,
            candidates={memory_id: texts[memory_id] for memory_id in top if memory_id in texts},
        )
        if options.trace is not None:
            options.trace.append(vectors)
        if plan.learned:
            fused = learned_rank.probabilities(vectors)
    return fused


def _rerank_pool(
    request: _Request, *, fused: dict[UUID, float], carried: dict[UUID, Hit]
) -> tuple[dict[UUID, _Candidate], dict[UUID, Memory]]:
    """Takes the fusion; gives the pool of its best candidates, each with its score: with a reranker, the
    pool grown by graph expansion and the cross-encoder's probabilities; without one, the fused scores.
    Also gives the memories read on the way (whole rows), by id."""
    config, options, limit = request.config, request.options, request.limit
    pool_ids = sorted(fused, key=lambda memory_id: -fused[memory_id])[: max(config["pool"], limit)]
    candidates = {memory_id: _Candidate(memory_id, first=fused[memory_id]) for memory_id in pool_ids}
    reranker = configured.reranker() if options.rerank else None
    rows: dict[UUID, Memory] = {}
    if reranker is not None:
        if options.graph:
            _expand_graph(
                candidates,
                scopes=request.scopes,
                types=request.types,
                now=request.now,
                history=request.history,
            )
        rows = memories_by_id(list(candidates))
        _rerank(
            reranker,
            request.query,
            candidates,
            rows,
            top=config["rerank_top"],
            timeout=config["rerank_timeout"],
        )
    else:
        for candidate in candidates.values():
            candidate.score = candidate.first
        # The multipliers read what the rankers sent; whole rows are read for the memories returned.
        missing = [memory_id for memory_id in candidates if memory_id not in carried]
        if missing:
            rows = memories_by_id(missing)
    return candidates, rows


def _scores(
    request: _Request, plan: _Plan, *, candidates: dict[UUID, _Candidate], facts: dict[UUID, Memory | Hit]
) -> dict[UUID, float]:
    """Takes the pool and what is known of each candidate; gives each one's final score in (0, 1]: its
    score times the signals' multipliers (stale code references, recency)."""
    options = request.options
    scores: dict[UUID, float] = {}
    for candidate in candidates.values():
        fact = facts.get(candidate.memory_id)
        if fact is None:
            continue
        score = candidate.score
        if options.staleness:
            score *= STALENESS_FACTORS.get(fact.code_state, 1.0)
        if options.recency:
            score *= _recency_factor(fact, now=request.now, intent=plan.recency, reranked=candidate.reranked)
        scores[candidate.memory_id] = round(
            MIN_SCORE if not math.isfinite(score) or score <= 0 else min(score, 1.0), 6
        )
    return scores


def _shape(
    request: _Request,
    *,
    candidates: dict[UUID, _Candidate],
    scores: dict[UUID, float],
    facts: dict[UUID, Memory | Hit],
    rows: dict[UUID, Memory],
) -> list[MemoryView]:
    """Takes the scored pool; gives the `limit` best as views, reranked ones first, then by score, then
    newest first, with what the other apps add to a view (memories.extensions)."""

    def order(memory_id: UUID) -> tuple:
        return (
            not candidates[memory_id].reranked,
            -scores[memory_id],
            -facts[memory_id].created_at.timestamp(),
        )

    returned = sorted(scores, key=order)[: request.limit]
    rows |= memories_by_id([memory_id for memory_id in returned if memory_id not in rows])
    views = [
        memory_view(rows[memory_id], score=scores[memory_id]) for memory_id in returned if memory_id in rows
    ]
    return extensions.views_presented(views)


def _candidates(
    ids: list[UUID], *, carried: dict[UUID, Hit], whole: bool
) -> dict[UUID, learned_rank.Candidate]:
    """What the cross-language step and the learned order read of each candidate: what the rankers sent
    with it, and one query for the others (found by the recency or feedback rankings). Without `whole`,
    only the beginning of its text (all the script check reads): ~150 candidates' whole texts cost a
    third of this query's time to send and parse."""
    texts = {
        memory_id: learned_rank.Candidate(content=hit.text, type=hit.type)
        for memory_id in ids
        if (hit := carried.get(memory_id)) is not None
    }
    missing = [memory_id for memory_id in ids if memory_id not in texts]
    if missing:
        rows = candidate_texts(missing, chars=WHOLE_TEXT if whole else ranking.SCRIPT_SAMPLE)
        texts |= {
            memory_id: learned_rank.Candidate(content=content, type=kind) for memory_id, content, kind in rows
        }
    return texts


def _add_bridge(
    rankings: list[Ranking], *, query: str, texts: dict[UUID, learned_rank.Candidate], weight: float
) -> None:
    """The bridge ranking across scripts (memories.search.crosslang), from the texts already fetched."""
    ids = crosslang.bridge_ranking(
        query=query, texts={memory_id: candidate.content for memory_id, candidate in texts.items()}
    )
    if ids:
        rankings.append(Ranking(ranking.BRIDGE, ids, weight))


def _blind(query: str, candidates: dict[UUID, learned_rank.Candidate]) -> dict[UUID, frozenset[str]]:
    """For each memory, the kinds of ranking that cannot read it for ``query`` (ranking.blind_rankings)."""
    query_non_latin = ranking.non_latin(query)
    return {
        memory_id: ranking.blind_rankings(
            query_non_latin=query_non_latin, memory_non_latin=ranking.non_latin(candidate.content)
        )
        for memory_id, candidate in candidates.items()
    }


def _feedback_query(query: str, fused: dict[UUID, float]) -> str:
    """The feedback words of the FEEDBACK_DOCS best first-stage memories, best first, as a query."""
    top = sorted(fused, key=lambda memory_id: -fused[memory_id])[:FEEDBACK_DOCS]
    rows = Memory.objects.only("id", "content").in_bulk(top)
    weights = feedback_words(query, [(rows[m].content, fused[m]) for m in top if m in rows])
    candidates = sorted(weights, key=lambda word: -weights[word])[:FEEDBACK_CANDIDATES]
    idfs = fulltext.word_idfs(candidates)
    ranked = sorted(idfs, key=lambda word: -weights[word] * idfs[word])
    return " ".join(ranked[:FEEDBACK_TERMS])


def _expand_graph(
    candidates: dict[UUID, _Candidate],
    *,
    scopes: list[str],
    types: list[str] | None,
    now: datetime,
    history: bool,
) -> None:
    """Bring in memories one edge from the best candidates: a summary brings its facts, a fact its summary
    and sibling facts. They enter with half of their seed's score and lift existing candidates a little."""
    seeds = sorted(candidates.values(), key=lambda c: -c.first)[:GRAPH_SEEDS]
    seed_scores = {seed.memory_id: seed.first for seed in seeds}
    neighbors = graph_neighbors(
        seeds=list(seed_scores),
        scopes=scopes,
        types=types,
        now=now,
        limit=GRAPH_NEIGHBOR_LIMIT,
        history=history,
    )
    for neighbor_id, seed_id in neighbors:
        candidate = candidates.setdefault(neighbor_id, _Candidate(neighbor_id))
        candidate.graph = max(candidate.graph, seed_scores[seed_id] * GRAPH_SEED_WEIGHT)
        candidate.seeds.add(seed_id)
    for candidate in candidates.values():
        candidate.score = (
            candidate.first + GRAPH_BOOST * candidate.graph if candidate.first else candidate.graph
        )


def _rerank(
    reranker, query: str, candidates: dict[UUID, _Candidate], rows: dict, *, top: int, timeout: float
) -> None:
    ordered = sorted(candidates.values(), key=lambda c: -c.score)
    head = [c for c in ordered if c.memory_id in rows][:top]
    try:
        scores = reranker.rerank(query, [rows[c.memory_id].content for c in head], timeout=timeout)
    except RerankError:
        log.warning("rerank failed; keeping the first-stage order", exc_info=True)
        scores = None
    if scores is None or len(scores) != len(head):
        # Without calibrated scores, graph neighbours and their boosts would reorder too much: drop them.
        for memory_id in [c.memory_id for c in candidates.values() if c.first == 0]:
            del candidates[memory_id]
        for candidate in candidates.values():
            candidate.score, candidate.reranked = candidate.first, False
        return
    for candidate, probability in zip(head, scores, strict=True):
        candidate.score, candidate.reranked = probability, True


def _recency_factor(memory: Memory | Hit, *, now: datetime, intent: bool, reranked: bool) -> float:
    age = max(timedelta(0), now - memory.created_at)
    if intent:
        return 2 ** -(age / RECENCY_HALF_LIFE)
    if reranked and memory.type == MemoryType.EPISODIC:
        return 1 - SUMMARY_MAX_AGING * (1 - 2 ** -(age / SUMMARY_HALF_LIFE))
    return 1.0
