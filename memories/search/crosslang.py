"""A bridge between the question's language and the other one, mined from the candidates' own texts.

Memories mix scripts: a Korean memory names the English identifiers it is about (`production 잡을 when:
manual로`, `internal/pg/toss/webhook.go의 VerifySignature`). Such a memory is a small bilingual
dictionary: it says which Korean words go with an English term, and which English identifiers go with a
Korean word. An English question ("On which days can the shop API go to production?") shares no word
with the Korean rule that answers it (`운영 배포는 화요일·목요일 …`), but a Korean session summary that
says `production` also says `운영 배포`, and so bridges the two.

Here, for one question, the bridges are the first stage's candidates that contain a word of the question
and words of the other script; their other-script words, weighted by how much of the question the bridge
holds and by how rare the word is among the candidates, make an expanded question; the candidates written
in the other script are ranked by it. That ranking joins the fusion (ranking.BRIDGE), as full-text search
would if it could read across scripts. Only for English questions (NON_LATIN_QUESTIONS): from Korean
questions it bridged to the wrong English memories.

No SQL and no scan of the store: it reads only the texts the first stage already fetched for the
cross-language fusion (about 100 candidates), and each text's words are cached by content, so a repeated
candidate costs a dictionary lookup. Deterministic: ties break by memory id.

Also here, the other direction's cheaper remedy: script_factor weighs the multilingual model up for
questions in Korean, whose English answers only that model can read.
"""

import math
import re
from collections.abc import Mapping
from functools import lru_cache
from uuid import UUID

from memories.search import ranking
from memories.search.lexical import ENGLISH_STOPWORDS, KOREAN_STOPWORDS, KOREAN_SUFFIXES

_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")
MIN_LATIN = 3
MIN_HANGUL_STEM = 2
# How many candidates, best first, the bridge ranking holds.
DEPTH = 20
# The rarity of a word among the candidates, log(1 + n / df), is raised to this power: session summaries
# share their boilerplate (`세션 요약`, `브랜치`, `요청`, `최종 응답`), which must not bridge them to each
# other. On dev.json at weight 0.5: power 1 cross-en-ko R@5 0.935, power 2 0.957.
RARITY_POWER = 2
# Whether Korean (non-Latin) questions get the ranking too (English memories found through the English
# identifiers of the Korean candidates that hold the question's words). Off: on bench/data/dev.json at
# weight 0.5 it changes no R@5 but lowers cross-ko-en MRR@10 0.644 -> 0.602 and mixed 0.833 -> 0.750, and
# at 0.7-1.0 cross-ko-en R@5 falls to 0.955-0.864 (identifiers such as "API" bridge to everything).
NON_LATIN_QUESTIONS = False
# Texts whose words are remembered: ~3 KB each with their word sets, so ~12 MB per process at most.
CACHE_SIZE = 4096
_LONGEST_SUFFIX = max(map(len, KOREAN_SUFFIXES))


def _stem(word: str) -> str:
    """lexical.korean_stem by set lookups: the longest particle or ending that leaves 2+ syllables goes.
    The same stems; korean_stem tries each of ~100 endings in turn, which made this module's words
    of a Korean memory cost ~0.1 ms."""
    for size in range(min(_LONGEST_SUFFIX, len(word) - 2), 0, -1):
        if word[-size:] in KOREAN_SUFFIXES:
            return word[:-size]
    return word


