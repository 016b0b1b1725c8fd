"""Turning a natural-language query into full-text search terms that find more than exact words.

The original ranker OR-ed the query's exact words: it missed Korean words whose particle differs
(`웹훅을` never matched `웹훅`), inflected English (`retries` vs `retry`) and identifiers written another
way (`refresh session` vs `refreshSession`). Here each query word becomes:
- for the `simple` index (exact lexemes, paths, identifiers, Korean): the word itself, plus, for Korean,
  its stem with trailing particles and verb endings removed, matched as a prefix (`정산금:*` finds
  `정산금은`, `정산금이`);
- for the `english` index (stemmed, identifiers split): the English words, which PostgreSQL stems and
  whose stop words it drops.
Terms are reduced to letters and digits before they reach to_tsquery, so no query can inject tsquery
syntax.
"""

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[\w./@-]+")
_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
# Korean written straight after a Latin word (`challenge는`) is two words.
_SCRIPT_RUN = re.compile(r"[\uac00-\ud7a3]+|[^\uac00-\ud7a3]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_PATHLIKE = re.compile(r"^[\w-]+(?:[./][\w-]+)+$")

# Particles and verb endings that glue onto Korean words, longest first so `에서는` goes before `는`.
_KOREAN_SUFFIXES = sorted(
    """
    은 는 이 가 을 를 의 에 에서 에게 께 한테 로 으로 와 과 도 만 까지 부터 보다 처럼 이나 나 랑 이랑 요 야
    에서는 에는 으로는 로는 에도 에서도 이라 라 이라고 라고 이란 란 이고 고 이며 며 이면 면 인 인가 인지 인데
    해 해서 해야 했 했다 했어 했지 했나 하는 하면 한 할 하고 하기 합니다 해요 하지 함 됨 돼 돼요 됐 됐다 된 될 되는
    되면 되고 된다 됩니다 지 죠 까 나요 어요 아요 습니다 있다 있어 있나 없어 없다 거야 건가 건지 는지 을까 ㄹ까
    """.split(),
    key=len,
    reverse=True,
)
_KOREAN_SUFFIX_SET = frozenset(_KOREAN_SUFFIXES)
# Question and filler words that match everything in a memory store and rank nothing.
_KOREAN_STOPWORDS = frozenset(
    "뭐 뭐야 뭐지 어떻게 어디 어디서 언제 왜 누가 무엇 무슨 어느 지금 그리고 그래서 좀 이거 그거 저거".split()
)
_ENGLISH_STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto about as is are was were be been
    being do does did done have has had having i me my we our you your he she it its they them their this that
    these those what which who whom whose when where why how can could should would will shall may might must
    not no yes so than too very just also there here any some all each every both either neither other such
    only own same more most less least up down out over under again further once again get got make made use
    used using
    """.split()
)
MAX_TERMS = 32
# What memories.search.crosslang reads of the candidates' words, the same way as the full-text query.
ENGLISH_STOPWORDS = _ENGLISH_STOPWORDS
KOREAN_STOPWORDS = _KOREAN_STOPWORDS
KOREAN_SUFFIXES = _KOREAN_SUFFIX_SET


def _is_hangul(word: str) -> bool:
    return bool(_HANGUL.search(word))


def korean_stem(word: str) -> str:
    """`정산금은` → `정산금`, `지급돼` → `지급`: strip one trailing particle or ending, keeping 2+ syllables."""
    for suffix in _KOREAN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


@dataclass(frozen=True)
class LexicalQuery:
    simple_terms: tuple[str, ...]  # each a to_tsquery('simple', …) operand
    english_terms: tuple[str, ...]  # each a to_tsquery('english', …) operand


def build_query(text: str) -> LexicalQuery:
    simple: dict[str, None] = {}  # ordered sets
    english: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        token = token.strip("./@-")
        if not token:
            continue
        lowered = token.lower()
        if _PATHLIKE.match(token) and ("/" in token or "." in token):
            # A path or dotted name is one lexeme in the simple index (`src/lib/auth.ts`).
            simple[_quote(lowered)] = None
        words = [run for word in _WORD.findall(token) for run in _SCRIPT_RUN.findall(word)]
        for word in words:
            parts = [word, *_CAMEL.split(word)] if _CAMEL.search(word) else [word]
            for part in parts:
                lowered = part.lower()
                term = _simple_term(lowered)
                if term is None:
                    continue
                simple[term] = None
                if lowered.isascii() and lowered.isalpha() and len(lowered) >= 2:
                    english[lowered] = None
    return LexicalQuery(
        simple_terms=tuple(list(simple)[:MAX_TERMS]), english_terms=tuple(list(english)[:MAX_TERMS])
    )


def _simple_term(word: str) -> str | None:
    """The `simple` to_tsquery operand of one lowercased word; None for a stop word or a bare particle."""
    if _is_hangul(word):
        if word in _KOREAN_STOPWORDS or word in _KOREAN_SUFFIX_SET:
            return None
        return _stem_term(korean_stem(word))
    return None if word in _ENGLISH_STOPWORDS else _quote(word)


def _stem_term(stem: str) -> str:
    # A Korean stem as a prefix also covers the word as written (`정산금` finds `정산금은`).
    return _quote(stem) + (":*" if len(stem) >= 2 else "")


def _quote(term: str) -> str:
    # Terms hold letters, digits and path punctuation only (the regexes above), never quotes or
    # operators; quoting keeps `.`, `/` and `@` inside one lexeme.
    return "'" + term.replace("'", "") + "'"


# Feedback words: three letters or more (shorter ones are mostly fillers the stop list misses).
_FEEDBACK_WORD = re.compile(r"[^\W\d_]{3,}")


def feedback_words(query: str, documents: list[tuple[str, float]]) -> dict[str, float]:
    """Words of `documents` ((text, score) pairs) that the query does not already search for, each with
    the sum over documents of the document's score times the word's share of its words (RM3's relevance
    model). Korean words are reduced to their stems."""
    own = set(build_query(query).simple_terms)
    weights: dict[str, float] = {}
    for text, score in documents:
        words = []
        for word in _FEEDBACK_WORD.findall(text):
            for run in _SCRIPT_RUN.findall(word.lower()):
                hangul = _is_hangul(run)
                term = _simple_term(run)
                if term is None or term in own or (not hangul and len(run) < 3):
                    continue
                words.append(korean_stem(run) if hangul else run)
        # In first-seen order, not a set's: the order breaks ties between equal weights, and a set's
        # order changes with each process's hash seed (the same store would answer differently).
        for word in dict.fromkeys(words):
            weights[word] = weights.get(word, 0.0) + score * words.count(word) / len(words)
    return weights


def word_term(word: str) -> str:
    """The `simple` to_tsquery operand build_query makes of one word (a Korean stem as a prefix)."""
    return _stem_term(word) if _is_hangul(word) else _quote(word)
