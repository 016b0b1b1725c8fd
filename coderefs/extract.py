"""Find the files and code symbols a memory's text mentions (spec 1.9, server-side extraction).

The server cannot read repositories, so it only guesses from the text; clients later resolve each guess
against a checkout. A guess that never resolves is cheap (it ends ``unresolved`` and is hidden), but a wrong
guess that does resolve can mark a good memory stale, and every reference costs the sync client work inside
a 2 s budget. So the rules are conservative: paths need a known source extension, symbols need explicit
marking (backticks, ``name()``) or unmistakably code-like spelling.

Only ASCII takes part: any other character, such as a Korean particle written straight after a path, ends
a token. Every pattern here runs in linear time, because content can be 8000 characters of anything.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kenfold_common.coderefs import (
    CODE_EXTENSIONS,
    IDENTIFIER,
    SYMBOL_RE,
    file_extension,
    is_valid_ref_path,
    is_valid_ref_symbol,
)
from kenfold_common.identity import is_project_scope

_MAX_PATHS = 6
_MAX_SYMBOLS = 6
# Bound on stored rows per memory; 6 file refs + 6 symbol refs stay below it.
_MAX_REFS = 16
_MIN_SYMBOL_CHARS = 3
_MAX_BACKTICKED_CHARS = 120

REF_TYPES: frozenset[str] = frozenset({"project", "codebase", "semantic"})

# fmt: off
# Words that pass the symbol shape but are language keywords, placeholder names or brand spellings
# (GitHub, iPhone) that only look like camelCase.
_SYMBOL_STOPWORDS = frozenset(
    {
        "true", "false", "null", "nil", "none", "None", "True", "False", "undefined", "this", "self", "super",
        "main", "init", "new", "string", "int", "bool", "float", "byte", "error", "any", "void", "async",
        "await", "return", "import", "export", "default", "const", "var", "let", "func", "function", "def",
        "class", "struct", "interface", "type", "enum", "yield", "ok", "err", "ctx", "req", "res", "GitHub",
        "GitLab", "JavaScript", "TypeScript", "PostgreSQL", "MySQL", "MongoDB", "GraphQL", "OpenAI", "OAuth",
        "iPhone", "iPad", "macOS", "iOS", "YouTube", "LinkedIn", "PayPal", "WordPress", "DevOps", "NoSQL",
        "McDonald"
    }
)
# fmt: on

_TOKEN = re.compile(r"[A-Za-z0-9/._\-@+:#\[\]]+")
_TRAILING_PUNCTUATION = ".,:;!?"
_LINE_SUFFIX = re.compile(r"(?::\d+(?::\d+)?|#L\d+(?:-L\d+)?)\Z")

_BACKTICKED = re.compile(r"`([^`\n]*)`")
# The lookbehind keeps the tail of a longer name from matching alone: `a.b.c.d()` (three qualifiers) is not
# `b.c.d`, and `$()` shell or jQuery calls are skipped. It also rejects the tail of `Type::method()` and
# `Class#method()`, which the spec leaves open: a bare `method` is too vague to look up. And it makes a failed
# match cost one scan of the identifier run, not one per start position.
_CALL = re.compile(rf"(?<![A-Za-z0-9_.$:#])({IDENTIFIER}(?:\.{IDENTIFIER}){{0,2}})\(\)")
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_LOWERCASE = re.compile(r"[a-z]")
_TYPE_MEMBER = re.compile(r"[A-Z][A-Za-z0-9_]*\.")


@dataclass(frozen=True)
class ExtractedRef:
    """One file or symbol a memory mentions."""

    path: str  # "" for a path-less symbol
    symbol: str  # "" for a file-level reference


def refs_for_memory(*, memory_type: str, scope: str, content: str) -> list[ExtractedRef]:
    """References to store for a memory; only project knowledge scoped to a repository has any."""
    if memory_type not in REF_TYPES or not is_project_scope(scope):
        return []
    return extract_refs(content)


def extract_refs(text: str) -> list[ExtractedRef]:
    """Files and symbols mentioned in ``text``.

    Order: a file-level ref for every path, in order of first mention, then the symbols in order of first
    mention. With exactly one path each symbol is tied to it (the text most likely describes that file);
    otherwise symbols are path-less and the client searches the repository for them.
    """
    tokens = [(match.start(), match.group()) for match in _TOKEN.finditer(text)]
    paths = list(dict.fromkeys(path for _, token in tokens if (path := _path_from_token(token))))
    symbols = _symbols(text, tokens, paths)
    owner = paths[0] if len(paths) == 1 else ""
    refs = [ExtractedRef(path, "") for path in paths[:_MAX_PATHS]]
    refs += [ExtractedRef(owner, symbol) for symbol in symbols]
    return refs[:_MAX_REFS]


def _path_from_token(token: str) -> str | None:
    if "://" in token:
        return None
    path = token.rstrip(_TRAILING_PUNCTUATION)
    path = _LINE_SUFFIX.sub("", path, count=1).rstrip(_TRAILING_PUNCTUATION)
    path = path.removeprefix("./")
    return path if is_valid_ref_path(path) else None


def _symbols(text: str, tokens: list[tuple[int, str]], paths: list[str]) -> list[str]:
    """Up to _MAX_SYMBOLS symbols in order of first mention; explicit mentions win the slots over guesses."""
    # Candidates cannot contain a newline, so one substring test covers every path.
    path_text = "\n".join(paths)
    first_seen: dict[str, tuple[int, bool]] = {}  # symbol -> (first position, marked explicitly)
    for position, candidate, explicit in _symbol_candidates(text, tokens, weak=len(paths) == 1):
        symbol = _valid_symbol(candidate, path_text)
        if symbol is None:
            continue
        seen_at, seen_explicit = first_seen.get(symbol, (position, explicit))
        first_seen[symbol] = (min(seen_at, position), seen_explicit or explicit)
    kept = sorted(first_seen.items(), key=lambda item: (not item[1][1], item[1][0]))[:_MAX_SYMBOLS]
    return [symbol for symbol, _ in sorted(kept, key=lambda item: item[1][0])]


def _symbol_candidates(
    text: str, tokens: list[tuple[int, str]], *, weak: bool
) -> Iterator[tuple[int, str, bool]]:
    """(position, candidate, explicit) for backticked text, ``name()`` calls and, if ``weak``, code-like words."""
    for match in _BACKTICKED.finditer(text):
        if 1 <= len(match.group(1)) <= _MAX_BACKTICKED_CHARS:
            yield match.start(1), match.group(1), True
    for match in _CALL.finditer(text):
        yield match.start(1), match.group(1), True
    # Unmarked words are only worth a guess when the text is about a single file they can be looked up in.
    if weak:
        for position, token in tokens:
            word = token.rstrip(_TRAILING_PUNCTUATION)
            if _looks_like_code(word):
                yield position, word, False


def _looks_like_code(word: str) -> bool:
    if not SYMBOL_RE.fullmatch(word):
        return False
    return bool(
        _INNER_CAPITAL.search(word)  # camelCase, PascalCase with an inner capital
        or ("_" in word and _LOWERCASE.search(word))  # snake_case, but not an ALL_CAPS env var
        or _TYPE_MEMBER.match(word)  # Type.member
    )


def _valid_symbol(candidate: str, path_text: str) -> str | None:
    symbol = candidate.removesuffix("()")
    if len(symbol) < _MIN_SYMBOL_CHARS or not is_valid_ref_symbol(symbol):
        return None
    if symbol in _SYMBOL_STOPWORDS or file_extension(symbol) in CODE_EXTENSIONS or symbol in path_text:
        return None  # a keyword, a file name like `main.go`, or a piece of a mentioned path
    return symbol