@lru_cache(maxsize=CACHE_SIZE)
def words(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The Latin words (lowercased, 3+ letters, no stop words) and Korean stems (2+ syllables) of ``text``."""
    latin = frozenset(
        word
        for word in (match.lower() for match in _LATIN_WORD.findall(text))
        if len(word) >= MIN_LATIN and word not in ENGLISH_STOPWORDS
    )
    hangul = set()
    for run in _HANGUL_RUN.findall(text):
        if run in KOREAN_STOPWORDS or run in KOREAN_SUFFIXES:
            continue
        stem = _stem(run)
        if len(stem) >= MIN_HANGUL_STEM:
            hangul.add(stem)
    return latin, frozenset(hangul)


def _has(stems: frozenset[str], want: str) -> bool:
    """Whether a text's Korean stems hold the question's stem ``want`` (a stem matches a word it begins:
    `정산` finds `정산금`)."""
    return want in stems or any(stem.startswith(want) for stem in stems)


def reads_question(query: str) -> bool:
    """Whether the bridge ranks anything for this question (whether its candidates' texts are needed)."""
    return NON_LATIN_QUESTIONS or not ranking.non_latin(query)


def bridge_ranking(*, query: str, texts: Mapping[UUID, str]) -> list[UUID]:
    """The candidates written in the other script than ``query``'s, best first, by the other-script words
    they share with the candidates that contain the question's own words (the bridges)."""
    if not texts:
        return []
    query_latin, query_hangul = words(query)
    if not reads_question(query):
        return []
    query_non_latin = ranking.non_latin(query)
    own = query_hangul if query_non_latin else query_latin
    # The memories it may rank: none in the other script (an English-only store) and it costs nothing more.
    targets = {
        memory_id
        for memory_id, text in texts.items()
        if (query_non_latin or not text.isascii()) and ranking.non_latin(text) != query_non_latin
    }
    if not own or not targets:
        return []
    # In id order: float sums in a fixed order, so the same store always answers the same. For an English
    # question only texts with Korean in them can bridge or be ranked: the others are not read at all
    # (tokenizing every candidate cost ~2 ms a recall on the latency benchmark's corpus).
    vocabulary = {
        memory_id: words(texts[memory_id])
        for memory_id in sorted(texts)
        if query_non_latin or _HANGUL_RUN.search(texts[memory_id])
    }
    # How many candidates use each word of the other script: a word in most of them bridges nothing.
    frequency: dict[str, int] = {}
    for latin, hangul in vocabulary.values():
        for word in latin if query_non_latin else hangul:
            frequency[word] = frequency.get(word, 0) + 1
    total = len(texts)

    def rarity(word: str) -> float:
        return math.log(1 + total / frequency.get(word, total)) ** RARITY_POWER

    # Which candidates hold each of the question's words; a question word in many of them ("api") says
    # less about a bridge than a rare one ("production").
    holders = {
        want: [
            memory_id
            for memory_id, (latin, hangul) in vocabulary.items()
            if (_has(hangul, want) if query_non_latin else want in latin)
        ]
        for want in sorted(own)
    }
    weights = {want: math.log(1 + total / len(found)) for want, found in holders.items() if found}
    if not weights:
        return []
    whole = sum(weights.values())
    matched: dict[UUID, float] = {}
    for want, found in holders.items():
        for memory_id in found:
            matched[memory_id] = matched.get(memory_id, 0.0) + weights[want] / whole
    expansion: dict[str, float] = {}
    for memory_id in sorted(matched):
        latin, hangul = vocabulary[memory_id]
        other = latin if query_non_latin else hangul
        for word in sorted(other):
            expansion[word] = expansion.get(word, 0.0) + matched[memory_id] / len(other)
    if not expansion:
        return []
    scores: dict[UUID, float] = {}
    for memory_id in vocabulary:
        if memory_id not in targets:
            continue
        latin, hangul = vocabulary[memory_id]
        used = latin if query_non_latin else hangul
        # What the other bridges say of it: a bridge's own words would rank it first whatever question
        # word made it one, and the full-text ranking already credits it for that word.
        itself = matched.get(memory_id, 0.0) / len(used) if used else 0.0
        score = sum((expansion[word] - itself) * rarity(word) for word in used if word in expansion)
        if score > 0:
            scores[memory_id] = score
    return sorted(scores, key=lambda memory_id: (-scores[memory_id], memory_id))[:DEPTH]


def script_factor(query: str, *, multilingual: bool, factor: float) -> float:
    """How much more a multilingual model's ranking weighs for a question mostly in another script than
    Latin (Korean): beside it only full-text search runs (the English model is left out), and for such a
    question the full-text search cannot read the English memories that often answer it."""
    return factor if multilingual and factor != 1.0 and ranking.non_latin(query) else 1.0
