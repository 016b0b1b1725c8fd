"""Secret filter (spec §1.11): find, redact or reject credentials before text reaches shared memory.

The rules run in priority order; a span claimed by an earlier rule is never reported again by a later
one, so a JWT inside an ``Authorization`` header counts once, as a JWT. Provider tokens are recognized by
their prefixes, unless their body is a documented placeholder (``ghp_`` + 36 ``x``,
``AKIAIOSFODNN7EXAMPLE``). The context rules (AWS keys by name, password in a URL, ``Authorization``
header, ``.npmrc``, command-line passwords, secret-named assignment) also have to pass value checks,
because their patterns match ordinary text far more often: placeholders (``${API_TOKEN}``, ``<your-key>``,
``changeme123``) and, for most, values that do not look random (commit SHAs, words, paths) or, in a
password field, not like a password a person would choose (``Summer2021!``).

The rules read the text as written and then as a reader would see it (NFKC, invisible characters removed,
percent-escapes decoded, lines joined inside a token, base64 runs decoded, placeholder words inside a real
token masked), so that a disguised credential is found too; docs/security.md says what each reading adds,
measured on credentials of 278 documented formats (tests/common/secret_world).

This runs on every write and on hook captures far longer than a memory, so the patterns are compiled once
and kept linear in the length of the text: no nested repetitions, possessive runs where a tail can still
fail, and the JWT and secret-assignment patterns start only where a run of their characters starts.
It imports nothing from Django, so the client hook can redact with it before anything reaches the disk.
"""

import base64
import binascii
import html
import json
import math
import re
import unicodedata
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from itertools import pairwise
from urllib.parse import unquote

from kenfold_common.errors import SecretDetected


@dataclass(frozen=True)
class SecretFinding:
    """Where a credential sits in a text; deliberately carries no copy of the value."""

    rule: str
    label: str
    start: int
    end: int
    # Which reading of the text showed it: "as written", "normalized" (NFKC, invisible characters removed,
    # percent-decoded), "joined lines" or "base64-decoded". For the figures in docs/security.md only.
    layer: str = field(default="as written", compare=False)


@dataclass(frozen=True)
class _Rule:
    id: str
    label: str
    # A named group "value" narrows the finding to the credential itself (the password, not the whole URL).
    pattern: re.Pattern[str]
    accepts: Callable[[re.Match[str]], bool] | None = None
    # The match must start a word (not "desk_live_..."). Checked after the match rather than by a
    # lookbehind, so that a pattern starting with its literal prefix keeps the regex engine's fast search
    # for that prefix: ten times faster per rule, and there are fifty such rules.
    word_start: bool = False
    # A rule whose pattern cannot start with a literal runs only on texts that contain this string...
    hint: str | None = None
    # ... or in which this pattern finds something (a C-speed search for the words its pattern needs)...
    hint_pattern: re.Pattern[str] | None = None
    # ... or that contain one of these words in any case: str.find on the lowered text, ten times faster
    # than a case-insensitive alternation, which Python's regex engine tries at every position.
    hint_words: tuple[str, ...] | None = None
    # The pattern starts only where one of these words starts, in any case: it is tried at those places
    # alone, since a case-insensitive search for a long alternation costs more than all the other rules.
    anchor_words: tuple[str, ...] | None = None
    # For a pattern that finds a block rather than the value (a table), where in the block the values are.
    spans: Callable[[re.Match[str]], Iterator[tuple[int, int]]] | None = None
    # In a reading with lines joined, how long each piece on either side of a join must be: a rule that
    # judges any run by its context would otherwise read "300" and the next line's "SESSION_CHARS" as one.
    min_joined_piece: int = 0
    # For the rules that judge any key-shaped run by its context (the costliest): a run that a rule before
    # them already claimed is not judged again in the text as written, where such a finding would be dropped.
    skips_claimed: bool = False
    # A string every match holds (the pattern's literal start, else the hint): a text without it is passed
    # over before any other work for the rule, which for most rules and texts was most of the rule's cost.
    required: str | None = field(init=False, default=None, compare=False)
    # The hint pattern for lowered ASCII text, when it has one (_lowered_twin).
    lowered_hint_pattern: re.Pattern[str] | None = field(init=False, default=None, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "required", _literal_prefix(self.pattern) or self.hint)
        if self.hint_pattern is not None:
            object.__setattr__(self, "lowered_hint_pattern", _lowered_twin(self.hint_pattern))


def _lowered_twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """``pattern`` without IGNORECASE, which finds the same spans in lowered ASCII text, several times faster
    (the regex engine skips to the characters a match can start with only when it compares them as they
    are): ASCII letters match in any case exactly where their lowered forms agree. Only for a pattern
    written in lower case with no part that compares case ("(?-i:", an upper-case letter or class)."""
    source = pattern.pattern
    if not pattern.flags & re.IGNORECASE or source != source.lower() or "(?-i" in source:
        return None
    return re.compile(source, pattern.flags & ~re.IGNORECASE)


def _has_top_level_alternation(source: str) -> bool:
    """Whether ``source`` has a "|" outside any group, class or escape (then no start is common to all)."""
    depth, position, in_class = 0, 0, False
    while position < len(source):
        char = source[position]
        if char == "\\":
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            # "]" right after "[" or "[^" is a member, not the class's end.
            position += source.startswith("^", position + 1)
            position += source.startswith("]", position + 1)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            return True
        position += 1
    return False


def _literal_prefix(pattern: re.Pattern[str]) -> str:
    """The characters every match of ``pattern`` starts with, read from its source: plain characters and
    escaped punctuation up to the first operator, group or class (a shorter start than the regex engine's
    own is still one). Empty for a case-insensitive or verbose pattern, or one of alternatives."""
    source = pattern.pattern
    if pattern.flags & (re.IGNORECASE | re.VERBOSE) or _has_top_level_alternation(source):
        return ""
    prefix: list[str] = []
    position = 0
    while position < len(source):
        char, step = source[position], 1
        if char == "\\":
            char, step = source[position + 1 : position + 2], 2
            if not char or char.isalnum() or not char.isascii():
                break
        elif char in ".^$*+?{}[]()|":
            break
        following = source[position + step : position + step + 1]
        # Optional or counted: not in every match. Repeated: once in every match, and nothing after it is.
        if following in ("*", "?", "{"):
            break
        prefix.append(char)
        if following == "+":
            break
        position += step
    return "".join(prefix)


_PLACEHOLDER_PREFIXES = ("$", "{{", "<")
# "%DB_PASS%" (Windows), "%(password)s" and "%{DB_PASS}" are placeholders; "%2ACoffee2027" in a URL is a
# percent-encoded password.
_PERCENT_PLACEHOLDER_RE = re.compile(r"%(?:[A-Za-z_][A-Za-z0-9_]*+%|[({])")
_PLACEHOLDER_WORDS = (
    "changeme",
    "change-me",
    "change_me",
    "example",
    "placeholder",
    "redacted",
    "your",
    "xxxx",
    "****",
    "dummy",
    "sample",
    "secret",
    "password",
    "token",
    "fake",
    "test",
    "none",
    "null",
    "undefined",
    "todo",
    "insert",
    "replace",
    "process.env",
    "os.getenv",
)
# A provider token is a placeholder only when it is one of the values the providers print in their own
# documentation, or when too little of it is left to be a credential once the placeholder material is taken
# out: words documentation uses ("example", "your", "token"), runs of one character ("xxxx", "0000") and
# counting sequences. A real-shaped token with "EXAMPLE", "test" or "xxxx" written over part of its random
# body still holds a credential's worth of randomness, so it counts (issue 37).
_DOCUMENTED_EXAMPLE_TOKENS = frozenset(
    {
        # AWS documentation's access key ids and secret access keys.
        "AKIAIOSFODNN7EXAMPLE",
        "AKIAI44QH8DHBEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        # kubeadm's documented bootstrap token.
        "abcdef.0123456789abcdef",
        # The Azurite storage emulator's account key, the same in every installation.
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        # jwt.io's example token, quoted in countless tutorials.
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        # The Telegram Bot API documentation's sample token.
        "123456:ABC-DEF1234ghIkl-zyx57W2v1u123ew11",
        # Slack's documented example bot token.
        "xoxb-not-a-real-token-this-will-not-work",
        # The Azure Cosmos DB emulator's key, the same in every installation.
        "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==",
    }
)
_PLACEHOLDER_MATERIAL_RE = re.compile(
    r"example|placeholder|redacted|changeme|dummy|sample|your|token|here|fake|test|secret|key"
    r"|(.)\1{3,}|0123456789|123456|abcdef",
    re.IGNORECASE,
)
# Fewer random letters and digits than this left in a body: a placeholder ("xoxb-your-bot-token-here").
_MIN_RANDOM_BODY = 8
_PURE_HEX_RE = re.compile(r"[0-9a-fA-F]+")
# Base64 output ("openssl rand -base64 32", AWS secret keys) holds "/" and "+" but, unlike a path, holds no
# dots and has a lower-case word of four letters between slashes ("config/", "/keys") in well under 1 of
# 1000 keys.
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")
# Keys made of base64 parts joined by "-" (Adyen's "AQE...==-...=-..."): each part may end in padding.
_JOINED_BASE64_RE = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}(?:-[A-Za-z0-9+/]{8,}={0,2})++")
_PATH_WORD_RE = re.compile(r"(?:^|/)[a-z]{4,}+(?:/|$)")
_DOTTED_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_KEY_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/]{16}")
_MIN_RANDOM_LENGTH = 12
_MIN_RANDOM_ENTROPY_BITS = 3.5
# "openssl rand -hex 32" and Rails' secret_key_base are hex too; 64 digits is longer than any commit SHA
# (40) and as long as a SHA-256 digest, which nobody assigns to a secret-named field.
_MIN_HEX_KEY_LENGTH = 64
_MIN_PASSWORD_LENGTH = 8
_MIN_SINGLE_CASE_KEY_LENGTH = 32
_MIN_SINGLE_CASE_ENTROPY_BITS = 4.2
_MIN_RANDOM_LETTERS_LENGTH = 20
_URL_PASSWORD_SYMBOLS = frozenset("!#$%&*+=?^~-_")


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        value in _DOCUMENTED_EXAMPLE_TOKENS
        or value.startswith(_PLACEHOLDER_PREFIXES)
        or _PERCENT_PLACEHOLDER_RE.match(value) is not None
        or any(word in lowered and _has_placeholder_word(lowered, word) for word in _PLACEHOLDER_WORDS)
        or len(set(value.removeprefix("0x")) - set("-_.")) == 1
        # AWS's documentation ends its example secret keys so ("...bPxRfiCYEXAMPLEKEY").
        or value.endswith("EXAMPLEKEY")
    )


def _has_placeholder_word(lowered: str, word: str) -> bool:
    """``word`` in ``lowered`` other than between two letters or digits: "changeme123" and "<key>-EXAMPLE"
    are placeholders, but "5ohWC43OV0testQ8QEiEu67" is a random value that holds "test" by chance or with
    part of it written over, and still gives most of it away."""
    position = lowered.find(word)
    while position != -1:
        end = position + len(word)
        # ASCII only: a particle of a script written without spaces ("1Passwordの") ends the word.
        inside = (
            position > 0
            and _is_ascii_alnum(lowered[position - 1])
            and end < len(lowered)
            and _is_ascii_alnum(lowered[end])
        )
        if not inside:
            return True
        position = lowered.find(word, position + 1)
    return False


# For lowered ASCII text, where it takes out the same characters at half the cost.
_LOWERED_PLACEHOLDER_MATERIAL_RE = _lowered_twin(_PLACEHOLDER_MATERIAL_RE)


def _is_placeholder_body(body: str) -> bool:
    if body in _DOCUMENTED_EXAMPLE_TOKENS:
        return True
    if _LOWERED_PLACEHOLDER_MATERIAL_RE is not None and body.isascii():
        remaining = _LOWERED_PLACEHOLDER_MATERIAL_RE.sub("", body.lower())
    else:
        remaining = _PLACEHOLDER_MATERIAL_RE.sub("", body)
    return sum(map(str.isalnum, remaining)) < _MIN_RANDOM_BODY


# A value's character classes: "upper", "lower", "digit" and "symbol". Separators of ordinary identifiers
# (snake_case, kebab-case, dotted.names) say nothing about randomness and belong to none.
_UPPER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGIT_CHARS = frozenset("0123456789")
_NOT_SYMBOL_CHARS = _UPPER_CHARS | _LOWER_CHARS | _DIGIT_CHARS | frozenset("._-")


def _character_classes(value: str) -> set[str]:
    # Set operations on the distinct characters: this runs for most candidates of most rules, where a
    # function call per character cost several percent of the filter's time.
    chars = set(value)
    classes = set()
    if not chars.isdisjoint(_UPPER_CHARS):
        classes.add("upper")
    if not chars.isdisjoint(_LOWER_CHARS):
        classes.add("lower")
    if not chars.isdisjoint(_DIGIT_CHARS):
        classes.add("digit")
    if not chars <= _NOT_SYMBOL_CHARS:
        classes.add("symbol")
    return classes


def _shannon_entropy(value: str) -> float:
    length = len(value)
    return -sum([count / length * math.log2(count / length) for count in Counter(value).values()])


# The characters str.isspace() accepts (Python's \s is defined by the same Unicode property).
_WHITESPACE_RE = re.compile(r"\s")


def _names_a_location(value: str) -> bool:
    """Paths, URLs and references (``vault:db``) say where a secret is kept, not what it is."""
    if ":" in value or "\\" in value or _WHITESPACE_RE.search(value) is not None:
        return True
    if "/" not in value:
        return False
    if (
        not (_BASE64_RE.fullmatch(value) or _JOINED_BASE64_RE.fullmatch(value))
        or _PATH_WORD_RE.search(value) is not None
    ):
        return True
    # One base64 key in 64 starts with "/"; padding tells it from an absolute path.
    return value.startswith("/") and not (value.endswith("=") and len(value) % 4 == 0)


def _looks_random(value: str) -> bool:
    # Cheap first test; the entropy bound alone would also refuse it (11 characters carry at most 3.46 bits).
    if len(value) < _MIN_RANDOM_LENGTH or _names_a_location(value):
        return False
    # "settings.DbPass2" is code that reads the secret.
    if _DOTTED_IDENTIFIER_RE.fullmatch(value):
        return False
    # Pure hex is a commit SHA or a digest far more often than a credential, unless it is key-sized.
    if _PURE_HEX_RE.fullmatch(value):
        return len(value) >= _MIN_HEX_KEY_LENGTH
    if not any(char.isalpha() for char in value):
        return False
    classes = _character_classes(value)
    if (
        len(classes) < 3
        and not {"digit", "symbol"} <= classes
        and not _has_random_case(value, classes)
        and not _is_long_random_single_case(value, classes)
    ):
        return False
    return _shannon_entropy(value) >= _MIN_RANDOM_ENTROPY_BITS


def _has_random_case(value: str, classes: set[str]) -> bool:
    # One random 32-letter key in 300 has no digit. Its case flips at random, so upper case is about half of
    # it; CamelCase names ("AbstractSingletonProxyFactoryBean") stay below a third.
    if classes != {"upper", "lower"} or len(value) < _MIN_RANDOM_LETTERS_LENGTH:
        return False
    return 1 / 3 <= sum(char.isupper() for char in value) / len(value) <= 2 / 3


def _is_long_random_single_case(value: str, classes: set[str]) -> bool:
    # Keys in one case with digits (Azure DevOps tokens: 52 of a-z and 2-7): at 32 characters and more,
    # names and words with numbers do not reach the entropy of random text.
    return (
        len(value) >= _MIN_SINGLE_CASE_KEY_LENGTH
        and "digit" in classes
        and _shannon_entropy(value) >= _MIN_SINGLE_CASE_ENTROPY_BITS
    )


# "<id>:<secret>" (a Telegram bot token, a client id and its secret): the id says nothing, so the part after
# the colon is judged. An id holds a digit; a word before the colon is a reference to where the secret is
# kept ("vault:<path>"), and a hash algorithm's name makes it a digest ("sha256:<hex>").
_ID_AND_SECRET_RE = re.compile(
    r"(?!(?:sha|md5|blake|h1)[0-9-]*:)[A-Za-z0-9_-]{1,64}:(?P<secret>[A-Za-z0-9_+/=.-]{16,})"
)


def _looks_random_or_id_and_secret(value: str) -> bool:
    if _looks_random(value):
        return True
    pair = _ID_AND_SECRET_RE.fullmatch(value)
    return (
        pair is not None
        and any(char.isdigit() for char in value[: pair.start("secret")])
        and _looks_random(pair["secret"])
    )


def _looks_like_password(value: str) -> bool:
    """A human-chosen password (``Summer2021!``): what password policies ask for, and not code."""
    return (
        len(value) >= _MIN_PASSWORD_LENGTH
        and not _names_a_location(value)
        and not (_DOTTED_IDENTIFIER_RE.fullmatch(value) and not _has_digits_in_every_part(value))
        and len(_character_classes(value)) >= 3
    )


def _has_digits_in_every_part(value: str) -> bool:
    # "settings.DbPass2" is code reading a secret; "cobalt318.maple49UtL4" is words and numbers joined by a dot,
    # the way people make passwords: code names seldom hold a number in every part.
    return all(any(char.isdigit() for char in part) for part in value.split("."))


def _is_url_password(match: re.Match[str]) -> bool:
    password = match["value"]
    if _is_placeholder(password) or password.lower() == match["user"].lower():
        return False
    return len(password) >= 8 or any(char.isdigit() or char in _URL_PASSWORD_SYMBOLS for char in password)


# Sentry documents a DSN's key as safe to keep public: it only lets a client send events.
_SENTRY_HOST_RE = re.compile(r"@(?:o\d++\.)?(?:ingest\.)?(?:[a-z]{2}\.)?sentry\.io\b", re.IGNORECASE)


def _is_sentry_dsn(match: re.Match[str]) -> bool:
    return _SENTRY_HOST_RE.match(match.string, match.end("value")) is not None


def _is_random_non_placeholder(match: re.Match[str]) -> bool:
    value = match["value"]
    return not _is_placeholder(value) and _looks_random(value)


def _is_key_shaped(value: str) -> bool:
    """A value that is a key on its own, with no name beside it: random, a UUID, key-sized hex, or a long
    single-case key with digits (Quay's robot tokens)."""
    return not _is_placeholder(value) and (
        _looks_random(value)
        or _UUID_RE.fullmatch(value) is not None
        or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None
        or (
            _SINGLE_CASE_KEY_RE.fullmatch(value) is not None
            and len(value) >= _MIN_SINGLE_CASE_KEY_LENGTH
            and sum(char.isdigit() for char in value) >= _MIN_SINGLE_CASE_KEY_DIGITS
        )
    )


def _is_percent_encoded_key(match: re.Match[str]) -> bool:
    # Letters and digits never need percent-encoding: a key whose every character is escaped was hidden.
    decoded = "".join(chr(int(escape[1:], 16)) for escape in re.findall(r"%[0-9A-Fa-f]{2}", match[0]))
    return _ENCODED_KEY_CHARS_RE.fullmatch(decoded) is not None and _is_key_shaped(decoded)


_ENCODED_KEY_CHARS_RE = re.compile(r"[A-Za-z0-9_-]{16,}")


# A Secret manifest's "data:" block: from the line after "data:" to the next line that is not indented.
_KUBERNETES_SECRET_DATA_RE = re.compile(
    r"^kind:[ \t]*+Secret[ \t]*+\r?\n(?:[^\n]*+\n){0,40}?data:[ \t]*+\r?\n(?P<block>(?:[ \t][^\n]*+(?:\n|$))++)",
    re.MULTILINE,
)


@lru_cache(maxsize=8)
def _kubernetes_secret_data_blocks(text: str) -> tuple[tuple[int, int], ...]:
    # Once per text (str hashes are cached), so that a text of many data lines stays linear.
    return tuple(found.span("block") for found in _KUBERNETES_SECRET_DATA_RE.finditer(text))


def _is_in_kubernetes_secret_data(match: re.Match[str]) -> bool:
    blocks, start = _kubernetes_secret_data_blocks(match.string), match.start()
    index = bisect_left(blocks, (start + 1,)) - 1
    return index >= 0 and blocks[index][0] <= start < blocks[index][1]


def _is_encoded_secret_value(value: str) -> bool:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return not _is_placeholder(decoded) and (
        _looks_random(decoded) or _looks_like_password(decoded) or _is_key_shaped(decoded)
    )


_PGPASS_LINE_RE = re.compile(r"[A-Za-z0-9.-]{1,100}:(?:\d{1,5}|\*):")


def _is_password_of_a_pair(match: re.Match[str]) -> bool:
    value = match["value"]
    if _is_placeholder(value):
        return False
    # A .pgpass line's last field is a password by the file's definition: two classes of characters are enough
    # ("cobalt28-harbor75dubf"), as on a command line.
    if _PGPASS_LINE_RE.match(match[0]) is not None and _is_command_line_password(match):
        return True
    return (
        _looks_random(value) or _looks_like_password(value) or _KEY_SIZED_HEX_RE.fullmatch(value) is not None
    )


_MIN_BEARER_LETTERS = 12


def _is_authorization_value(match: re.Match[str]) -> bool:
    # Any scheme or none ("Bearer", "Splunk", "SSWS", a bare key): the header holds the caller's credential,
    # a UUID after a scheme too (Splunk's HEC tokens).
    value = match["value"]
    if _is_placeholder(value) or (match["scheme"] or "").lower() in ("digest", "negotiate"):
        return False
    # After a scheme, a UUID (Splunk's HEC tokens) or key-sized hex ("Bearer <32 hex>": Datadog, Jenkins) is the
    # credential too: no scheme carries a digest or an id.
    # After a scheme, a password (a shared secret sent as a bearer value) or a one-case run of letters and
    # digits (Mattermost's 26) is the credential too: the header carries nothing else.
    return _looks_random(value) or (
        match["scheme"] is not None
        and (
            _UUID_RE.fullmatch(value) is not None
            or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None
            or _looks_like_password(value)
            # Random letters of both cases without digits (Vonage's 16): the case flips, unlike a word's.
            or (
                _character_classes(value) == {"upper", "lower"}
                and len(value) >= _MIN_BEARER_LETTERS
                and 1 / 3 <= sum(char.isupper() for char in value) / len(value) <= 2 / 3
                and not _is_made_of_words(value)
            )
            or (
                len(value) >= 20
                and {"digit"} < _character_classes(value)
                and _shannon_entropy(value) >= _MIN_RANDOM_ENTROPY_BITS
            )
        )
    )


def _is_basic_credential(match: re.Match[str]) -> bool:
    return _is_encoded_user_and_password(match["value"])


def _is_real_token(match: re.Match[str]) -> bool:
    return match[0] not in _DOCUMENTED_EXAMPLE_TOKENS and not _is_placeholder_body(match["body"])


def _is_public_jwt(body: str) -> bool:
    """Supabase's anon key is a JWT with the role "anon", made to be shipped in web pages."""
    payload = body.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return isinstance(claims, dict) and claims.get("role") == "anon"


def _is_encoded_user_and_password(value: str) -> bool:
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    _user, colon, password = decoded.partition(":")
    return (
        bool(colon)
        and not _is_placeholder(password)
        and (_looks_random(password) or _looks_like_password(password))
    )


def _is_openai_key(match: re.Match[str]) -> bool:
    return _is_real_token(match) and any(char.isdigit() for char in match["body"])


def _is_private_key(match: re.Match[str]) -> bool:
    # "the file starts with -----BEGIN OPENSSH PRIVATE KEY-----" names a key without pasting one.
    body = match["body"]
    return _KEY_MATERIAL_RE.search(body) is not None and not _is_placeholder_body(body)


def _has_digit_and_letter_in_secret(body: str) -> bool:
    # One real token in 200 has no digit in its 6-character id, none has a 16-character secret without one.
    secret = body.split(".")[1]
    return any(char.isdigit() for char in secret) and any(char.isalpha() for char in secret)


def _is_non_placeholder(match: re.Match[str]) -> bool:
    return not _is_placeholder(match["value"])


def _is_real_key(match: re.Match[str]) -> bool:
    # For a value the name identifies and the pattern confines to key characters, such as a session token
    # of several hundred base64 characters, which holds a four-letter word by chance once in 250.
    return not _is_placeholder_body(match["value"])


# Many providers issue keys that are hex digits or a UUID (Twilio auth tokens, Datadog keys, Heroku's
# legacy keys). Alone they are indistinguishable from digests and ids, so they count only under a name
# that says which secret they are: "TWILIO_AUTH_TOKEN", "api_key", but not a bare "token", which notes
# use for commit SHAs and cache keys as well.
_BARE_SECRET_NAMES = frozenset({"token", "secret", "credential", "credentials"})
# Words that come before a name written out in prose ("so the token is ...") and do not qualify it.
_FILLER_WORDS = frozenset(
    {"so", "the", "a", "an", "my", "our", "your", "this", "that", "new", "old", "and", "then"}
)


def _is_bare_name(name: str) -> bool:
    words = [word for word in name.lower().lstrip("-").split() if word not in _FILLER_WORDS]
    return " ".join(words) in _BARE_SECRET_NAMES


# A short prefix may name the issuer ("cu_<hex>", "sk-lf-<uuid>", "xaat-<uuid>"). Hex of 20 digits is shorter
# than any commit SHA anyone quotes whole and than a digest (Pusher secrets are 20, Plaid's 30).
_KEY_PREFIX = r"(?:[A-Za-z]{1,8}[_-](?:[a-z]{2,4}[_-])?)?"
_KEY_SIZED_HEX_RE = re.compile(_KEY_PREFIX + r"(?:0x)?[0-9a-fA-F]{20,}+(?:-us\d{1,2})?")
_UUID_RE = re.compile(
    _KEY_PREFIX + r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
# Keys of one case and digits (Mattermost's 26, Checkout's "sk_" + 26, Quay's 64 upper case): under the
# name of the key they are, not the names and words with numbers that such a field also holds.
_SINGLE_CASE_KEY_RE = re.compile(_KEY_PREFIX + r"(?:[a-z0-9]{20,}|[A-Z0-9]{20,})")
_MIN_SINGLE_CASE_KEY_DIGITS = 3
_MIN_NAMED_KEY_ENTROPY_BITS = 3.7
# WordPress application passwords: 24 letters and digits in six groups of four.
_GROUPED_PASSWORD_RE = re.compile(r"(?:[A-Za-z0-9]{4} ){5}[A-Za-z0-9]{4}")


def _is_key_under_qualified_name(name: str, value: str) -> bool:
    if _is_bare_name(name):
        # A bare "secret" or "credential" holds no commit SHA or digest, as a bare "token" may: a UUID or
        # key-sized hex under it is the secret (Scaleway's secret keys, most client secrets).
        return "token" not in name.lower() and (
            _UUID_RE.fullmatch(value) is not None or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None
        )
    if _KEY_SIZED_HEX_RE.fullmatch(value) is not None or _UUID_RE.fullmatch(value) is not None:
        return True
    if _GROUPED_PASSWORD_RE.fullmatch(value) is not None:
        return _looks_random(value.replace(" ", ""))
    return (
        _SINGLE_CASE_KEY_RE.fullmatch(value) is not None
        and sum(char.isdigit() for char in value) >= _MIN_SINGLE_CASE_KEY_DIGITS
        and _shannon_entropy(value) >= _MIN_NAMED_KEY_ENTROPY_BITS
    )


# A prefix of one to three short segments in one case ("abc", "xyz_live", "PMAK"). Stripe's publishable keys
# ("pk_live_..."), PostHog's project keys ("phc_...") and public keys are meant to be shown, Stripe's Checkout
# Session ids ("cs_live_...") are in every checkout URL; a hash algorithm's name starts a digest ("sha512-<base64>"
# in lockfiles).
_TOKEN_PREFIX_RE = re.compile(
    r"(?:[a-z][a-z0-9]{1,9}|[A-Z][A-Z0-9]{1,9})(?:[_-](?:[a-z0-9]{1,9}|[A-Z0-9]{1,9})){0,2}"
)
_NOT_SECRET_PREFIXES = (
    "cs",
    "pk",
    "phc",
    "pub",
    "public",
    "publishable",
    "md5",
    "sha1",
    "sha256",
    "sha384",
    "sha512",
)
_MAX_TOKEN_PREFIX = 30
_MIN_PREFIXED_BODY_ENTROPY_BITS = 4.0
_MIN_DOTTED_TOKEN_PART = 20


# A JSON Web Key's public numbers ("n": "<base64url>", "x", "y", "e") are public by design.
_JWK_MEMBER_RE = re.compile(r"[\"'](?:n|e|x|y)[\"']\s*+:\s*+[\"']$")


def _is_prefixed_random_token(match: re.Match[str]) -> bool:
    text, separator = match.string, match.start()
    start = separator
    while start > 0 and separator - start < _MAX_TOKEN_PREFIX and _is_word_or_dash(text[start - 1]):
        start -= 1
    if start > 0 and (_is_word_or_dash(text[start - 1]) or text[start - 1] in "./+=%:@"):
        return False
    if text[match.end() : match.end() + 1] in ("+", "/", "=") or _JWK_MEMBER_RE.search(
        text, max(0, start - 8), start
    ):
        return False
    prefix = text[start:separator]
    body = match["body"].rstrip(".")
    if "." in body:
        # Dotted names ("org.springframework.security...JwtAuthenticationProvider") are words; a dotted token
        # has a random part of its own.
        body = max(body.split("."), key=len)
        if len(body) < _MIN_DOTTED_TOKEN_PART:
            return False
    return (
        _TOKEN_PREFIX_RE.fullmatch(prefix) is not None
        and prefix.lower().split("_")[0].split("-")[0] not in _NOT_SECRET_PREFIXES
        and _character_classes(body) == {"upper", "lower", "digit"}
        and _shannon_entropy(body) >= _MIN_PREFIXED_BODY_ENTROPY_BITS
        and not _is_placeholder_body(body)
    )


def _is_word_or_dash(char: str) -> bool:
    return char == "-" or _is_word_character(char)


def _is_command_line_password(match: re.Match[str]) -> bool:
    # The flag says what the value is, so two classes of characters are enough ("8ER6O0H6681S"); one is not,
    # because "mysql -p shop" (with a space) prompts for the password and names the database.
    value = match["value"]
    return (
        len(value) >= _MIN_PASSWORD_LENGTH
        and not _is_placeholder(value)
        and not _names_a_location(value)
        and len(_character_classes(value)) >= 2
    )


# A "<something>_KEY" name holds a secret unless the something says it is a lookup or a public value.
_WEAK_KEY_NAME_WORDS = frozenset(
    {
        "public", "pub", "cache", "partition", "sort", "primary", "foreign", "idempotency", "dedup", "dedupe",
        "row", "hash", "lookup", "object", "s3", "kms", "shard", "entry", "map", "index", "unique",
        "cursor", "page", "group", "message", "event", "request", "bucket", "file", "ssh", "gpg",
        "search", "site", "client", "publishable", "anon", "sign", "verify", "kid", "id", "hot", "sequence",
    }
)  # fmt: skip
_WEAK_NAME_HEX_KEY_RE = re.compile(r"(?:0x)?[0-9a-fA-F]{32,}")
_NAME_WORD_RE = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z0-9]+(?![a-z])")
# Values the issuer made to be shown: Stripe publishable keys, Datadog client tokens, PostHog project keys.
_PUBLIC_VALUE_RE = re.compile(r"pk_(?:live|test)_|pub[a-f0-9]{32}|phc_|cs_(?:live|test)_|pk\.eyJ")


# "sha256=<hex>", "sha512-<base64>", "md5:<hex>": a digest (webhook signatures, integrity hashes, image
# digests) under whatever name it is kept.
_DIGEST_RE = re.compile(r"(?:sha|md5|blake|h1)[0-9-]*[=:-][A-Za-z0-9+/_-]{16,}+=*+$", re.IGNORECASE)


_PROSE_WORD_RE = re.compile(r"[^\W\d_]")
_PROSE_VERBS = frozenset(
    {"is", "ist", "est", "es", "era", "war", "was", "to", "je", "ni", "on", "ay", "este", "ialah", "adalah", "nu",
     "now", "jetzt", "ora", "agora", "är", "é", "è", "是", "は", "—", "це", "είναι", "là", "هو", "הוא", "คือ", "है"}
)  # fmt: skip


def _is_weak_key_name(name: str) -> bool:
    words = {word.lower() for word in _NAME_WORD_RE.findall(name)}
    return bool(words & _WEAK_KEY_NAME_WORDS)


_COOKIE_SEPARATOR_RE = re.compile(r"\s*+:\s*+[A-Za-z0-9_.-]++=")


_NETRC_LOGIN_RE = re.compile(r"\bmachine\s++\S++\s++login\s++\S++\s++$")


_VALUE_KEY_RE = re.compile(r"[\"']?value[\"']?", re.IGNORECASE)


def _is_assigned_by_symbol(match: re.Match[str]) -> bool:
    # "session=<id>", "X-Signature: <value>" and "Cookie: <name>=<value>" assign; "session <id> expired" is
    # prose naming an id.
    # A call's "," (f(session=session, timeout=...)) separates arguments; it assigns only a secret's name.
    # A name and a value as two entries of one element ("- name: X_SK / value: ..."): "value" assigns.
    separator = _VALUE_KEY_RE.sub("", match["separator"])
    return (
        (
            ("=" in separator or ":" in separator)
            and "," not in separator
            and _PROSE_WORD_RE.search(separator) is None
        )
        or _COOKIE_SEPARATOR_RE.fullmatch(separator) is not None
        or match["name"].startswith("-")
    )


# A resource id of two upper-case letters naming its type and 32 hex digits (Twilio's "AC", "MG", "SK", "PN"
# SIDs): under a "sid" name it says which account or service, and the secret is the token beside it.
_TYPED_RESOURCE_ID_RE = re.compile(r"[A-Z]{2}[0-9a-f]{32}")


def _is_random_under_access_name(match: re.Match[str], value: str) -> bool:
    # Hex under such a name is a digest (a webhook's HMAC of its payload) or an id far more often than a key.
    # "project=REPO" after "session," is the next argument, not a value.
    return (
        _is_assigned_by_symbol(match)
        and "=" not in value.rstrip("=")
        and _PURE_HEX_RE.fullmatch(value) is None
        and _TYPED_RESOURCE_ID_RE.fullmatch(value) is None
        and _looks_random_or_id_and_secret(value)
    )


# "<user>:<secret>" under a qualified secret's name: Jenkins API tokens ("<user>:11<32 hex>"), Harbor robot
# accounts ("robot$<project>+<name>:<secret>"); the secret half is judged as the value.
_USER_AND_SECRET_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.$+@-]{0,39}+:(?P<secret>[A-Za-z0-9_+/=-]{16,}+)")


def _is_assigned_secret(match: re.Match[str]) -> bool:
    value = match["value"]
    pair = _USER_AND_SECRET_RE.fullmatch(value.rstrip(".;"))
    if pair is not None and not _is_bare_name(match["name"]) and match.groupdict().get("random") is None:
        secret = pair["secret"]
        if not _is_placeholder(secret) and (
            _is_key_under_qualified_name(match["name"], secret) or _looks_random_or_id_and_secret(secret)
        ):
            return True
    # In a query string the value ends at the next parameter ("?cosmos_key=<base64>&format=json"); the whole
    # run is judged as well, as it was before this reading.
    # A sentence's full stop is not part of the value ("... is 6713d13dc948bf16365556a38104f21c.").
    for head in (value.partition("&")[0], value.rstrip(".")):
        if head != value and len(head) >= _MIN_PASSWORD_LENGTH and _is_assigned_value(match, head):
            return True
    return _is_assigned_value(match, value)


def _is_assigned_value(match: re.Match[str], value: str) -> bool:
    if _is_placeholder(value) or _PUBLIC_VALUE_RE.match(value) or _DIGEST_RE.match(value):
        return False
    # "NAME=value" after a name is the next assignment ("DD_API_KEY=<key> DD_SITE=..."); a bare "token"
    # named for a listing's place is a cursor ("next page token: eyJvZmZzZXQiOi...").
    if _ASSIGNMENT_VALUE_RE.match(value) or (_is_bare_name(match["name"]) and _names_a_cursor(match)):
        return False
    if match.groupdict().get("random") is not None:
        return _is_random_under_access_name(match, value)
    if match["weak"] is not None:
        return not _is_weak_key_name(match["name"]) and (
            _looks_random_or_id_and_secret(value)
            or _UUID_RE.fullmatch(value) is not None
            or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None
        )
    bare = _is_bare_name(match["name"])
    separator = match["separator"].strip()
    if bare and not separator and _PURE_HEX_RE.fullmatch(value):
        # "device token <hex>", "token <sha>": prose naming an id; "token=<hex>" still counts.
        return False
    # A quoted UUID or key-sized hex assigned to a bare "Token:" in code (a config struct, a dict) is the
    # token: code that keeps an id or a digest names it so.
    quoted = match.string[match.start("value") - 1 : match.start("value")] in ("'", '"', "`")
    if (
        bare
        and quoted
        and _is_assigned_by_symbol(match)
        and (_UUID_RE.fullmatch(value) is not None or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None)
    ):
        return True
    if bare and _PROSE_WORD_RE.search(separator) and not set(separator.lower().split()) <= _PROSE_VERBS:
        # "the token header eyJ...": the words after a bare "token" say what the value is, and it is not one.
        return False
    if _looks_random_or_id_and_secret(value) or _is_key_under_qualified_name(match["name"], value):
        return True
    # A password field holds whatever a person typed, so policy-shaped values count there; but only after
    # ":" or "=" or a command-line flag, since "password" followed by a word is mostly prose.
    # An EDN or Clojure keyword (":db-password") is a map key: the space after it assigns.
    keyword = match.string[match.start("name") - 1 : match.start("name")] == ":"
    # A .netrc line: "machine <host> login <user> password <password>".
    netrc = _NETRC_LOGIN_RE.search(match.string, max(0, match.start("name") - 80), match.start("name"))
    assigned = (
        match["separator"].strip() != "" or match["name"].startswith("-") or keyword or netrc is not None
    )
    return match["password"] is not None and assigned and _looks_like_password(value)


_ASSIGNMENT_VALUE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+=[^=]")


def _names_a_cursor(match: re.Match[str]) -> bool:
    """ "next page token", "continuation token", "sync token": a place in a listing, not access."""
    word = _LAST_WORD_RE.search(match.string, max(0, match.start("name") - 16), match.start("name"))
    return word is not None and word[1].lower() in _CURSOR_WORDS


_CURSOR_WORDS = frozenset(
    {"page", "paging", "pagination", "cursor", "continuation", "sync", "resume", "next"}
)


# Prefixed tokens count only at the start of a word, so "task-queue-restart-2024-11-30" is not an "sk-" key.
# ASCII classes, not \b: Korean particles glue straight onto a key ("키는sk-...를") and are \w in Unicode.
_WORD_START = r"(?<![A-Za-z0-9_])"
# A JWT never follows base64url characters; starting only at the beginning of such a run also keeps
# "eyJeyJeyJ..." linear, since its tail (a dot after a long run) can fail.
_BASE64URL_RUN_START = r"(?<![A-Za-z0-9_-])"
# Any name characters may come before a suffix, so "secret" covers the spec's "client_secret" and "pass"
# (Java properties spell the parts with dots: "cohere.api.key")
# covers "DB_PASS"; "pass" must start a word ("bypass" is not a password) or a camelCase part ("dbPass").
# The "[_-]?" forms admit camelCase JSON keys ("secretKey", "apiKey"). The key names are ours beyond the
# spec's: Django's SECRET_KEY, Rails' secret_key_base, and the usual names of encryption and signing keys.
_SECRET_NAME_SUFFIX = (
    # redis.conf's "requirepass" and "masterauth" take the server's password.
    r"(?:(?P<password>password|passwd|passphrase|pwd|(?<![A-Za-z])pass|(?-i:(?<=[a-z])P)ass|requirepass|masterauth)"
    r"|secret(?:[_.-]?key(?:[_.-]?base)?)?|token|credentials?|(?<![A-Za-z])pat|(?-i:(?<=[a-z])P)at"
    # .NET's "connectionString" attribute holds a whole connection string or, for some vendors, the key alone.
    r"|connection[_.-]?string"
    r"|(?:api|access|private|auth|encryption|signing|master|hmac|app|application|license|account|admin)[_.-]?key"
    # Any other "<something>_KEY" ("COSMOS_KEY", "x-functions-key"): weaker, see _WEAK_KEY_NAME_WORDS. In a
    # query string a bare "key" or "appid" is the caller's key (Google Maps, OpenWeather).
    r"|(?P<weak>(?<=[A-Za-z0-9])[_.-](?:key|certificate)|(?-i:(?<=[a-z])(?:Key|Certificate))"
    r"|(?<=[?&;])(?:key|appid|app_id)(?==))"
    # Names of values that grant access only when they are random: a signature, a session or cookie, an
    # auth value. Such names also hold digests, ids and words, so hex, UUIDs and passwords do not count.
    r"|(?P<random>(?<![A-Za-z])(?:sig(?:nature)?|session(?:[_.-]?(?:id|key|token|secret))?|sid|cookie|auth"
    r"|bearer)(?![a-z])|(?-i:(?<=[a-z])(?:Signature|Session(?:Id|Key|Token)?|Cookie|Auth))(?![a-z])"
    # "<SDK>_SK", "AWS_SK": the secret half of an AK/SK pair (Huawei, Volcengine, Baidu clouds).
    r"|(?<=[_.-])sk(?![A-Za-z0-9])))"
)
# Tools that take a password on their command line: mysql and friends glue it to "-p", registry logins
# and sshpass take it as the next argument. The flag must come within 100 characters on the same line
# (longer than any real invocation before "-p"), which keeps a line of repeated command names linear.
# Every secret name ends in one of these words: texts without any (most prose, most config) skip the
# assignment rules, the costliest of all, since their pattern may start at any word.
_SECRET_NAME_WORDS = (
    "pass", "pwd", "secret", "token", "credential", "pat", "key", "certificate", "sig", "session", "sid", "cookie",
    "auth", "bearer", "appid", "app_id", "_sk", "-sk", ".sk", "connectionstring", "connection_string",
    "connection-string", "connection.string",
)  # fmt: skip
_PASSWORD_COMMANDS = (
    r"(?:mysql(?:dump|admin|import|check|show|slap)?|mariadb(?:-dump|-admin)?|sshpass"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm registry|helm) login)"
)

# After a secret's name, besides the spec's ":" "=" and whitespace: ":=" and "=>" (Go, Ruby, PHP),
# a table's "|" between the name's cell and the value's, "," between call arguments
# (os.Setenv("API_KEY", "...")), a type annotation before "=" (const API_KEY: &str = "..."), "]"
# after a subscript (ENV["API_KEY"] = "..."), a YAML tag (!unsafe '...'), prose's "is" and a
# command's flag (gh secret set API_KEY --body ..., ssm put-parameter --name DB_PASSWORD --value ...).
_ASSIGNMENT_TAIL = (
    r"[\"'`]?(?:\*\*)?[\]}]?"
    r"(?P<separator>\s*+:\s*+[>|][-+]?\s++|</key>\s*+<string>"
    r"|(?:\s*+:\s*+&?[A-Za-z_][A-Za-z0-9_]*+)?\s*+(?::=|=>|:-|->|<<<|\?=|\|\|=|\?\?=|[:=|,>])\s*+"
    r"|(?:\s++--?[A-Za-z][A-Za-z-]*+\s++[A-Za-z][A-Za-z0-9]{0,20})?\s++--?[A-Za-z][A-Za-z-]*+[\s=]++|\)?\s*+(?:\?\?|\|\||\?:|or\s)\s*+|\)\.(?:unwrap_or|or_else|getOrElse"
    r"|getOrDefault|orElse|get_or)[A-Za-z_]*+\(\s*+(?:\|\|\s*+)?"
    # Prose: one to three short words without digits between the name and the value ("is", "is nu",
    # "de prod est", "ialah", "— це", "production <<<"), in any language; the value still has to
    # look like a key, and after a bare "token" only a verb will do (_PROSE_VERBS).
    r"|\s++(?:[^\s\d]{1,12}\s++)?(?:[^\s\d]{1,6}\s++){1,2}?"
    # A short word in another script ("값으로", "は", "é", "şu:", "—") between the name and the value.
    r"|\s*+(?=[^\s]{0,7}[^\x00-\x7f])[^\s]{1,8}\s++|\s*+[^\x00-\x7f\s]{1,8}\s*+|\s++)"
    r"(?:![A-Za-z_]++\s++)?[\"'`]?\\?[\"'`]?(?P<value>(?:[A-Za-z0-9]{4}\x20){5}[A-Za-z0-9]{4}(?![A-Za-z0-9])"
    # A value ends at a Japanese particle (hiragana): "1Passwordの", "Vaultに" are a word and its particle, not
    # a password. Passwords may hold other scripts' letters ("한글암호7#...").
    r"|[^\s\"'`<>{}()\[\],;\\\u3000-\u309f]{8,200})"
)

# A secret's name in other languages, written out in prose or as a field's label ("Das Passwort lautet ...",
# "密码：...", "トークンは..."). Scripts written without spaces (Chinese, Japanese, Korean, Thai) glue the name
# to what comes before it; the others start it at a word.
_FOREIGN_PASSWORD_WORDS = (
    "passwort", "kennwort", "mot de passe", "contraseña", "contrasena", "senha", "palavra-passe", "wachtwoord",
    "hasło", "haslo", "heslo", "lösenord", "losenord", "passord", "adgangskode", "salasana", "jelszó", "jelszo",
    "şifre", "sifre", "parolă", "parola", "kata sandi", "kata laluan", "mật khẩu", "пароль", "пароля", "паролем",
    "hasła", "κωδικός", "كلمة المرور", "كلمة السر", "סיסמה", "סיסמא", "पासवर्ड", "lozinka", "geslo", "slaptažodis",
    "parole", "parool", "lykilorð", "парола", "nenosiri", "contrasenya", "رمز عبور", "পাসওয়ার্ড", "கடவுச்சொல்",
    "సంకేతపదం",
)  # fmt: skip
_FOREIGN_SECRET_WORDS = (
    "schlüssel", "zugangsdaten", "anmeldedaten", "clé", "jeton", "clave", "secreto", "llave", "chave", "segredo",
    "chiave", "chiavi", "segreto", "sleutel", "klucz", "klíč", "klíče", "anahtar", "kunci", "nyckel", "nycklar",
    "nøgle", "avain", "kulcs", "ключ", "токен", "секрет", "κλειδί", "مفتاح", "מפתח", "कुंजी", "टोकन", "khóa",
    # "Credential" and its plurals, which the Romance languages spell apart from English.
    "credencial", "credenciales", "credenciais", "credenziale", "credenziali", "identifiants de connexion",
    "toegangsgegevens", "inloggegevens", "poświadczenia", "учетные данные", "учётные данные", "kimlik bilgileri",
    "mã thông báo", "identifiants", "zugang", "jetons",
    # A key and a token in more languages (Romanian, Norwegian, Slovak, Croatian, Lithuanian, Latvian,
    # Estonian, Swahili, Hebrew, Arabic, Persian, Greek, Bengali, Tamil, Hindi).
    "cheie", "cheia", "nøkkel", "nokkel", "kľúč", "ključ", "raktas", "atslēga", "võti", "ufunguo",
    "טוקן", "توكن", "کلید", "توکن", "διακριτικό", "টোকেন", "சாவி", "चाबी",
)  # fmt: skip
_UNSPACED_PASSWORD_WORDS = (
    "密码",
    "密碼",
    "口令",
    "パスワード",
    "暗証番号",
    "비밀번호",
    "패스워드",
    "암호",
    "รหัสผ่าน",
)
_UNSPACED_SECRET_WORDS = (
    "密钥", "密鑰", "秘钥", "令牌", "金鑰", "凭证", "憑證", "凭据", "トークン", "シークレット", "秘密鍵", "キー", "認証情報", "토큰",
    "시크릿", "비밀 키", "키", "자격 증명", "โทเค็น", "คีย์",
)  # fmt: skip


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(word) for word in words)


def _word_trie(words: frozenset[str]) -> str:
    """An alternation of ``words`` grouped by their first characters: at each position the regex engine
    compares one character per branch instead of trying every word."""
    by_first: dict[str, set[str]] = {}
    for word in words:
        by_first.setdefault(word[0], set()).add(word[1:])
    branches = []
    for first, rests in sorted(by_first.items()):
        longer = frozenset(rest for rest in rests if rest)
        if not longer:
            branches.append(re.escape(first))
        else:
            optional = "?" if "" in rests else ""
            branches.append(f"{re.escape(first)}(?:{_word_trie(longer)}){optional}")
    return "|".join(branches)


_FOREIGN_NAME = (
    r"(?P<name>(?<![^\W\d_])(?:(?P<password>" + _alternation(_FOREIGN_PASSWORD_WORDS) + r")"
    r"|(?P<foreign>" + _alternation(_FOREIGN_SECRET_WORDS) + r"))"
    # An inflected ending ("klucza", "ключом", "anahtarı", "clés", "Schlüssels"): up to four letters.
    r"[^\W\d_]{0,4}+(?![^\W\d_])"
    r"|(?P<unspaced_password>" + _alternation(_UNSPACED_PASSWORD_WORDS) + r")"
    r"|(?P<unspaced>" + _alternation(_UNSPACED_SECRET_WORDS) + r"))(?P<weak>(?!))?(?P<random>(?!))?"
)


def _anchors(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words lowered, without those another one starts ("keys" starts with "key"): fewer searches."""
    lowered = {word.lower() for word in words}
    return tuple(
        sorted(word for word in lowered if not any(w != word and word.startswith(w) for w in lowered))
    )


_FOREIGN_NAME_WORDS = (
    _FOREIGN_PASSWORD_WORDS + _FOREIGN_SECRET_WORDS + _UNSPACED_PASSWORD_WORDS + _UNSPACED_SECRET_WORDS
)


def _is_value_under_foreign_name(match: re.Match[str]) -> bool:
    value = match["value"]
    if _is_placeholder(value) or _DIGEST_RE.match(value) or _PURE_HEX_RE.fullmatch(value):
        return False
    if _looks_random_or_id_and_secret(value):
        return True
    password = match["password"] is not None or match["unspaced_password"] is not None
    return password and _looks_like_password(value)


_NEARBY_ENGLISH_NAMES = (
    "key", "keys", "token", "tokens", "secret", "secrets", "password", "passwd", "pwd", "passphrase", "credential",
    "credentials", "creds", "apikey", "bearer", "cookie", "signature",
)  # fmt: skip
_NEARBY_NAMES = _alternation(_NEARBY_ENGLISH_NAMES + _FOREIGN_NAME_WORDS)
_NEARBY_ANCHORS = _anchors(_NEARBY_ENGLISH_NAMES + _FOREIGN_NAME_WORDS)
_MIN_NEARBY_ENTROPY_BITS = 4.2
_MAX_UNQUALIFIED_GAP = 40
_MIN_UNQUALIFIED_NEARBY_LENGTH = 20
# What stands between a name and a value that is not the secret: the value is a public key, an id or a
# fingerprint of one ("the key id ...", "public key ...").
_NEARBY_NOT_SECRET_RE = re.compile(
    r"\b(?:id|ids|public|pub|fingerprint|hash|digest|checksum|name|named|file|path|ref|reference|version|arn"
    r"|commit|sha|revision|build)\b",
    re.IGNORECASE,
)
# The same words in other languages, as a stem that inflections extend ("identyfikatora", "pública",
# "öffentlichen"), and in scripts written without spaces, where they are glued to the name ("密钥指纹").
_NOT_SECRET_WORDS_ELSEWHERE_RE = re.compile(
    r"\b(?:identifi|identyfikator|идентификатор|kimlik|kennung|primair|primar|primär|первичн|publi[cqkz]|pública"
    r"|público|pubblic|öffentlich|публичн|открыт|empreinte|huella|impronta|odcisk|отпечат|parmak izi|pedido"
    r"|commande|ordine|zamówieni|заказ|sipariş|auftrag|bestellung|bestelling|objedn|hachage|хеш|хэш|контрольн"
    r"|versi[oó]n|версия|sürüm)"
    r"|指纹|指紋|フィンガープリント|公開|公钥|公鑰|ハッシュ|哈希|散列|校验|識別|识别|주문|해시|공개|지문|注文|订单|訂單"
    r"|커밋|コミット|提交|버전|バージョン|版本|编号|編號|番号|번호|序号|序號|号码|號碼|标识|標識|識別子|식별자",
    re.IGNORECASE,
)


_IDENTIFIER_RUN_RE = re.compile(r"[A-Za-z0-9_.-]*+")


# Words after a secret's name in one identifier that make it something else: "password_hash", "token_count",
# "key_id", "secret_name".
_NOT_SECRET_SUFFIX_WORDS = frozenset(
    {"hash", "id", "ids", "count", "file", "path", "name", "type", "url", "length", "ttl", "expiry", "expires",
     "version", "format", "header", "prefix", "ref", "arn", "fingerprint", "endpoint", "policy", "rotation",
     "digest", "checksum", "md5", "sha1", "sha256", "sha512"}
)  # fmt: skip
# A word before a key's name in prose that says which secret it is ("the dd api key", "the routing key").
_KEY_QUALIFIERS = frozenset(
    {"api", "app", "access", "secret", "private", "admin", "auth", "master", "account", "service", "signing",
     "encryption", "routing", "integration", "license", "server", "write", "ingest", "deploy", "upload",
     # "Your key: <hex>" on a console's settings page is the caller's own.
     "your", "my"}
)  # fmt: skip
_LAST_WORD_RE = re.compile(r"([A-Za-z]+)[\s_-]*+$")
# A product's name right before a secret's name ("the Plaid key", "Twilio anahtarı", "Linodeのキー", "Astra
# DB-sleutel") or right after it ("la clave de Cloudflare", "a chave da API do Codecov", "la chiave Vercel",
# "le jeton Azure DevOps") says which secret it is, as "PLAID_SECRET" does: a name of one or two capitalized
# words that are not a sentence's first words.
_PROVIDER_WORD = r"(?:[A-Z][a-z0-9]++[A-Za-z0-9]*+|[A-Z]{2,}+[a-z0-9]*+)"
_PROVIDER_NAME = _PROVIDER_WORD + r"(?:[ .]" + _PROVIDER_WORD + r")?"
_PROVIDER_BEFORE_RE = re.compile(r"(?<![A-Za-z0-9_.-])(?P<provider>" + _PROVIDER_NAME + r")(?:\s|-|の|的)$")
_PROVIDER_AFTER_RE = re.compile(
    r"\s++(?:(?:de|da|do|del|di|du|des|della|dello|von|van|voor|for|of)\s++)?"
    r"(?:(?:la|le|el|o|a|the|l')\s*+)?(?:API\s++(?:de|da|do|del|di|du|von|van)\s++)?(?P<provider>"
    + _PROVIDER_NAME
    + r")"
)
_NOT_PROVIDER_WORDS = frozenset(
    {"the", "a", "an", "my", "our", "your", "this", "that", "these", "new", "old", "le", "la", "les", "el", "los",
     "las", "il", "lo", "der", "die", "das", "de", "het", "o", "os", "um", "uma", "un", "une", "una", "ein",
     "eine", "te", "voici", "note", "use", "set", "get", "error", "warning", "info", "debug", "decision", "api",
     "ci", "id", "ids", "public", "private", "secret", "access", "auth", "its", "his", "her", "their", "no",
     "not", "any", "all", "each", "every", "some", "one", "which", "what", "where", "when", "if", "and", "or",
     "to", "in", "on", "at", "by", "with", "from", "as", "is", "was", "please", "here", "there", "see", "key",
     "token", "password", "ssh", "gpg", "pgp", "rsa", "ssl", "tls", "json", "http", "https", "url", "env"}
)  # fmt: skip


def _names_a_provider(match: re.Match[str], start: int) -> bool:
    text = match.string
    before = _PROVIDER_BEFORE_RE.search(text, max(0, start - 40), start)
    after = _PROVIDER_AFTER_RE.match(text, match.end("name"))
    return any(
        found is not None
        and found.end("provider") <= match.start("value")
        and not {word.lower() for word in re.split(r"[ .]", found["provider"])} & _NOT_PROVIDER_WORDS
        for found in (before, after)
    )


# Commands that fetch, list or remove keys by id ("gpg --recv-keys <fingerprint>", "--delete-key"): the value
# names a public key.
_KEY_OPERATION_WORDS = frozenset(
    {"recv", "receive", "fetch", "list", "delete", "refresh", "search", "locate", "import", "export", "trust"}
)


# A value the text declares with the name: "<name> <up to five words>:" or "<name> ... is" right before it
# ("Klucz do API: <hex>", "la chiave API è <uuid>", "the new key is <key>", "배포용 토큰: <hex>"), in any
# language. Jenkins ("<user>:11<hex>") and Harbor ("robot$<name>+<x>:<secret>") write a user before the
# secret; the user may stand between the label and the value.
_DECLARED_GAP_RE = re.compile(
    r"(?:\s*+[(\[]?(?:[^\s:：()\[\]]{1,12}+:)?[^\s:：()\[\]]{1,24}+[)\]]?){0,6}?"
    # A colon, a dash or an arrow, a copula in one of many languages, or (in scripts without spaces) a
    # topic particle or copula glued to the name ("キーは", "密钥是", "키는").
    r"(?:\s*+[:：=]\s++|\s*+：|\s++(?:—|–|->|→|=>)\s++"
    r"|\s++(?:is|are|it's|now|è|é|est|c'est|ist|lautet|sind|är|er|jest|je|jsou|to|es|está|era|was|fue|será"
    r"|sarà|sera|ficou|fica|agora|quedó|queda|wynosi|это|будет|является|—|adalah|ialah|là|είναι|şu|olan)\s++"
    r"|\s*+(?:は|が|是|为|為|는|은|이|가)\s*+)"
    # An auth scheme's word may stand before the value ("Splunk <uuid>", "Bearer <key>", "SSWS <key>").
    # "deploy / <password>": a user, then the secret after a slash.
    r"(?:[A-Z][A-Za-z]{2,15}+\x20)?(?P<user>[A-Za-z0-9_.$+@-]{1,40}+(?::|\x20/\x20))?"
)
# Words that make a declared value something other than a secret: an id, a digest, a commit, a row's key.
_NOT_DECLARED_WORDS_RE = re.compile(
    r"\b(?:id|ids|uuid|guid|trace|span|request|correlation|commit|sha|hash|digest|checksum|revision|rev|build"
    r"|primary|foreign|partition|sort|cache|idempotency|dedup|row|lookup|object|index|unique|cursor|page|event"
    r"|message|public|pub|fingerprint|kid|vault|ref|path|file|arn|ssm|kms|name|version|sid|user|username"
    r"|login|account|order|count|number|serial|device|session|tx|transaction)\b",
    re.IGNORECASE,
)
_MAX_DECLARED_LOOKBACK = 24
_MAX_DECLARED_LOOKAHEAD = 60


_INFLECTION_RE = re.compile(r"[^\W\d_]{1,4}+(?![^\W\d_])")


def _ends_a_word(match: re.Match[str]) -> bool:
    """The name is a word of its own ("key", not "keyboard"); a name in another language may carry an
    inflected ending ("klucza", "ключом", "anahtarı")."""
    end = match.end("name")
    # The plural the alternation did not prefer ("credential" before "credentials").
    if match.string[end : end + 1] == "s":
        end += 1
    if not _is_word_character(match.string[end : end + 1] or " "):
        return True
    return (
        match["name"].lower() not in _NEARBY_ENGLISH_NAMES
        and _INFLECTION_RE.match(match.string, end) is not None
    )


# Things that have ids: a UUID or hex right after one of these words is its id ("API key for tenant <uuid>",
# "la clé du ticket <uuid>"), whatever credential the sentence names before. Where a credential is handed
# over ("in chat:", "for the billing service:", "for the project:") is not among them; a project's name
# right before an id without a colon is ("Token für Projekt <uuid>").
_ENTITY_WORDS = frozenset(
    {"tenant", "tenants", "workspace", "job", "ticket", "instance", "device", "customer", "cliente", "kunde",
     "subscription", "resource", "run", "task", "issue", "incident", "node", "pod", "container", "member",
     "invoice", "payment", "record", "entry", "item", "document", "case", "deal", "lead", "contact", "order"}
)  # fmt: skip
_ADJACENT_ENTITY_WORDS = frozenset(
    {"project", "projet", "proyecto", "projeto", "progetto", "projekt", "org", "organization", "team", "cluster",
     "repo", "repository", "folder", "bucket", "namespace", "group", "role", "queue", "topic", "stream"}
)  # fmt: skip
_WORD_BEFORE_VALUE_RE = re.compile(r"([^\W\d_]+)([\s:#=(\[\"'`>-]*+)$")


def _follows_an_entity(text: str, start: int) -> bool:
    """The word right before ``start`` names a thing with ids ("tenant", "ticket", "Projekt <uuid>")."""
    found = _WORD_BEFORE_VALUE_RE.search(text, max(0, start - 40), start)
    if found is None:
        return False
    word = found[1].lower()
    return word in _ENTITY_WORDS or (word in _ADJACENT_ENTITY_WORDS and ":" not in found[2])


def _is_declared_value(match: re.Match[str], value: str) -> bool:
    """A key-shaped value right after "<secret's name> ...:" or "... is" (see _DECLARED_GAP_RE)."""
    return _declares(match, value) and (
        _is_key_under_qualified_name("declared_key", value) or _looks_random_or_id_and_secret(value)
    )


def _is_id_shaped(value: str) -> bool:
    return _UUID_RE.fullmatch(value) is not None or _PURE_HEX_RE.fullmatch(value) is not None


_PASSWORD_SYMBOL_RE = re.compile(r"[!#$%&*@^]")
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
_KEY_COMBINATION_WORDS = ("ctrl", "alt+", "shift", "cmd", "option+")


def _is_handed_password(value: str) -> bool:
    """Words, a symbol and digits ("<Word>!<word><digits>", "<word>.<Word>.<Word><digits>%"), as people make
    passwords; not an address, a path or a key combination ("Ctrl+Alt+F12")."""
    lowered = value.lower()
    return (
        _MIN_PASSWORD_LENGTH <= len(value) <= 64
        and _looks_like_password(value)
        and sum(char.isdigit() for char in value) >= 2
        and re.search(r"[A-Za-z]{3}", value) is not None
        and "/" not in value
        and _EMAIL_RE.fullmatch(value) is None
        and not any(word in lowered for word in _KEY_COMBINATION_WORDS)
    )


def _declares(match: re.Match[str], value: str) -> bool:
    """The text declares the value with the name: "<secret's name> ...:" or "... is" right before it, and no
    word around it says it is an id, a digest or a reference."""
    text = match.string
    gap = _DECLARED_GAP_RE.fullmatch(match["gap"])
    if gap is None or not _ends_a_word(match):
        return False
    # The line before the name (a screenshot's "Name: ci-bot" on the line above says nothing of this one).
    before = text[
        max(
            _line_start(text, match.start("name")), match.start("name") - _MAX_DECLARED_LOOKBACK
        ) : match.start("name")
    ]
    label = match["gap"] if gap["user"] is None else match["gap"][: gap.start("user")]
    # What the line says after the value counts too ("token: <sha>  # the commit the cache was built from").
    after = text[match.end("value") : _line_end(text, match.end("value"))][:_MAX_DECLARED_LOOKAHEAD]
    # "not secret" before the name denies it ("Account SID (not secret, it's the username): ...").
    denied = re.search(r"\b(?:not|no|non)\W*+$", before, re.IGNORECASE) is not None
    if denied or any(
        _NOT_DECLARED_WORDS_RE.search(part) or _NOT_SECRET_WORDS_ELSEWHERE_RE.search(part)
        for part in (before, match["name"], label, after)
    ):
        return False
    # Digits alone are a count, a number or a timestamp.
    if value.isdigit():
        return False
    if _is_id_shaped(value) and _follows_an_entity(text, match.start("value")):
        return False
    # A bare "token:" or "key:" before a lone hex run is as often a digest's or a commit's field.
    bare = _is_bare_name(match["name"]) or match["name"].lower() in ("key", "keys")
    # ("the token is <sha>" too: only words between the name and the value say which secret it is).
    words = set(label.replace("：", " ").replace(":", " ").lower().split())
    if words <= _PROSE_VERBS and bare and _PURE_HEX_RE.fullmatch(value):
        return False
    return not (gap["user"] is not None and _PURE_HEX_RE.fullmatch(value) and len(value) < 32)


def _is_random_near_a_secret_name(match: re.Match[str]) -> bool:
    text, value = match.string, match["value"].partition(".")[0].rstrip("=")
    # The whole identifier the name is part of: "idempotency-key" and "password_hash" are not secrets,
    # "PAGERDUTY_ROUTING_KEY" says which key it is.
    start = match.start("name")
    while start > 0 and (_is_word_character(text[start - 1]) or text[start - 1] in ".-"):
        start -= 1
    end = _IDENTIFIER_RUN_RE.match(text, match.end("name")).end()  # type: ignore[union-attr]
    identifier, after = text[start:end], text[match.end("name") : end]
    name = match["name"].lower()
    before = text[max(0, start - 12) : start].lower()
    word_before = _LAST_WORD_RE.search(text, max(0, start - 16), start)
    if (
        {word.lower() for word in _NAME_WORD_RE.findall(after)} & _NOT_SECRET_SUFFIX_WORDS
        or (name in ("key", "keys") and _is_weak_key_name(identifier))
        # "the same idempotency key", "dedupe key for the outbox": a key for what is not access.
        or (name in ("key", "keys") and word_before is not None and _is_weak_key_name(word_before[1]))
        or {word.lower() for word in _NAME_WORD_RE.findall(identifier)} & _KEY_OPERATION_WORDS
        or _NEARBY_NOT_SECRET_RE.search(match["gap"])
        or _NOT_SECRET_WORDS_ELSEWHERE_RE.search(match["gap"])
        or _NOT_SECRET_WORDS_ELSEWHERE_RE.search(text, max(0, start - 16), start)
        or "public" in before
        or "pub" in before
        # An OpenPGP key is named by its public fingerprint or id ("GPG signing key <40 hex>").
        or _OPENPGP_RE.search(before)
    ):
        return False
    # A password of words, a symbol and digits counts only where the text declares it ("a chave nova: ...").
    if _PASSWORD_SYMBOL_RE.search(match["value"]):
        password = match["value"].rstrip(".")
        return _declares(match, password) and _is_handed_password(password)
    if _is_id_shaped(value) and _follows_an_entity(text, match.start("value")):
        return False
    # "sha256:<base64>" and "sha512-<base64>" are digests, "AAAA..." the wire form of an SSH public key.
    lead = text[max(0, match.start("value") - 8) : match.end("value")]
    if _DIGEST_RE.search(lead) or value.startswith("AAAA"):
        return False
    # After "%" the run starts inside a percent-escape (the normalized reading reads it); after "$" it is
    # part of a password hash; after "vault:" or "ref:" it is where the secret is kept.
    marker = text[match.start("value") - 1]
    declared = _is_declared_value(match, value) and "=" not in value and not _is_placeholder(value)
    if declared and marker not in "%$":
        return True
    if marker in "%$" or (
        marker == ":"
        and match.start("value") - 1 > match.end("name")
        and _is_word_character(text[match.start("value") - 2])
    ):
        return False
    # Base64 of a JSON object ("eyJhbGciOi...", a JWT's header alone) or of prose is read by the base64
    # layer, not judged as a key; base64 of a key alone is still the key.
    decoded = _decoded_base64(value)
    if decoded is not None and (decoded.lstrip()[:1] in ("{", "[", "<") or " " in decoded.strip()):
        return False
    # "DATABASE_URL=postgres" is an assignment of its own, not a token.
    if "=" in value or _is_placeholder(value) or _is_placeholder_body(value) or _PUBLIC_VALUE_RE.match(value):
        return False
    # A name that says which secret it is ("SPLUNK_HEC_TOKEN", "the dd api key") makes a UUID or key-sized
    # hex a few words later the key, as it does right after the name.
    qualifier = _LAST_WORD_RE.search(text, max(0, start - 16), start)
    qualified = (len(_NAME_WORD_RE.findall(identifier)) > 1 and not _is_bare_name(identifier)) or (
        qualifier is not None and qualifier[1].lower() in _KEY_QUALIFIERS
    )
    named = identifier if qualifier is None else f"{qualifier[1]}_{identifier}"
    by_provider = _names_a_provider(match, start)
    if not qualified and by_provider:
        qualified, named = True, f"provider_{identifier}"
    # A shorter run (Vonage's 16-character secrets) counts only after a product's name ("Vonage key"): after
    # "API tokens" it is as likely a documented prefix.
    if len(value) < _MIN_UNQUALIFIED_NEARBY_LENGTH:
        return by_provider and _looks_random(value)
    if qualified and (_is_key_under_qualified_name(named, value) or _looks_random_or_id_and_secret(value)):
        return True
    # Past a few words only a name that says which secret it is still points at the value.
    if len(match["gap"]) > _MAX_UNQUALIFIED_GAP:
        return False
    return (
        {"upper", "lower", "digit"} <= _character_classes(value)
        and _looks_random(value)
        and _shannon_entropy(value) >= _MIN_NEARBY_ENTROPY_BITS
    )


def _is_credential_shaped(value: str) -> bool:
    """What a credential handed over by its context looks like: random, a UUID, key-sized hex, a one-case key
    with digits, an id and its secret; never digits alone, a placeholder, an address or a path."""
    if (
        value.isdigit()
        or _is_placeholder(value)
        or _is_placeholder_body(value)
        or "://" in value
        or _CODE_BRACKETS_RE.search(value) is not None
        or _EMAIL_RE.fullmatch(value) is not None
        or _TYPED_RESOURCE_ID_RE.fullmatch(value) is not None
    ):
        return False
    return _is_key_under_qualified_name("handed_key", value) or _looks_random_or_id_and_secret(value)


# How far the line around a finding is read: a text without line breaks is not searched whole for each name.
_MAX_LINE_CONTEXT = 200


def _line_start(text: str, position: int) -> int:
    bound = max(0, position - _MAX_LINE_CONTEXT)
    found = text.rfind("\n", bound, position)
    return found + 1 if found != -1 else bound


def _line_end(text: str, position: int) -> int:
    bound = min(len(text), position + _MAX_LINE_CONTEXT)
    found = text.find("\n", position, bound)
    return found if found != -1 else bound


def _line_around(text: str, start: int, end: int) -> str:
    return text[_line_start(text, start) : _line_end(text, end)]


def _says_not_secret(words: str) -> bool:
    return (
        _NOT_DECLARED_WORDS_RE.search(words) is not None
        or _NOT_SECRET_WORDS_ELSEWHERE_RE.search(words) is not None
    )


def _is_value_listed_under_a_name(match: re.Match[str]) -> bool:
    """A value alone on its line under a line that names a credential and ends with a colon."""
    text = match.string
    value = match["value"].rstrip(".")
    header = _line_around(text, match.start("name"), match.end("name"))
    if not _ends_a_word(match) or _says_not_secret(header) or _says_not_secret(match["value"]):
        return False
    # A name glued into an identifier ("trusted_keys:", "cache_key:") is a config key with a block of its own,
    # which the assignment rules read; a sentence names the credential in words.
    before = text[match.start("name") - 1 : match.start("name")]
    if before and (_is_word_character(before) or before in ".-"):
        return False
    if _is_id_shaped(value) and _follows_an_entity(header, len(header.rstrip().rstrip(":："))):
        return False
    return _is_credential_shaped(value) or (
        _PASSWORD_SYMBOL_RE.search(value) is not None and _is_handed_password(value)
    )


# The value first, then what it is ("Maple!orbit4471 is the new password", "<key> est la clé de prod"): a
# credential-shaped value, a copula and the name ending the clause.
_VALUE_BEFORE_NAME_RE = re.compile(
    r"(?:^|[\s\"'`(])(?P<value>[^\s\"'`()]{8,64}+)[\"'`]?\s++(?:is|was|=|est|ist|es|é|è|будет|это)\s++"
    r"(?:(?:the|my|our|your|a|an|la|le|el|o|a|das|der|die|il)\s++)?"
    r"(?:(?:new|current|temporary|nouveau|nouvelle|nueva|nuevo|neue|neuer|neues|nova|novo|nuovo|nuova)\s++)?"
    r"(?:[A-Za-z][A-Za-z-]{1,15}+\s++)?$"
)
# The name, up to three words saying what for ("de prod", "for staging"), and the clause's end.
_NAME_ENDS_CLAUSE_RE = re.compile(r"s?(?:[ \t]++[^\s\d.,;!?]{1,16}+){0,3}?[ \t]*+(?:$|\r?\n|[.,;!?)—–])")
_MAX_VALUE_BEFORE_NAME = 120


def _value_before_name_spans(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    text, start = match.string, match.start("name")
    if _NAME_ENDS_CLAUSE_RE.match(text, match.end("name")) is None:
        return
    found = _VALUE_BEFORE_NAME_RE.search(
        text, max(_line_start(text, start), start - _MAX_VALUE_BEFORE_NAME), start
    )
    if found is None or _says_not_secret(_line_around(text, found.start("value"), match.end("name"))):
        return
    value = found["value"]
    password = _PASSWORD_SYMBOL_RE.search(value) is not None and _is_handed_password(value)
    if password or _is_credential_shaped(value):
        yield found.span("value")


# Calls that sign in with what they are given ("login(\"<key>\")", "sign_in", "authenticate"), and calls that
# connect or build a client, whose argument is a credential when an error about it follows (a traceback's
# "token rejected", "401 Unauthorized").
_SIGN_IN_CALLS = frozenset(
    {"login", "log_in", "signin", "sign_in", "authenticate", "authorize", "authorise", "auth"}
)
_AUTH_ERROR_RE = re.compile(
    r"\b(?:401|403|unauthori[sz]ed|forbidden|rejected|denied|invalid (?:api )?(?:key|token|credentials?)"
    r"|[A-Za-z]*auth[A-Za-z]*error|permissionerror|authentication failed)\b",
    re.IGNORECASE,
)
_MAX_AUTH_ERROR_DISTANCE = 400
_NOT_SECRET_KEYWORD_WORDS = frozenset(
    {"id", "ids", "user", "username", "name", "email", "host", "url", "region", "project", "org", "account",
     "path", "file", "scope", "tenant", "realm", "database", "db", "uuid", "client"}
)  # fmt: skip


def _is_key_of_an_auth_call(match: re.Match[str]) -> bool:
    value = match["value"]
    keyword = match["keyword"] or ""
    if {word.lower() for word in _NAME_WORD_RE.findall(keyword)} & _NOT_SECRET_KEYWORD_WORDS:
        return False
    if _names_a_location(value) or not _is_credential_shaped(value):
        return False
    text = match.string
    rejected = _AUTH_ERROR_RE.search(text, match.end(), match.end() + _MAX_AUTH_ERROR_DISTANCE) is not None
    # A UUID, hex or a one-case run is as often the id of what is authorized ("gateway.authorize(<payment
    # id>)"): only an error about the credential makes it one. A random run is a key by itself.
    if not _looks_random_or_id_and_secret(value):
        return rejected
    return rejected or match["call"].lower() in _SIGN_IN_CALLS


# What people write around a key they hand over, in any language: the secret's name, or what is done with
# it (logging in, authorizing, rotating, revoking, a 401 it caused). A key-shaped value is judged by
# these words rather than by its own format, which the rules above cannot know for every provider.
_CONTEXT_ENGLISH_CUES = (
    *_NEARBY_ENGLISH_NAMES,
    "passwords", "pass", "api key", "access key", "private key", "login", "log in", "logon", "sign in",
    "signin", "authenticate", "authenticates", "authenticated", "authentication", "authorization", "auth",
    "hardcode", "hardcoded", "revoked", "revoke", "rotate", "rotated", "rotation", "leaked", "unauthorized",
    "unauthorised", "rejected",
)  # fmt: skip
# Other languages' words, which take endings ("Nøkkelen", "klucza", "ключом", "Schlüssels").
_CONTEXT_FOREIGN_CUES = _FOREIGN_PASSWORD_WORDS + _FOREIGN_SECRET_WORDS
# Scripts written without spaces glue these to the words around them.
_CONTEXT_UNSPACED_WORDS = (
    _UNSPACED_PASSWORD_WORDS + _UNSPACED_SECRET_WORDS + ("鍵", "キー", "키", "คีย์", "รหัส")
)


def _longest_first(words: tuple[str, ...]) -> str:
    return _alternation(tuple(sorted(set(words), key=len, reverse=True)))


_CONTEXT_CUE_RE = re.compile(
    r"(?:(?<![^\W\d_])|(?-i:(?<=[a-z])(?=[A-Z])))(?:(?:"
    + _longest_first(_CONTEXT_ENGLISH_CUES)
    + r")(?![a-z])|(?:"
    + _longest_first(_CONTEXT_FOREIGN_CUES)
    + r")[^\W\d_]{0,4}+(?![^\W\d_]))|\b40[13]\b|(?<=[_.-])(?:sk|pat)(?![A-Za-z0-9])|(?-i:\bPAT\b)|"
    + _longest_first(_CONTEXT_UNSPACED_WORDS),
    re.IGNORECASE,
)
# What happened to a key, said right after it ("... the other was revoked", "| gh auth login --with-token").
_CONTEXT_EVENT_AFTER_RE = re.compile(
    # A console's buttons under a key ("Copy   Revoke") and a chat's next line ("oops wrong channel, rotating").
    r"\b(?:revoked?|rotated|rotate|rotating|regenerated?|leaked|compromised|rejected|unauthori[sz]ed)\b"
    r"|\b40[13]\b|^\s*+[(\[]copy[)\]]",
    re.IGNORECASE,
)
# Words that make a value near a cue something else: the id, digest or public half of a key, a commit, a
# request, an order ("the key id", "public key", "token count", "commit ... fixes the login").
_CONTEXT_NOT_SECRET_RE = re.compile(
    r"(?:(?<![^\W\d_])|(?-i:(?<=[a-z])(?=[A-Z]))|(?<=_))(?:id|ids|uuid|guid|ulid|ksuid|nanoid|cuid|identifier|trace|traceparent|span|request|req"
    r"|correlation|commit|commits|sha|sha1|sha256|sha512|md5|hash|hashes|hashed|digest|checksum|integrity|etag"
    r"|revision|rev|build(?![\s_-]*+(?:logs?|output|steps?|scripts?)\b)|release|version|primary|foreign|partition|sort"
    r"|cache|idempotency|dedup|dedupe|row|lookup"
    r"|object|index|cursor|page|event|message|public|publishable|pub|fingerprint|kid|nonce|state|salt|csrf|xsrf"
    r"|vault|ref|path|file|arn|ssm|kms|name|named|order|invoice|customer|image|chunk|cid|count|length|prefix"
    r"|type|format|header|expiry|expires|ttl|url|uri|endpoint|policy|example|placeholder|sample|dummy|fake"
    r"|anon|anonymous|site|device|sid|username|like|docs|documented|documentation|encrypted|ciphertext"
    r"|recv|receive|verify|verification|certificate|cert|ssh|gpg|pgp|gnupg|openpgp|authorized|known|usage)(?![a-z])"
    # "not secret", "no token needed": the words deny what the cue says.
    r"|\b(?:not|no|non|isn't|without|never)[\s-]++(?:an?\s++)?(?:secret|token|key|password|credential)",
    re.IGNORECASE,
)
_OPENPGP_RE = re.compile(r"\b(?:gpg|pgp|gnupg|openpgp)\b")
# A comment right after the value that says what it is ("<hex>  # the commit the cache was built from").
_CONTEXT_NOT_SECRET_AFTER_RE = re.compile(
    r"^[\s\"'`,;)]*+(?:#|//|--|\()\s*+(?:(?:the|a|an|its|our)\s++)?(?:commit|sha|hash|digest|checksum|fingerprint"
    r"|id|public|example|placeholder|sample|fake|dummy)\b",
    re.IGNORECASE,
)
# Where a value is a URL's part (judged by the URL rules) or sealed in an encrypted envelope (SOPS' "ENC[").
_CONTEXT_ENVELOPE_RE = re.compile(r"://|ENC\[|vault:")
_CUE_RUN_RE = re.compile(r"[A-Za-z0-9+/=]*+")
_WORD_BEFORE_RE = re.compile(r"[^\W\d_]*+[\s_.-]?$")
_CLAUSE_END_RE = re.compile(r"[;,.!?。！？]")
_CONTEXT_SENTENCE_END_RE = re.compile(r"[.!?。！？](?:\s|$)")
_MAX_CONTEXT_BEFORE = 120
_MAX_WEAK_CONTEXT_GAP = 60
# Pusher's secrets are 20 hex digits; shorter hex is a short commit or a colour.
_MIN_CONTEXT_HEX_LENGTH = 20
_MIN_CONTEXT_JOINED_PIECE = 6
_HANDED_OVER_RE = re.compile(
    r"\b(?:paste[ds]?|pasting|(?:use|using|try|trying|tried|tested(?: locally)?) (?:this|it|with)|new one(?: is)?"
    r"|(?:please|just|now|then|pls) use|current one(?: is)?"
    r"|here(?: it is| you go)|this one)\b[^\n]{0,24}$",
    re.IGNORECASE,
)
_HANDED_OVER_AFTER_RE = re.compile(
    r"[`'\")]?\s++(?:works|worked|is working|is valid|expires)\b", re.IGNORECASE
)
# A short commit is 7 to 12 hex digits, a full one 40; keys in hex are 32 and longer.
_MIN_HANDED_HEX_LENGTH = 32
_MAX_HANDED_EXPLAINED_AFTER = 12
_MAX_FOLLOWING = 160
_FOLLOWING_LINES = 3
# A client's class built with a value ("new VendorClient(", "sdk.Client("), not a lookup ("getClient(").
_CLIENT_CONSTRUCTOR_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:[A-Z][A-Za-z0-9_]*?)?Client[A-Za-z0-9_]*+\(\s*+[\"'`]$"
)
_SDK_CALL_RE = re.compile(r"(?:Client|client|\.init|\.configure|\.setup)[A-Za-z0-9_]*+\(\s*+[\"'`]$")
_DASHED_HEX_RE = re.compile(r"[0-9a-fA-F]{8,}+(?:-[0-9a-fA-F]{4,}+)++")
_MIN_DASHED_HEX_DIGITS = 32


def _context_lines(text: str, start: int) -> tuple[str, str, bool]:
    """The line before the value, the line above it, and whether the value opens its line (a key pasted
    on a line of its own under "here it is:")."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - _MAX_CONTEXT_BEFORE) : start]
    above = ""
    if line_start > 0:
        above_end = line_start - 1
        while above_end > 0 and text[above_end - 1] in "\r\n \t":
            above_end -= 1
        above_start = text.rfind("\n", 0, above_end) + 1
        above = text[max(above_start, above_end - _MAX_CONTEXT_BEFORE) : above_end]
    return before, above, before.strip(" \t>*-`'\"#") == ""


# Every match of _CONTEXT_CUE_RE starts where the lowered text holds one of these: its words, "40" of "401"
# and "403", "sk" or "pat" after "_", "." or "-" (one character later), or "PAT" as written. In ASCII text a
# case-insensitive match of a word is where the lowered text holds the lowered word, and no ASCII letter
# matches a letter of the other scripts' words (tests/common/test_secret_fast_paths.py checks both). So in
# an ASCII window the cue pattern is tried only at these places, the first of them at or after the end of
# the last cue found, as its own search would go on: most windows hold none, and a case-insensitive
# alternation of two hundred words costs about a microsecond at each character where it is tried.
_ASCII_CUE_HINT_RE = re.compile(
    _word_trie(
        frozenset(word.lower() for word in _CONTEXT_ENGLISH_CUES + _CONTEXT_FOREIGN_CUES if word.isascii())
        | {"40", "_sk", ".sk", "-sk", "_pat", ".pat", "-pat"}
    )
)


def _cue_matches(text: str) -> Iterator[re.Match[str]]:
    """``_CONTEXT_CUE_RE.finditer(text)``, tried in ASCII text only where a cue can start."""
    if not text.isascii():
        yield from _CONTEXT_CUE_RE.finditer(text)
        return
    lowered = text.lower()
    starts = [
        start + 1 if lowered[start] in "_.-" else start
        for start in _starts_of_any_word(lowered, _ASCII_CUE_HINT_RE)
    ]
    found = text.find("PAT")
    while found != -1:
        starts.append(found)
        found = text.find("PAT", found + 1)
    position = 0
    for start in sorted(starts):
        if start >= position and (cue := _CONTEXT_CUE_RE.match(text, start)) is not None:
            yield cue
            position = cue.end()


def _word_cues(text: str) -> list[re.Match[str]]:
    # A cue inside a random run ("...sWEmj9z7aXS2crVMspbn5+Pwd") is part of another key, not a word.
    return [cue for cue in _cue_matches(text) if not _looks_random(_cue_run(text, cue.start(), cue.end()))]


def _is_bare_cue(text: str, cue: re.Match[str]) -> bool:
    """A lone English "token" or "key": under it hex is a commit or a digest as often as a key ("the token
    is <sha>", "merge key: <sha>"); "AUTH_TOKEN", "the api key" or "la clé" say which key."""
    start, end = cue.start(), cue.end()
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    end = _IDENTIFIER_RUN_RE.match(text, end).end()  # type: ignore[union-attr]
    if text[start:end].lower().strip("_.-") not in _BARE_CUE_WORDS:
        return False
    qualifier = _LAST_WORD_RE.search(text, max(0, start - 16), start)
    return qualifier is None or qualifier[1].lower() not in _KEY_QUALIFIERS


# "secret", "password" and "credential" are not used for ids and digests; "token" and "key" are ("page
# token", "cache key"), so under them alone hex needs a word that says which key it is.
_BARE_CUE_WORDS = frozenset({"token", "tokens", "key", "keys"})


def _denied_cue(text: str, cue: re.Match[str]) -> bool:
    """Whether the word right before the cue, or anything between the cue and the value, makes the value an
    id, digest or public half ("public key", "client token", "the key id", "password_hash", "not secret")."""
    word_before = _WORD_BEFORE_RE.search(text, max(0, cue.start() - 24), cue.start())
    # A key named for what it may do or where it is used ("search key", "client key", "cache key") is the
    # public or non-secret kind, as for a key's name (_WEAK_KEY_NAME_WORDS).
    weak_key = (
        cue[0].lower() in ("key", "keys")
        and word_before is not None
        and word_before[0].strip(" _.-").lower() in _WEAK_KEY_NAME_WORDS
    )
    # Between the cue and the value, only the value's own sentence: "the rotated credential was not in the
    # vault. Working value for now: <key>" speaks of a vault, not of the key.
    sentence_start = cue.start()
    for sentence_end in _CONTEXT_SENTENCE_END_RE.finditer(text, cue.end()):
        sentence_start = sentence_end.end()
    return bool(
        weak_key
        # An OpenPGP key a few words before ("GPG signing key <fingerprint>") is named by its public id.
        or _OPENPGP_RE.search(text[max(0, cue.start() - 24) : cue.start()].lower())
        or _CONTEXT_NOT_SECRET_RE.search(text, sentence_start)
        or (word_before and _CONTEXT_NOT_SECRET_RE.search(f"{word_before[0]} {cue[0]}"))
    )


def _context_value_strength(value: str) -> str | None:
    """How much a value needs its context: "strong" if it looks random on its own, "weak" if it is a key only
    where the words around it say so (a UUID, hex, one case with digits, a made-up password), else None."""
    classes = _character_classes(value)
    if _looks_random(value) or (
        # Base64 with "=" inside (Adyen's "AQE..." keys) is not a path, though it holds "/".
        "+" in value
        and "/" in value
        and _PATH_WORD_RE.search(value) is None
        and _looks_random(re.sub(r"[/=]", "", value))
    ):
        return "strong"
    if (
        _UUID_RE.fullmatch(value)
        or (_PURE_HEX_RE.fullmatch(value) and len(value) >= _MIN_CONTEXT_HEX_LENGTH)
        # Hex in dashed groups that is not a UUID (Mailgun's "<32 hex>-<8 hex>-<8 hex>").
        or (_DASHED_HEX_RE.fullmatch(value) and len(value.replace("-", "")) >= _MIN_DASHED_HEX_DIGITS)
    ):
        return "weak"
    # One case and digits in one run (Mattermost's 26, Azure DevOps' 52); "OAUTH2_PROVIDER_MODEL" is a name.
    if classes in ({"lower", "digit"}, {"upper", "digit"}) and len(value) >= 20 and value.isalnum():
        return "weak" if _shannon_entropy(value) >= _MIN_RANDOM_ENTROPY_BITS else None
    if _looks_like_password(value) and "digit" in classes and classes & {"lower", "upper"}:
        return "weak"
    return None


def _is_other_than_a_key(value: str) -> bool:
    """A key-shaped value that is something else: a placeholder, a name ("ServiceApiKey2"), a public value,
    a digest, the wire form of an SSH public key ("AAAA..."), base64 of JSON or prose."""
    if (
        value.startswith("AAAA")
        or _PUBLIC_VALUE_RE.match(value)
        or _DIGEST_RE.match(value)
        or _word_cues(value)
        or _is_placeholder(value)
        or _is_placeholder_body(value)
    ):
        return True
    decoded = _decoded_base64(value) if len(value) % 4 == 0 else None
    return decoded is not None and (
        decoded.lstrip()[:1] in ("{", "[", "<")
        or " " in decoded.strip()
        # Text in a script without spaces (Japanese, Chinese): letters, not a key's ASCII.
        or sum(not char.isascii() and char.isalpha() for char in decoded) * 2 > len(decoded)
    )


def _cue_run(text: str, start: int, end: int) -> str:
    while start > 0 and text[start - 1] in _KEY_RUN_CHARS:
        start -= 1
    return text[start : _CUE_RUN_RE.match(text, end).end()]  # type: ignore[union-attr]


_KEY_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


# Any key-shaped run; a name and "=" before it are read as part of its context ("AWS_SESSION_TOKEN=<hex>").
_CREDENTIAL_CONTEXT_RE = re.compile(
    r"(?<![A-Za-z0-9_+/.~$%-])(?>(?:[A-Za-z_][A-Za-z0-9_.-]{0,63}+=)?)"
    r"(?P<token>[A-Za-z0-9][A-Za-z0-9_+/=.~!*#$%^&-]{15,199}+)"
)


def _credential_context_spans(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    value = match["token"].rstrip(".!*#$%^&~-")
    if _is_value_in_credential_context(match.string, match.start("token"), value):
        yield match.start("token"), match.start("token") + len(value)


def _is_value_in_credential_context(text: str, start: int, value: str) -> bool:
    if _is_in_an_envelope(text, start, value):
        return False
    # Judged once and handed to both checks: it is the costliest part of them.
    strength = _context_value_strength(value)
    return (
        strength is not None
        and _is_said_to_be_a_key(text, start, value, strength)
        and not _is_other_than_a_key(value)
        and not _is_named_as_something_else(text, start, value, strength)
    )


_MAX_WORDS_AFTER_VALUE = 24
# Words that say a value is an id, a digest or a public half wherever they stand on its line (not the words
# about placeholders, which a domain such as "acme.example" holds).
_LINE_NOT_SECRET_RE = re.compile(
    r"(?:(?<![^\W\d_])|(?-i:(?<=[a-z])(?=[A-Z]))|(?<=_))(?:id|ids|uuid|guid|ulid|identifier|trace|span|request"
    r"|correlation|commit|sha|sha1|sha256|sha512|md5|hash|hashes|hashed|digest|checksum|fingerprint|revision"
    r"|build|primary|foreign|partition|cache|idempotency|dedup|row|index|cursor|event|message|public|publishable"
    r"|pub|kid|nonce|salt|order|invoice|count|version|reverted|revert|merged|cherry-picked)(?![a-z])",
    re.IGNORECASE,
)


def _is_named_as_something_else(text: str, start: int, value: str, strength: str) -> bool:
    """A value that is a key only by its context (a UUID, hex, one case with digits) whose line says it is
    something else, anywhere on it and in any language ("clé primaire", "Hash des Passworts", "密钥指纹"), or
    that right follows a thing with ids ("API key for tenant <uuid>"); digits alone are a number. A value
    alone on its line is read with the line above, which must be a sentence, not a config key
    ("trusted_keys:")."""
    if value.isdigit():
        return True
    # Hex of 64 digits looks random on its own, and a digest as well.
    if strength != "weak" and not _is_id_shaped(value):
        return False
    if _is_id_shaped(value) and _follows_an_entity(text, start):
        return True
    # The line up to the value and a few words after it ("<uuid> (request id)"); what the line says later is
    # about something else ("..., falling back to anonymous").
    end = start + len(value)
    lines = [text[_line_start(text, start) : min(_line_end(text, end), end + _MAX_WORDS_AFTER_VALUE)]]
    _before, above, opens_line = _context_lines(text, start)
    if opens_line and above:
        if " " not in above.strip():
            return True
        lines.append(above)
    return any(
        _NOT_SECRET_WORDS_ELSEWHERE_RE.search(line) or _LINE_NOT_SECRET_RE.search(line) for line in lines
    )


def _is_explained(near: str, lines: list[str]) -> bool:
    """Whether words say a value is something other than a key: an id's or a digest's name anywhere on its
    lines, in any language, or a broader word ("vault", "page", "name") only in ``near``, right around it."""
    return bool(
        _CONTEXT_NOT_SECRET_RE.search(near)
        or any(
            _LINE_NOT_SECRET_RE.search(line) or _NOT_SECRET_WORDS_ELSEWHERE_RE.search(line) for line in lines
        )
    )


def _is_in_an_envelope(text: str, start: int, value: str) -> bool:
    """The value's whole run (back to the last space) is a URL's part or sealed in an envelope, judged by
    other rules, or a digest or a fingerprint whatever the line says ("SHA256:<base64>")."""
    floor = max(0, start - 200)
    run_start = max(
        text.rfind(" ", floor, start), text.rfind("\n", floor, start), text.rfind("\t", floor, start)
    )
    return bool(
        _CONTEXT_ENVELOPE_RE.search(text, max(run_start, floor), start)
        or _DIGEST_RE.search(text, max(run_start, floor), start + len(value))
    )


def _is_said_to_be_a_key(text: str, start: int, value: str, strength: str) -> bool:
    """Whether the words around a key-shaped value (``strength``: _context_value_strength) say it is a key."""
    end = start + len(value)
    after = text[end : end + 100].split("\n", 2)
    if _CONTEXT_NOT_SECRET_AFTER_RE.search(after[0]):
        return False
    before, above, opens_line = _context_lines(text, start)
    # A random string as an SDK client's first argument ("cohere.ClientV2('<key>')", "rollbar.init('<key>'")
    # is its key; so is one handed over or tried out ("paste <key> into the dialog", "the new one is <key>",
    # "tested locally with <key>", "<key> works for the sandbox").
    if strength == "strong" and (
        _SDK_CALL_RE.search(before)
        or _HANDED_OVER_RE.search(before[-60:])
        or _HANDED_OVER_AFTER_RE.match(text, end)
        or (opens_line and _HANDED_OVER_RE.search(above[-60:]))
    ):
        return not _CONTEXT_NOT_SECRET_RE.search(before[-40:])
    # A client built with a UUID or key-sized hex ("new VendorClient(\"<uuid>\")") is built with its key.
    if (
        strength == "weak"
        and _CLIENT_CONSTRUCTOR_RE.search(before)
        and _is_id_shaped(value)
        and len(value) >= _MIN_HANDED_HEX_LENGTH
    ):
        return True
    # Hex or a UUID handed over right there ("the new one is <uuid>", "tested locally with `<hex>`", "<hex>
    # works for the sandbox"), with no word on the line that makes it a commit, a digest or an id.
    if (
        strength == "weak"
        and (
            _UUID_RE.fullmatch(value)
            or (_PURE_HEX_RE.fullmatch(value) and len(value) >= _MIN_HANDED_HEX_LENGTH)
        )
        and (_HANDED_OVER_RE.search(before[-30:]) or _HANDED_OVER_AFTER_RE.match(text, end))
    ):
        # The broad words only close by ("after they pasted <hex> into the admin page" names a page, not it).
        line = text[_line_start(text, start) : _line_end(text, end)]
        near = before[-_MAX_EXPLAINED_BEFORE:] + " " + text[end : end + _MAX_HANDED_EXPLAINED_AFTER]
        return not _is_explained(near, [line])
    cues = _word_cues(before)
    if cues:
        if _denied_cue(before, cues[-1]):
            return False
        if strength == "strong":
            return True
        # A weak value needs a cue close by in the same sentence; under a bare "key" hex needs another
        # ("returned 401 for key <hex>").
        for cue in reversed(cues):
            gap = before[cue.end() :]
            if len(gap) > _MAX_WEAK_CONTEXT_GAP or _CONTEXT_SENTENCE_END_RE.search(gap):
                break
            if not (_PURE_HEX_RE.fullmatch(value) and _is_bare_cue(before, cue)):
                return True
    # A key alone on its line takes its meaning from the line above ("here it is:"); a random one also
    # from a block's header line ("variable \"api_token\" {" above "default = ...").
    if not cues and (opens_line or strength == "strong"):
        above_cues = _word_cues(above)
        if above_cues and not _denied_cue(above, above_cues[-1]):
            return True
    # What is said right after it: "... the other was revoked", "| gh auth login --with-token", a chat's next
    # lines ("oops wrong window" / "rotating now").
    following = " ".join(text[end : end + _MAX_FOLLOWING].split("\n", _FOLLOWING_LINES)[:_FOLLOWING_LINES])
    if _CONTEXT_EVENT_AFTER_RE.search(following) and not _CONTEXT_NOT_SECRET_RE.search(before[-24:]):
        return True
    if strength == "strong" and not cues:
        # A name right after it in the same clause ("<key> | gh auth login --with-token"), not in the next.
        same_line = after[0][:40]
        later = _word_cues(same_line)
        return (
            bool(later)
            and not _CONTEXT_NOT_SECRET_RE.search(same_line, 0, later[0].end())
            and not _CLAUSE_END_RE.search(same_line, 0, later[0].start())
        )
    return False


# --- a random string that nothing explains -----------------------------------------------------------
# Where no rule knows the format and no word names a credential ("note to self: <key>", "can someone check if
# this still works? <key>", "👉 <key> 👈"), a string random in both cases is refused unless something says
# what else it is. Ids and digests are stored as soon as the text says which ("request id <value>", "batch
# <value>"); an unexplained one is more often a key pasted in passing than anything else.
#
# Object ids that name their kind by a documented prefix: Stripe's ("cus_", "pi_", "pm_"...), OpenAI's
# ("chatcmpl-", "asst_", "org-"), Clerk's "user_", Airtable's "app"/"tbl", Vercel's "dpl_", GitHub's
# advisories ("GHSA-"). Secret prefixes (Stripe's "sk_", "rk_", "whsec_") have rules of their own above.
_PUBLIC_ID_PREFIX_RE = re.compile(
    r"(?:acct|ba|bank|btok|card|ch|cn|cus|dp|evt|fr|ii|il|in|inv|ipi|li|mbur|pi|pm|po|price|prod|py|pyr|re"
    r"|seti|si|sli|src|sub|tok|tr|trr|txn|txi|req|sess|plan|coupon|promo|asst|thread|run|msg|file|chatcmpl|cmpl"
    r"|org|proj|user|usr|dpl|prj|team|app|tbl|fld|rec|viw|act|wh|we|batch|ftjob|vs|step|call|toolu|resp|GHSA)"
    r"[_-](?=[A-Za-z0-9]{4})"
)
# A file's name ("vendors~main.<hash>.js"), a URL's query ("cus_<id>&limit=100"), a dotted cloud id
# ("ocid1.instance.oc1...."), Cloudflare's ray id ("<16 hex>-FRA").
_FILE_EXTENSION_RE = re.compile(
    r"\.(?:js|mjs|cjs|css|map|html?|png|jpe?g|gif|svg|webp|woff2?|ttf|json|tar|gz|tgz|zip|whl|jar|so|dll|exe"
    r"|bin|txt|log|py|rb|go|rs|ts|tsx|jsx|wasm)$",
    re.IGNORECASE,
)
_RAY_ID_RE = re.compile(r"[0-9a-f]{16}-[A-Z]{3}")
# An IPFS content id, version 0: "Qm" and 44 base58 characters, a public digest.
_IPFS_CID_RE = re.compile(r"Qm[1-9A-HJ-NP-Za-km-z]{44}")
# Words after which a value is handed over rather than named ("the new one is <key>", "tested with <key>",
# "la nueva es <key>"); after any other word, the word names what the value is the id of ("batch <ksuid>",
# "session <id> expired", "refund <id>").
_HANDING_WORDS = frozenset(
    {"is", "are", "was", "were", "be", "with", "use", "using", "try", "tried", "paste", "pasted", "here", "this",
     "the", "new", "one", "to", "for", "as", "and", "or", "es", "est", "ist", "é", "è", "är", "er", "je", "jest",
     "adalah", "ni", "là", "это", "ez", "este", "nová", "nuova", "nueva", "nova", "neue", "nouvelle"}
)  # fmt: skip
_WORD_RIGHT_BEFORE_RE = re.compile(r"([^\W\d_]++) $")
_DATA_URI_RE = re.compile(r"(?:base64,|data:)$")
_CASE_PIECE_RE = re.compile(r"[A-Z]?[a-z]++|[A-Z]++(?![a-z])")
# Random strings' pieces between case changes average about 2 characters (at most 3.2 in every part's
# refused credentials); words' average 3.3 and more ("toHaveValue/toBeEmpty", "GPL-3.0-or-later").
_MIN_WORD_PIECE_LENGTH = 3.25
# Letters and digits a random string must hold: fewer are a version, a short name or a code.
_MIN_RANDOM_STRING_ALNUM = 16
_REPEATED_BLOCK = 5
_ASSIGNED_BEFORE_RE = re.compile(
    r"(?:=|(?:[A-Za-z][A-Za-z0-9]*+[_.-][A-Za-z0-9_.-]*+|[a-z]++[A-Z][A-Za-z0-9_]*+|[\"'][^\"'\n]{1,60}[\"'])\s*+:)"
    r"\s*+[\"'`]?$"
)
_CALL_BEFORE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*+\(\s*+[\"'`]?$")
_MAX_EXPLAINED_BEFORE = 40
_MAX_EXPLAINED_AFTER = 24
# A line joined to the next must not make a random string of a header word and a lower-case name
# ("STATUS" + "orders-0r1re4ksee-qhziu").
_MIN_RANDOM_JOINED_PIECE = 8


def _is_unexplained_random_string(text: str, start: int, value: str) -> bool:
    # The cheap tests first: most runs a text holds are words, names and URLs' pieces.
    # A file's name, a URL's query, a dotted cloud id, a percent-encoded run (judged decoded).
    if "&" in value or "~" in value or "%" in value or value.count(".") >= 2:
        return False
    # A run longer than any key (the pattern stops at 200 characters): data, not a key.
    if _KEY_RUN_CHARS.issuperset(text[start + len(value) : start + len(value) + 1] or " "):
        return False
    classes = _character_classes(value)
    # Both cases: hex, UUIDs and one-case runs are digests, ids and addresses (bech32's "bc1q...", IPFS'
    # "bafy...") too often to be refused without a word that calls them a key.
    if not {"upper", "lower"} <= classes or sum(char.isalnum() for char in value) < _MIN_RANDOM_STRING_ALNUM:
        return False
    if (
        _PUBLIC_ID_PREFIX_RE.match(value)
        or _FILE_EXTENSION_RE.search(value)
        or _RAY_ID_RE.fullmatch(value)
        or _IPFS_CID_RE.fullmatch(value)
        # A documented example is public wherever it appears ("123456:ABC-DEF1234ghIkl-..." in a quote).
        or any(value in example for example in _DOCUMENTED_EXAMPLE_TOKENS)
        or not _looks_random(value)
        or _is_made_of_words(value)
        or _repeats_itself(value)
    ):
        return False
    # Key material in a PEM block (a private key has its own rule), base64 data ("data:image/png;base64,").
    if "-----BEGIN" in text or "-----END" in text or _DATA_URI_RE.search(text, max(0, start - 8), start):
        return False
    named = _WORD_RIGHT_BEFORE_RE.search(text, max(0, start - 40), start)
    if named is not None and named[1].lower() not in _HANDING_WORDS:
        return False
    # A value under a name ("data-sitekey=\"<key>\"", "\"build_hash\": \"<hash>\"") is judged by its name, by the
    # rules that know secrets' names; a label in prose ("note to self: <key>") names no value.
    if _ASSIGNED_BEFORE_RE.search(text, max(0, start - 80), start):
        return False
    # A call's argument is what the call takes ("oauth('<client id>')"); the credential-context rule knows
    # the calls that take a key.
    if _CALL_BEFORE_RE.search(text, max(0, start - 40), start):
        return False
    if _is_in_an_envelope(text, start, value) or _is_other_than_a_key(value) or _decodes_to_text(value):
        return False
    # An id's or a digest's name anywhere on its line (or, for a value on a line of its own, the line above);
    # the broader words that make a value something else (a reference to a vault, a name, a URL) only
    # close by: "until the vault is back: <key>" is still a key.
    end = start + len(value)
    line_start = _line_start(text, start)
    lines = [text[line_start : _line_end(text, end)]]
    before, above, opens_line = _context_lines(text, start)
    if opens_line and above:
        lines.append(above)
    # In a table's row, the table's first line names the columns ("| token_count | key_id |").
    if lines[0].lstrip().startswith("|"):
        lines.append(_table_header(text, line_start))
    near = before[-_MAX_EXPLAINED_BEFORE:] + " " + text[end : end + _MAX_EXPLAINED_AFTER].split("\n", 1)[0]
    return not _is_explained(near, lines)


def _is_made_of_words(value: str) -> bool:
    """Words with capitals and digits ("getUserSettingsV2Handler", "Harbor-lantern-7319!"): a name in code or
    a made-up password, which only a word for a password makes a credential. In a random string the case
    flips every two letters or so."""
    pieces = _CASE_PIECE_RE.findall(value)
    return bool(pieces) and sum(map(len, pieces)) >= _MIN_WORD_PIECE_LENGTH * len(pieces)


def _repeats_itself(value: str) -> bool:
    """A block written twice ("aB3dE5fG7haB3dE5fG7h"): filler or a pattern, not drawn at random."""
    return any(
        value.find(value[index : index + _REPEATED_BLOCK], index + 1) != -1
        for index in range(len(value) - 2 * _REPEATED_BLOCK + 1)
    )


def _decodes_to_text(value: str) -> bool:
    """Base64 of printable text ("SGFyYm9y..." in a ConfigMap): the decoded reading judges what it says."""
    decoded = _decoded_base64(value)
    return decoded is not None and decoded.isprintable()


def _table_header(text: str, line_start: int) -> str:
    header = line_start
    while header > 0:
        previous = text.rfind("\n", 0, header - 1) + 1
        if not text[previous:header].lstrip().startswith("|"):
            break
        header = previous
    return text[header : _line_end(text, header)]


def _unexplained_random_spans(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    value = match["token"].rstrip(".!*#$%^&~-")
    if _is_unexplained_random_string(match.string, match.start("token"), value):
        yield match.start("token"), match.start("token") + len(value)


_APP_PASSWORD_NAME_RE = re.compile(
    r"(?:pass(?:word|wd)?|pwd|"
    + _longest_first(_FOREIGN_PASSWORD_WORDS + _UNSPACED_PASSWORD_WORDS)
    + r")[^\n]{0,40}$",
    re.IGNORECASE,
)
# What says it is an app password rather than words: the kind ("app password", "App-Passwort", "senha de
# app") or the service it signs in to.
_APP_PASSWORD_KIND_RE = re.compile(r"app|aplica|applica|anwendung|gmail|google|smtp|imap|mail", re.IGNORECASE)


_UNPRONOUNCEABLE_RE = re.compile(r"^[^aeiouy]{4}$|[^aeiouy]{3}")


def _is_app_password(match: re.Match[str]) -> bool:
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    before = match.string[max(line_start, match.start() - 60) : match.start()]
    named = (
        _APP_PASSWORD_NAME_RE.search(before) is not None and _APP_PASSWORD_KIND_RE.search(before) is not None
    )
    # In groups of four, the form is Google's own: any word for a credential before it will do ("la cheia
    # nouă: abcd efgh ijkl mnop").
    if not named and not (" " in match["value"] and _word_cues(before)):
        return False
    # Random letters, not words: some group of four has no vowel or three consonants in a row.
    letters = match["value"].replace(" ", "")
    return any(_UNPRONOUNCEABLE_RE.search(letters[i : i + 4]) for i in range(0, 16, 4))


_HUAWEI_ACCESS_KEY_RE = re.compile(r"[A-Z0-9]{20}")
_CODE_BRACKETS_RE = re.compile(r"[{}()\[\]]")


def _is_handed_over_credential(match: re.Match[str]) -> bool:
    value = match["value"].rstrip(".")
    # "{KEY}" and "mixed_run(14)" are code that builds the value, a URL is judged by its own rules.
    if (
        _is_placeholder(value)
        or _is_placeholder_body(value)
        or "://" in value
        or _CODE_BRACKETS_RE.search(value)
    ):
        return False
    # "<key id>:<secret>" as a console copies a pair: either half random makes it the credential.
    return (
        any(_looks_random_or_id_and_secret(part) for part in value.split(":"))
        or _UUID_RE.fullmatch(value) is not None
        or _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None
        or _looks_like_password(value)
    )


def _is_random_token_body(match: re.Match[str]) -> bool:
    body = match["body"]
    return (
        _is_real_token(match)
        and {"upper", "lower", "digit"} <= _character_classes(body)
        and _shannon_entropy(body) >= _MIN_RANDOM_ENTROPY_BITS
    )


def _has_digit_and_upper_body(match: re.Match[str]) -> bool:
    body = match["body"]
    return _is_real_token(match) and {"upper", "digit"} <= _character_classes(body)


def _is_fully_percent_encoded_secret(match: re.Match[str]) -> bool:
    decoded = "".join(chr(int(escape[1:], 16)) for escape in re.findall(r"%..", match[0]))
    # Letters and digits encoded one by one are hidden on purpose, so a run of one case with digits counts
    # from 20 characters (Mattermost's 26), not from the 32 that plain text needs.
    runs = re.findall(r"[A-Za-z0-9_+/=~.-]{20,}", decoded)
    return any(
        _looks_random(run)
        or ({"digit"} < _character_classes(run) and _shannon_entropy(run) >= _MIN_RANDOM_ENTROPY_BITS)
        for run in runs
    )


_TABLE_SECRET_NAME_RE = re.compile(
    r"token|secret|passw|passwd|pwd|credential|api_?key|access_?key|key", re.IGNORECASE
)


def _table_cells(row: str, offset: int, delimiter: str = "|") -> list[tuple[str, int, int]]:
    cells, start = [], 0
    for part in row.split(delimiter):
        stripped = part.strip()
        lead = len(part) - len(part.lstrip())
        cells.append((stripped, offset + start + lead, offset + start + lead + len(stripped)))
        start += len(part) + 1
    return cells


def _table_secret_spans(match: re.Match[str]) -> Iterator[tuple[int, int]]:
    delimiter = match.groupdict().get("delimiter") or "|"
    headers = _table_cells(match["header"], match.start("header"), delimiter)
    values = _table_cells(match["row"], match.start("row"), delimiter)
    if delimiter != "|" and len(values) != len(headers):
        return
    for (name, _start, _end), (value, start, end) in zip(headers, values, strict=False):
        words = {word.lower() for word in _NAME_WORD_RE.findall(name)}
        if (
            _TABLE_SECRET_NAME_RE.search(name) is None
            or words & _NOT_SECRET_SUFFIX_WORDS
            or words & _KEY_OPERATION_WORDS
            or _is_weak_key_name(name)
            or " " in value
            or _is_placeholder(value)
            or _is_placeholder_body(value)
        ):
            continue
        # A bare "Key" or "Token" column holds ids and digests as well; a name that says which secret it is
        # ("DD_API_KEY") makes key-sized hex or a UUID the key.
        qualified = len(words) > 1 or bool(words & {"secret", "secrets", "credential", "credentials"})
        if (
            _looks_random_or_id_and_secret(value)
            or (qualified and _UUID_RE.fullmatch(value) is not None)
            or (qualified and _WEAK_NAME_HEX_KEY_RE.fullmatch(value) is not None)
            or (words & {"password", "passwd", "pwd"} and _looks_like_password(value))
        ):
            yield start, end


_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private-key",
        "private key",
        # A key whose END line is missing (truncated paste) is redacted to the end of the text.
        re.compile(
            r"-----BEGIN (?P<kind>[A-Z0-9 ]{0,40})PRIVATE KEY(?P<block> BLOCK|)-----"
            r"(?P<body>.*?-----END (?P=kind)PRIVATE KEY(?P=block)-----|.*)",
            re.DOTALL,
        ),
        accepts=_is_private_key,
    ),
    # A private key's base64 body without its PEM lines (Alipay's and WeChat Pay's consoles hand the RSA key
    # over so): the DER header of PKCS#8 ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC..."), PKCS#1 ("MIIEpAIBAAKCAQEA...")
    # or an EC key ("MHcCAQEEI...") says what follows, a public key's header ("MIIBIjANBg...") does not match.
    _Rule(
        "private-key-body",
        "private key",
        re.compile(
            r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}(?:IBADANBgkqhkiG9w0BAQEFAAS|IBAAKC)|MHcCAQEEI)"
            r"[A-Za-z0-9+/]{100,}+={0,2}"
        ),
    ),
    # OpenVPN static keys (hex lines) and PuTTY key files (the lines after "Private-Lines:").
    _Rule(
        "private-key",
        "private key",
        re.compile(
            r"-----BEGIN OpenVPN Static key V1-----(?P<body>.*?-----END OpenVPN Static key V1-----|.*)",
            re.DOTALL,
        ),
        accepts=_is_private_key,
    ),
    _Rule(
        "private-key",
        "private key",
        re.compile(r"Private-Lines: \d+\r?\n(?P<body>[A-Za-z0-9+/=\r\n]{20,})"),
        accepts=_is_private_key,
    ),
    _Rule(
        "aws-access-key",
        "AWS access key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)(?P<body>[0-9A-Z]{16})\b", re.ASCII),
        accepts=_is_real_token,
    ),
    _Rule(
        "aws-session-token",
        "AWS session token",
        # Temporary credentials' session tokens (STS, SSO, IMDS) all start with the same base64 header.
        re.compile(r"IQoJb3JpZ2luX2Vj(?P<body>[A-Za-z0-9+/]{100,}+={0,2})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "aws-secret-key",
        "AWS secret access key",
        # Env, credentials-file, CLI-config and JSON ("SecretAccessKey") spellings of the one name; the key
        # itself is 40 base64 characters, about half of them holding a "/".
        re.compile(
            _WORD_START + r"(?:aws_?)?secret_?access_?key[\"']?\s*+[:=]\s*+[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        # The name says what the value is, so only placeholders are refused.
        accepts=_is_real_key,
    ),
    _Rule(
        "aws-session-token",
        "AWS session token",
        # Session tokens run to several hundred base64 characters; 100 is far below any real one.
        re.compile(
            _WORD_START + r"(?:aws_?session_?token|sessiontoken|x-amz-security-token)[\"']?\s*+[:=]\s*+[\"']?"
            r"(?P<value>[A-Za-z0-9/+]{100,}+=*+)",
            re.IGNORECASE,
        ),
        accepts=_is_real_key,
    ),
    # Classic and fine-grained GitHub tokens: one rule id, two patterns, since a group name cannot repeat.
    _Rule(
        "github-token",
        "GitHub token",
        re.compile(r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,255})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "github-token",
        "GitHub token",
        re.compile(r"github_pat_(?P<body>[A-Za-z0-9_]{50,255})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "gitlab-token",
        "GitLab token",
        # Personal, runner, deploy, pipeline-trigger, feed, OAuth, CI-build and agent tokens, and the legacy
        # runner registration tokens that start with GR1348941.
        re.compile(
            _WORD_START + r"(?:gl(?:pat|rt|dt|ptt|ft|soat|oas|cbt|imt|agent|ffct)-|GR1348941)"
            r"(?P<body>[A-Za-z0-9_-]{20,})"
        ),
        accepts=_is_real_token,
    ),
    _Rule(
        "anthropic-key",
        "Anthropic API key",
        re.compile(r"sk-ant-(?P<body>[A-Za-z0-9_-]{20,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "openai-key",
        "OpenAI API key",
        # The possessive prefix makes the 20 characters count after "proj-" etc., as they do in real keys.
        re.compile(r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?+(?P<body>[A-Za-z0-9_-]{20,})"),
        word_start=True,
        accepts=_is_openai_key,
    ),
    _Rule(
        "slack-token",
        "Slack token",
        # xoxe is a refresh token, xapp an app-level token.
        re.compile(r"(?:xox[abposre]|xapp)-(?P<body>[A-Za-z0-9-]{10,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "slack-webhook",
        "Slack webhook URL",
        re.compile(r"https://hooks\.slack\.com/services/(?P<body>[A-Za-z0-9_/]{20,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "sumologic-source-url",
        "Sumo Logic HTTP source URL",
        # Sumo Logic's HTTP source URL carries its token in the path: whoever has the URL can send logs.
        re.compile(
            r"https://[A-Za-z0-9.-]*?sumologic\.(?:com|net)/receiver/v1/(?:http|otlp|trace|zipkin|logs)/"
            r"(?P<body>[A-Za-z0-9_=-]{20,})"
        ),
        accepts=_is_real_token,
        hint="sumologic",
    ),
    _Rule(
        "stripe-key",
        "Stripe API key",
        re.compile(r"(?:sk|rk)_(?:live|test)_(?P<body>[A-Za-z0-9]{20,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "stripe-webhook-secret",
        "webhook signing secret",
        # Stripe's are base62; Svix and the services built on it use the same prefix with base64.
        re.compile(r"whsec_(?P<body>[A-Za-z0-9+/]{24,}+=*+)"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "google-api-key",
        "Google API key",
        re.compile(r"AIza(?P<body>[0-9A-Za-z_-]{35})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "google-oauth-client-secret",
        "Google OAuth client secret",
        re.compile(r"GOCSPX-(?P<body>[A-Za-z0-9_-]{24,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "google-oauth-token",
        "Google OAuth access token",
        re.compile(r"ya29\.(?P<body>[A-Za-z0-9_-]{20,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "npm-token",
        "npm token",
        re.compile(r"npm_(?P<body>[A-Za-z0-9]{36})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "pypi-token",
        "PyPI token",
        # Every PyPI token is a macaroon whose first bytes encode "pypi.org", hence the fixed start.
        re.compile(r"pypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_-]{50,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "huggingface-token",
        "Hugging Face token",
        re.compile(r"hf_(?P<body>[A-Za-z0-9]{30,})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "kenfold-key",
        "Kenfold API key",
        re.compile(r"kf_(?P<body>[A-Za-z0-9_-]{43})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    _Rule(
        "kenfold-oauth-token",
        "Kenfold OAuth token",
        re.compile(r"kf[arc]_(?P<body>[A-Za-z0-9_-]{43})"),
        word_start=True,
        accepts=_is_real_token,
    ),
    # Formats the providers document (issue 37): a fixed prefix, then a body of known alphabet and length.
    *(
        _Rule(rule_id, label, re.compile(pattern), accepts=_is_real_token, word_start=True)
        for rule_id, label, pattern in (
            (
                "alibaba-access-key",
                "Alibaba Cloud access key",
                r"LTAI(?P<body>[A-Za-z0-9]{12,20})(?![A-Za-z0-9])",
            ),
            ("digitalocean-token", "DigitalOcean token", r"do[opr]_v1_(?P<body>[a-f0-9]{64})"),
            ("heroku-key", "Heroku API key", r"HRKU-(?P<body>[A-Za-z0-9_-]{58,60})"),
            ("netlify-token", "Netlify token", r"nfp_(?P<body>[A-Za-z0-9]{36})"),
            ("supabase-token", "Supabase token", r"sbp_(?P<body>[a-f0-9]{40})"),
            ("fly-token", "Fly.io token", r"fm[12][ar]?_(?P<body>[A-Za-z0-9+/]{40,}+=*+)"),
            ("circleci-token", "CircleCI token", r"CCIPAT_(?P<body>[A-Za-z0-9]{22}_[a-f0-9]{40})"),
            ("buildkite-token", "Buildkite token", r"bkua_(?P<body>[a-f0-9]{40})"),
            ("bitbucket-app-password", "Bitbucket app password", r"ATBB(?P<body>[A-Za-z0-9_=.-]{32})"),
            ("square-token", "Square token", r"(?:EAAA|sq0atp-|sq0csp-)(?P<body>[A-Za-z0-9_-]{22,60})"),
            (
                "braintree-token",
                "Braintree access token",
                r"access_token\$production\$(?P<body>[a-z0-9]{16}\$[a-f0-9]{32})",
            ),
            ("shopify-token", "Shopify token", r"shp(?:at|ss|ca|pa)_(?P<body>[a-fA-F0-9]{32})"),
            ("flutterwave-key", "Flutterwave secret key", r"FLWSECK(?:_TEST)?-(?P<body>[a-f0-9]{32})-X"),
            (
                "planetscale-token",
                "PlanetScale token",
                r"pscale_(?:pw|tkn|oauth)_(?P<body>[A-Za-z0-9_.-]{32,64})",
            ),
            ("rubygems-key", "RubyGems API key", r"rubygems_(?P<body>[a-f0-9]{48})"),
            ("nuget-key", "NuGet API key", r"oy2(?P<body>[a-z0-9]{43})(?![A-Za-z0-9])"),
            ("dockerhub-token", "Docker Hub token", r"dckr_(?:pat|oat)_(?P<body>[A-Za-z0-9_-]{27,})"),
            ("crates-token", "crates.io token", r"cio(?P<body>[A-Za-z0-9]{32})(?![A-Za-z0-9])"),
            ("artifactory-key", "Artifactory API key", r"AKCp(?P<body>[A-Za-z0-9]{69})"),
            ("clojars-token", "Clojars token", r"CLOJARS_(?P<body>[a-z0-9]{60})"),
            ("newrelic-key", "New Relic key", r"NR(?:AK|II|JS)-(?P<body>[A-Za-z0-9]{19,32})"),
            ("sentry-token", "Sentry auth token", r"sntry[us]_(?P<body>[A-Za-z0-9+/=_-]{40,})"),
            ("grafana-token", "Grafana token", r"gl(?:sa|c)_(?P<body>[A-Za-z0-9+/_]{32,}+=*+)"),
            ("dynatrace-token", "Dynatrace token", r"dt0[a-z]\d{2}\.(?P<body>[A-Z0-9]{24}\.[A-Z0-9]{64})"),
            ("groq-key", "Groq API key", r"gsk_(?P<body>[A-Za-z0-9]{52})"),
            ("replicate-token", "Replicate token", r"r8_(?P<body>[A-Za-z0-9]{37})"),
            ("perplexity-key", "Perplexity API key", r"pplx-(?P<body>[A-Za-z0-9]{48})"),
            ("xai-key", "xAI API key", r"xai-(?P<body>[A-Za-z0-9]{80})"),
            ("langsmith-key", "LangSmith API key", r"lsv2_(?:pt|sk)_(?P<body>[a-f0-9]{32}_[a-f0-9]{10})"),
            ("twilio-key", "Twilio API key", r"SK(?P<body>[a-f0-9]{32})(?![A-Za-z0-9])"),
            ("databricks-token", "Databricks token", r"dapi(?P<body>[a-f0-9]{32})"),
            ("sendgrid-key", "SendGrid API key", r"SG\.(?P<body>[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})"),
            ("mailgun-key", "Mailgun API key", r"key-(?P<body>[a-f0-9]{32})(?![A-Za-z0-9])"),
            ("vault-token", "Vault token", r"hv[sb]\.(?P<body>[A-Za-z0-9_-]{24,})"),
            ("atlassian-token", "Atlassian API token", r"ATATT3(?P<body>[A-Za-z0-9_=-]{100,})"),
            ("linear-key", "Linear API key", r"lin_(?:api|oauth)_(?P<body>[A-Za-z0-9]{40})"),
            ("notion-token", "Notion token", r"(?:secret_|ntn_)(?P<body>[A-Za-z0-9]{43,46})(?![A-Za-z0-9])"),
            (
                "doppler-token",
                "Doppler token",
                r"dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[a-z0-9_-]{1,35}\.)?(?P<body>[A-Za-z0-9]{40,44})",
            ),
            ("pulumi-token", "Pulumi token", r"pul-(?P<body>[a-f0-9]{40})"),
            ("postman-key", "Postman API key", r"PMAK-(?P<body>[a-f0-9]{24}-[a-f0-9]{34})"),
            (
                "age-key",
                "age secret key",
                r"AGE-SECRET-KEY-1(?P<body>[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})",
            ),
            (
                "1password-token",
                "1Password service account token",
                r"ops_(?P<body>eyJ[A-Za-z0-9_+/-]{50,}+=*+)",
            ),
            ("airtable-token", "Airtable token", r"pat(?P<body>[A-Za-z0-9]{14}\.[a-f0-9]{64})"),
            ("figma-token", "Figma token", r"figd_(?P<body>[A-Za-z0-9_-]{40,})"),
            ("dropbox-token", "Dropbox token", r"sl\.(?:u\.)?(?P<body>[A-Za-z0-9_-]{130,})"),
            ("contentful-token", "Contentful token", r"CFPAT-(?P<body>[A-Za-z0-9_-]{43})"),
            (
                "mapbox-token",
                "Mapbox secret token",
                r"sk\.(?P<body>eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,})",
            ),
            ("hubspot-token", "HubSpot token", r"pat-(?:na|eu)\d-(?P<body>[a-f0-9-]{36})"),
            ("sonarqube-token", "SonarQube token", r"sq[uap]_(?P<body>[a-f0-9]{40})"),
            ("readme-key", "ReadMe API key", r"rdme_(?P<body>[a-f0-9]{70})"),
            ("prefect-key", "Prefect API key", r"pnu_(?P<body>[A-Za-z0-9]{36})"),
            (
                "cloudflare-origin-ca-key",
                "Cloudflare Origin CA key",
                r"v1\.0-(?P<body>[a-f0-9]{24}-[a-f0-9]{146})",
            ),
            ("openshift-token", "OpenShift token", r"sha256~(?P<body>[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
            ("yandex-key", "Yandex Cloud API key", r"AQVN(?P<body>[A-Za-z0-9_-]{35,38})(?![A-Za-z0-9_-])"),
            ("sourcegraph-token", "Sourcegraph token", r"sgp_(?:[a-f0-9]{16}_)?(?P<body>[a-f0-9]{40})"),
            (
                "teamcity-token",
                "TeamCity token",
                r"eyJ0eXAiOiAiVENWMiJ9\.(?P<body>[A-Za-z0-9_-]{30,}\.[A-Za-z0-9_-]{40,})",
            ),
            (
                "fcm-server-key",
                "Firebase Cloud Messaging server key",
                r"AAAA(?P<body>[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,})",
            ),
            (
                "matrix-token",
                "Matrix access token",
                r"syt_(?P<body>[A-Za-z0-9_-]+_[A-Za-z0-9]{20}_[A-Za-z0-9]{6})",
            ),
            ("pubnub-secret-key", "PubNub secret key", r"sec-c-(?P<body>[A-Za-z0-9+/]{40,}+=*+)"),
            ("neon-key", "Neon API key", r"napi_(?P<body>[a-z0-9]{64})"),
            (
                "clickhouse-key",
                "ClickHouse Cloud key secret",
                r"4b1d(?P<body>[A-Za-z0-9]{38})(?![A-Za-z0-9])",
            ),
            ("jfrog-token", "JFrog identity token", r"cmVmdGtuOjAx(?P<body>[A-Za-z0-9+/]{20,}+=*+)"),
            ("honeycomb-key", "Honeycomb key", r"hc[a-z]{2}k_(?P<body>[a-z0-9]{58})"),
            (
                "axiom-token",
                "Axiom token",
                r"xa[ap]t-(?P<body>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})",
            ),
            ("checkly-key", "Checkly API key", r"cu_(?P<body>[a-f0-9]{32})(?![A-Za-z0-9])"),
            (
                "launchdarkly-key",
                "LaunchDarkly key",
                r"(?:sdk|api|mob)-(?P<body>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})",
            ),
            (
                "infisical-token",
                "Infisical token",
                r"st\.(?P<body>[a-f0-9-]{36}\.[a-f0-9]{32}\.[a-f0-9]{32})",
            ),
            ("stytch-secret", "Stytch secret", r"secret-(?:live|test)-(?P<body>[A-Za-z0-9_=-]{36})"),
            ("resend-key", "Resend API key", r"re_(?P<body>[A-Za-z0-9]{8}_[A-Za-z0-9]{24})(?![A-Za-z0-9])"),
            ("adafruit-key", "Adafruit IO key", r"aio_(?P<body>[A-Za-z0-9]{28})(?![A-Za-z0-9])"),
            ("klaviyo-key", "Klaviyo private API key", r"pk_(?P<body>[a-f0-9]{34})(?![A-Za-z0-9])"),
            ("elevenlabs-key", "ElevenLabs API key", r"sk_(?P<body>[a-f0-9]{48})(?![A-Za-z0-9])"),
            ("fireworks-key", "Fireworks AI key", r"fw_(?P<body>[A-Za-z0-9]{24})(?![A-Za-z0-9])"),
            ("twitter-bearer-token", "X (Twitter) bearer token", r"A{20,}+(?P<body>[A-Za-z0-9%]{60,})"),
            ("facebook-token", "Facebook access token", r"EAA[A-Z](?P<body>[A-Za-z0-9]{90,})"),
            ("duffel-token", "Duffel token", r"duffel_(?:live|test)_(?P<body>[A-Za-z0-9_=-]{43})"),
            ("easypost-key", "EasyPost API key", r"EZ[AT]K(?P<body>[A-Za-z0-9]{54})"),
            ("frameio-token", "Frame.io token", r"fio-u-(?P<body>[A-Za-z0-9_=-]{64})"),
            ("voyage-key", "Voyage AI key", r"pa-(?P<body>[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"),
            ("aws-bedrock-key", "Amazon Bedrock API key", r"ABSK(?P<body>[A-Za-z0-9+/]{60,}+=*+)"),
            ("google-refresh-token", "Google OAuth refresh token", r"1//0(?P<body>[A-Za-z0-9_-]{40,})"),
            (
                "convex-deploy-key",
                "Convex deploy key",
                r"(?:prod|dev|preview|project):[a-z0-9-]{3,64}\|(?P<body>[A-Za-z0-9+/_-]{40,}+=*+)",
            ),
            (
                "salesforce-session",
                "Salesforce session id",
                r"00D[A-Za-z0-9]{12,15}!(?P<body>[A-Za-z0-9._]{60,})",
            ),
            ("zoho-token", "Zoho OAuth token", r"1000\.(?P<body>[a-f0-9]{32}\.[a-f0-9]{32})"),
            ("mailersend-key", "MailerSend API key", r"mlsn\.(?P<body>[a-f0-9]{64})"),
            (
                "riot-key",
                "Riot Games API key",
                r"RGAPI-(?P<body>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})",
            ),
            ("clickup-token", "ClickUp token", r"pk_\d{6,10}_(?P<body>[A-Z0-9]{32})"),
            ("trello-token", "Trello token", r"ATTA(?P<body>[a-fA-F0-9]{64,})"),
            ("intercom-token", "Intercom access token", r"dG9rO(?P<body>[A-Za-z0-9+/]{40,}+=*+)"),
            (
                "bitbucket-access-token",
                "Bitbucket access token",
                r"ATCTT3xFfGN0(?P<body>[A-Za-z0-9_=-]{100,})",
            ),
            ("django-secret-key", "Django secret key", r"django-insecure-(?P<body>[^\s'\"`]{40,})"),
            ("deno-deploy-token", "Deno Deploy token", r"dd[pw]_(?P<body>[A-Za-z0-9]{36})"),
            ("supabase-secret-key", "Supabase secret key", r"sb_secret_(?P<body>[A-Za-z0-9_-]{24,})"),
            (
                "tailscale-key",
                "Tailscale key",
                r"tskey-[a-z]+-(?P<body>[A-Za-z0-9]{6,}CNTRL-[A-Za-z0-9]{20,})",
            ),
            ("shippo-token", "Shippo API token", r"shippo_(?:live|test)_(?P<body>[a-f0-9]{40})"),
            (
                "turnstile-secret",
                "Cloudflare Turnstile secret key",
                r"0x4AAAAAAA(?P<body>[A-Za-z0-9_-]{22,})",
            ),
            (
                "harness-token",
                "Harness token",
                r"(?:pat|sat)\.(?P<body>[A-Za-z0-9_-]{22}\.[a-f0-9]{24}\.[A-Za-z0-9]{20})",
            ),
        )
    ),
    # Formats whose body is one case of letters and digits: a digit in it keeps words out.
    *(
        _Rule(rule_id, label, re.compile(pattern), accepts=_is_openai_key, word_start=True)
        for rule_id, label, pattern in (
            (
                "checkout-key",
                "Checkout.com secret key",
                r"sk_(?:sbox_)?(?P<body>[a-z0-9]{26})(?![A-Za-z0-9])",
            ),
            ("octopus-key", "Octopus Deploy API key", r"API-(?P<body>[A-Z0-9]{26})(?![A-Za-z0-9])"),
        )
    ),
    _Rule(
        "sanity-token",
        "Sanity token",
        re.compile(r"(?<![A-Za-z0-9+/=_-])sk(?P<body>[A-Za-z0-9]{150,}+)(?![+/=])"),
        accepts=_is_openai_key,
        hint="sk",
    ),
    _Rule(
        "vault-unseal-key",
        "Vault unseal key",
        re.compile(r"Unseal Key \d{1,2}: (?P<body>[A-Za-z0-9+/]{40,}+={0,2})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # A value piped into a command that stores it as a secret: the command says what the value is.
        re.compile(
            r"(?<![A-Za-z0-9_])(?:echo|printf)\s++(?:-n\s++|'%s'\s++|\"%s\"\s++)?[\"']?"
            r"(?P<value>[^\s\"'|]{8,200})[\"']?\s*+\|\s*+"
            r"(?:gcloud secrets|gh secret|docker secret|vault kv|az keyvault secret|aws secretsmanager|op item"
            r"|kubectl create secret|fly secrets|heroku config)"
        ),
        accepts=lambda match: (
            not _is_placeholder(match["value"])
            and (
                _looks_random_or_id_and_secret(match["value"])
                or _looks_like_password(match["value"])
                or _KEY_SIZED_HEX_RE.fullmatch(match["value"]) is not None
                or _UUID_RE.fullmatch(match["value"]) is not None
            )
        ),
        hint="|",
    ),
    _Rule(
        "ably-key",
        "Ably API key",
        # "<app id>.<key id>:<secret>".
        re.compile(
            r"(?<![A-Za-z0-9_.-])[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{6}:(?P<body>[A-Za-z0-9_-]{43})(?![A-Za-z0-9_-])"
        ),
        accepts=_is_real_token,
        hint=":",
    ),
    _Rule(
        "prefixed-token",
        "API token",
        # "<Prefix>:<random id>:<hex secret>" (DataStax Astra's "AstraCS:<id>:<hex>"): a vendor's name, the
        # client id and the secret in one token. The id must look random, which keeps "Error:Something:<sha>" out.
        re.compile(
            r"(?<![A-Za-z0-9_:])[A-Z][A-Za-z]{2,15}:(?P<id>[A-Za-z0-9]{16,40}):(?P<body>[a-f0-9]{16,}+)"
            r"(?![A-Za-z0-9])"
        ),
        accepts=lambda match: _is_real_token(match) and _looks_random(match["id"]),
        hint_pattern=re.compile(r":[A-Za-z0-9]{16,40}:[a-f0-9]{16}"),
    ),
    _Rule(
        "user-and-password",
        "password in a user:password pair",
        # Oracle's connect strings ("jdbc:oracle:thin:scott/<password>@//host:1521/SVC", "sqlplus
        # scott/<password>@db"): "user/password@host".
        re.compile(
            r"(?<![^\s\"'`=:(])[A-Za-z][A-Za-z0-9_.-]{0,30}/(?P<value>[^\s/@\"'`]{6,})@(?://)?[A-Za-z0-9][A-Za-z0-9.-]*"
        ),
        accepts=_is_password_of_a_pair,
        hint="@",
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # An account id and its secret side by side: Twilio's "AC<32 hex>" SID then the 32-hex auth token
        # (Client("AC...", "<token>"), "AC...:<token>" in a Basic header's clear text).
        re.compile(
            r"(?<![A-Za-z0-9])AC[0-9a-f]{32}[\"']?\s*+[,:]\s*+[\"']?(?P<value>[0-9a-fA-F]{32})(?![A-Za-z0-9])"
        ),
        accepts=_is_real_key,
        hint="AC",
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # A Kubernetes Secret's "data:" holds each value base64-encoded whatever its key is called
        # ("database_url: <base64>"): a decoded value shaped like a password or a key is the secret.
        re.compile(
            r"^[ \t]++[A-Za-z0-9_.-]{1,100}:[ \t]++(?P<value>[A-Za-z0-9+/]{12,}+={0,2})[ \t]*+\r?$",
            re.MULTILINE,
        ),
        accepts=lambda match: (
            _is_in_kubernetes_secret_data(match) and _is_encoded_secret_value(match["value"])
        ),
        hint_words=("kind: secret",),
    ),
    _Rule(
        "acr-password",
        "Azure Container Registry password",
        re.compile(r"(?<![A-Za-z0-9+/])(?P<body>[A-Za-z0-9]{42}\+ACR[A-Za-z0-9]{6})(?![A-Za-z0-9+/])"),
        accepts=_is_real_token,
        hint="+ACR",
    ),
    _Rule(
        "asana-token",
        "Asana personal access token",
        re.compile(r"(?<![A-Za-z0-9/])[12]/(?P<body>\d{16}(?:/\d{16})?:[a-f0-9]{32})(?![A-Za-z0-9])"),
        accepts=_is_real_token,
        hint="/",
    ),
    # Formats without a literal start: each runs only where its fixed middle appears.
    _Rule(
        "telegram-bot-token",
        "Telegram bot token",
        # Bare, or in the Bot API's URLs (https://api.telegram.org/bot<token>/getUpdates).
        re.compile(r"(?:(?<=bot)|(?<![A-Za-z0-9_:]))\d{8,10}:(?P<body>AA[A-Za-z0-9_-]{33})(?![A-Za-z0-9_-])"),
        accepts=_is_real_token,
        hint=":AA",
    ),
    _Rule(
        "discord-bot-token",
        "Discord bot token",
        # Base64 of the bot's numeric id (so "MT", "Nz", "OD"...), a timestamp, an HMAC.
        re.compile(
            r"(?<![A-Za-z0-9_.-])(?P<body>[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40})"
            # A sentence's full stop may follow it.
            r"(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])"
        ),
        accepts=_is_real_token,
    ),
    _Rule(
        "azure-client-secret",
        "Azure client secret",
        # Entra ID secrets: 3 characters, a digit and "Q~", then 31 to 34 more.
        re.compile(
            r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~(?P<body>[A-Za-z0-9_~.-]{31,34})"
            # A sentence's full stop may follow it.
            r"(?![A-Za-z0-9_~-]|\.[A-Za-z0-9_~.-])"
        ),
        accepts=_is_real_token,
        hint="Q~",
    ),
    _Rule(
        "terraform-token",
        "Terraform Cloud token",
        re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]{14}\.atlasv1\.(?P<body>[A-Za-z0-9_=-]{60,})"),
        accepts=_is_real_token,
        hint=".atlasv1.",
    ),
    _Rule(
        "mailchimp-key",
        "Mailchimp API key",
        re.compile(r"(?<![A-Za-z0-9])(?P<body>[a-f0-9]{32})-us\d{1,2}(?![A-Za-z0-9])"),
        accepts=_is_real_token,
        hint="-us",
    ),
    _Rule(
        "newrelic-key",
        "New Relic key",
        # 40 characters ending in "NRAL"; an EU account's start with its region ("eu01xx").
        re.compile(r"(?<![A-Za-z0-9])(?P<body>[a-f0-9]{36}|[a-z]{2}\d{2}xx[a-f0-9]{30})NRAL(?![A-Za-z0-9])"),
        accepts=_is_real_token,
        hint="NRAL",
    ),
    _Rule(
        "adyen-key",
        "Adyen API key",
        # "AQE" and a long run of base64 characters, in parts joined by "-" or "=" in the middle.
        re.compile(r"(?<![A-Za-z0-9+/=_-])AQE(?P<body>[A-Za-z0-9+/_-][A-Za-z0-9+/=_-]{59,400}+)"),
        accepts=_is_random_token_body,
        hint="AQE",
    ),
    _Rule(
        "kubeadm-token",
        "Kubernetes bootstrap token",
        # "<6>.<16>" of lower-case letters and digits; a digit in each part keeps dotted words out.
        re.compile(r"(?<![A-Za-z0-9_.-])(?P<body>[a-z0-9]{6}\.[a-z0-9]{16})(?![A-Za-z0-9_.-])"),
        accepts=lambda match: _is_real_token(match) and _has_digit_and_letter_in_secret(match["body"]),
    ),
    _Rule(
        "azure-storage-key",
        "Azure storage account key",
        # Connection strings of Storage, Service Bus, Event Hubs and IoT Hub.
        re.compile(
            r"(?:AccountKey|SharedAccessKey|SharedAccessSignature)=(?P<value>[A-Za-z0-9+/%]{30,}+=*+)",
            re.IGNORECASE,
        ),
        accepts=_is_real_key,
        hint="=",
    ),
    _Rule(
        "signed-url",
        "signature in a signed URL",
        # Azure SAS (sig=), AWS presigned (X-Amz-Signature=) and Google signed (X-Goog-Signature=) URLs
        # grant access to whoever holds them until they expire.
        re.compile(r"[?&](?:sig|X-Amz-Signature|X-Goog-Signature)=(?P<value>[A-Za-z0-9%+/=_-]{40,})"),
        accepts=_is_real_key,
        hint="ig",
    ),
    _Rule(
        "webhook-url",
        "webhook URL",
        # Whoever has the URL can post as the integration.
        re.compile(
            r"https://(?:(?:canary\.|ptb\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<body>[A-Za-z0-9_-]{60,})"
            r"|[a-z0-9-]+\.webhook\.office\.com/webhookb2/(?P<teams>[^\s]{0,120}?/IncomingWebhook/[a-f0-9]{32})"
            # Slack workflow triggers, Zapier, IFTTT, Feishu/Lark, WeCom and Mattermost incoming webhooks.
            r"|hooks\.slack\.com/(?:workflows|triggers)/(?P<slack>[A-Za-z0-9_/]{20,})"
            r"|hooks\.zapier\.com/hooks/catch/\d+/(?P<zapier>[a-z0-9]{6,})"
            r"|maker\.ifttt\.com/(?:trigger/[^/\s]{1,100}/with/)?key/(?P<ifttt>[A-Za-z0-9_-]{20,})"
            r"|open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/(?P<feishu>[A-Za-z0-9-]{20,})"
            r"|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=(?P<wecom>[A-Za-z0-9-]{20,})"
            r"|[A-Za-z0-9.-]{1,100}/hooks/(?P<mattermost>[a-z0-9]{26})(?![A-Za-z0-9]))"
        ),
        # Zapier's hook ids are 6 or 7 characters: too short for the placeholder test.
        accepts=lambda match: (
            match["zapier"] is not None
            or not _is_placeholder_body(next(group for group in match.groups() if group is not None))
        ),
    ),
    _Rule(
        "jwt",
        "JWT",
        re.compile(
            _BASE64URL_RUN_START
            + r"(?P<body>eyJ[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,})"
        ),
        accepts=lambda match: _is_real_token(match) and not _is_public_jwt(match["body"]),
    ),
    _Rule(
        "url-credentials",
        "password in a URL",
        # The user may be empty: redis://:password@host is the usual Redis form.
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<user>[^\s:/@]*+):(?P<value>[^\s/@]++)@"),
        accepts=_is_url_password,
    ),
    _Rule(
        "url-credentials",
        "token in a URL",
        # A token as the URL's user name, with no password (https://<token>@github.com/...).
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<value>[A-Za-z0-9_~.-]{20,})@"),
        accepts=lambda match: _is_random_non_placeholder(match) and not _is_sentry_dsn(match),
        hint="@",
    ),
    _Rule(
        "authorization-header",
        "credential in an Authorization header",
        # The optional quote before the colon admits JSON and dict literals: {"Authorization": "Bearer ..."}.
        re.compile(
            r"authorization[\"']?\s*+[:=]\s*+[\"']?(?:(?P<scheme>[A-Za-z][A-Za-z0-9_-]{1,30})\s++)?"
            r"(?P<value>(?(scheme)[A-Za-z0-9._~+/=!*#-]|[A-Za-z0-9._~+/=-]){16,})",
            re.IGNORECASE,
        ),
        accepts=_is_authorization_value,
    ),
    _Rule(
        "basic-credentials",
        "Basic credential",
        # "Basic <base64 of user:password>" outside a header line ("Authorization for prod is Basic ..."):
        # the scheme says what the run encodes.
        re.compile(r"(?<![A-Za-z])Basic\s++(?P<value>[A-Za-z0-9+/]{12,}+={0,2})(?![A-Za-z0-9+/=])"),
        accepts=_is_basic_credential,
        hint="Basic",
    ),
    _Rule(
        "docker-auth",
        "registry credential in a Docker config",
        # ~/.docker/config.json and .dockerconfigjson: "auth" is base64 of "user:password".
        re.compile(r"\"auth\"\s*+:\s*+\"(?P<value>[A-Za-z0-9+/]{12,}+={0,2})\""),
        accepts=_is_basic_credential,
        hint='"auth"',
    ),
    _Rule(
        "npm-auth-token",
        "npm registry credential",
        # .npmrc lines: "//registry.example.com/:_authToken=..." or a bare "_auth=..." at the start of a line.
        # Tokens of other registries are UUIDs or base64, which "looks random" would refuse. The value stops
        # at ":" so that a value rejected as a placeholder never holds the start of the next match.
        re.compile(
            r"(?:(?<=:)|(?<![^\n]))_(?:authToken|auth|password)[ \t]*+=[ \t]*+[\"']?(?P<value>[^\s\"':]{8,})"
        ),
        accepts=_is_non_placeholder,
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # OpenTelemetry's exporter headers ("api-key=<key>,x-honeycomb-team=<key>"): what they carry is the
        # exporter's credential, whatever the header is called.
        re.compile(
            r"otel_exporter_otlp(?:_[a-z]++)?_headers[\"']?\s*+[:=]\s*+[\"']?(?P<value>[^\s\"']{8,})",
            re.IGNORECASE,
        ),
        accepts=lambda match: any(
            _is_key_shaped(unquote(pair.partition("=")[2]).removeprefix("Bearer ").removeprefix("Basic "))
            for pair in match["value"].split(",")
        ),
        hint_words=("otel_exporter_otlp",),
    ),
    _Rule(
        "encoded-key",
        "credential percent-encoded character by character",
        re.compile(r"(?:%[0-9A-Fa-f]{2}){16,}+"),
        accepts=_is_percent_encoded_key,
        hint="%",
    ),
    *(
        _Rule(
            "user-and-password",
            "password in a user:password pair",
            re.compile(pattern + r":(?P<value>[^\s\"'@]{6,})"),
            accepts=_is_password_of_a_pair,
            # The pattern cannot start with a literal: it runs only where its fixed part appears.
            hint_pattern=re.compile(hint),
        )
        for pattern, hint in (
            # A .pgpass line: host:port:database:user:password.
            (
                r"(?<![^\s\"'=])[A-Za-z0-9.-]{1,100}:(?:\d{1,5}|\*):[^\s:]{1,64}:[^\s:]{1,64}",
                r":(?:\d{1,5}|\*):[^\s:]",
            ),
            # curl's, wget's or httpie's "-u user:password".
            (
                r"(?<![A-Za-z0-9_-])(?:-u|--user|--auth|-a)[\s=]++[\"']?[^\s:\"'$]{1,64}",
                r"(?:-u|--user|--auth|-a)[\s=]",
            ),
        )
    ),
    _Rule(
        "sql-password",
        "password in an SQL statement",
        # CREATE/ALTER USER ... IDENTIFIED BY '...' (MySQL, Oracle), ... PASSWORD '...' (PostgreSQL).
        re.compile(
            r"(?:IDENTIFIED(?:\s++WITH\s++\w+)?\s++BY(?:\s++PASSWORD)?|(?<![A-Za-z_])PASSWORD)\s++'(?P<value>[^'\s]{6,})'",
            re.IGNORECASE,
        ),
        accepts=lambda match: (
            not _is_placeholder(match["value"])
            and (_looks_random(match["value"]) or _looks_like_password(match["value"]))
        ),
        hint_words=("identified", "password"),
    ),
    _Rule(
        "login-key",
        "API key on a login command line",
        # "wandb login <key>", "<cli> login --token <key>": a key-sized value right after "login".
        re.compile(
            r"(?<![A-Za-z0-9_-])login\s++(?:--?[A-Za-z-]++[\s=]++)?(?P<value>[A-Za-z0-9_-]{32,})(?![A-Za-z0-9_-])"
        ),
        accepts=lambda match: (
            not _is_placeholder(match["value"])
            and (_looks_random(match["value"]) or _WEAK_NAME_HEX_KEY_RE.fullmatch(match["value"]) is not None)
        ),
        hint="login",
    ),
    _Rule(
        "command-line-password",
        "password on a command line",
        # PowerShell's ConvertTo-SecureString "<password>" -AsPlainText.
        re.compile(
            r"ConvertTo-SecureString\s++(?:-String\s++)?[\"'](?P<value>[^\"'\s]{6,})[\"']\s++-AsPlainText",
            re.IGNORECASE,
        ),
        accepts=_is_command_line_password,
        hint_words=("convertto-securestring",),
    ),
    _Rule(
        "command-line-password",
        "password on a command line",
        re.compile(
            _WORD_START
            + _PASSWORD_COMMANDS
            + r"(?=\s)[^\n|;&]{0,100}?\s-p(?:\s++|=)?+[\"']?(?P<value>[^\s\"'`]+)"
        ),
        accepts=_is_command_line_password,
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # Starts at the beginning of the text or after whitespace, an opening delimiter, a query string's
        # "?", "&" or "=" (jdbc:...?user=app&password=..., a URL-decoded "q=API_KEY=...") or a ":" (PowerShell's
        # $env:NAME); "export NAME=" and "--name=" need no special case because the name starts after the
        # space and may contain "-". The separators: _ASSIGNMENT_TAIL.
        re.compile(
            # A diff's added line ("+API_KEY=...") starts with "+".
            r"(?:(?<![^\s\"'`*{}(,;&?=:<>/$])|(?<=^\+)|(?<=\n\+))(?P<name>[A-Za-z0-9_.-]*?"
            + _SECRET_NAME_SUFFIX
            + r")"
            + _ASSIGNMENT_TAIL,
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        hint_words=_SECRET_NAME_WORDS,
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        re.compile(_FOREIGN_NAME + _ASSIGNMENT_TAIL, re.IGNORECASE),
        accepts=_is_value_under_foreign_name,
        anchor_words=_anchors(_FOREIGN_NAME_WORDS),
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # The name and the value as two entries of one element: .NET appSettings (<add key="API_KEY"
        # value="..."/>), Kubernetes env lists (- name: API_KEY / value: ...), JSON name/value pairs.
        re.compile(
            r"(?<![A-Za-z0-9_])(?:key|name)[\"']?\s*+[=:]\s*+[\"']?(?P<name>[A-Za-z0-9_.-]*?"
            + _SECRET_NAME_SUFFIX
            + r")[\"']?(?P<separator>\s*+,?\s*+[\"']?value[\"']?\s*+[=:]\s*+)[\"'`]?"
            r"(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        hint="alue",
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # A Terraform variable's default: the name opens the block, the value comes a few lines later.
        re.compile(
            r"(?<![A-Za-z0-9_])variable\s++\"(?P<name>[A-Za-z0-9_.-]*?"
            + _SECRET_NAME_SUFFIX
            + r")\"\s*+\{[^{}]{0,300}?(?<![A-Za-z0-9_])default(?P<separator>\s*+=\s*+)\""
            r"(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        hint="variable",
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # A CloudFormation parameter's default: the name, then a few "Key: value" lines, then "Default:".
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<name>[A-Za-z0-9_.-]*?"
            + _SECRET_NAME_SUFFIX
            + r"):[ \t]*+\r?\n(?:[ \t]++[A-Za-z]++:[^\n]{0,80}\n){0,4}?[ \t]++Default(?P<separator>:[ \t]*+)[\"']?"
            r"(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        hint="Default:",
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # Spoken or written out in words: "the client secret is ...", "the admin api key was ..." (voice notes,
        # chat). Filler words before the name do not qualify it: "the token is <hex>" is a bare token.
        re.compile(
            r"(?<![A-Za-z0-9_])(?P<name>(?:[A-Za-z]{2,12}\x20){0,3}?(?:(?P<password>password|passphrase)|secret"
            r"|token|(?:api|access|private|auth|encryption|signing|master|admin|account|app|secret)\x20key))"
            r"(?P<weak>(?!))?(?P<separator>\x20(?:is|was|=|:)\x20)[\"'`]?(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        # Exactly what the pattern needs after the name, so that other texts skip it: it may start at any word.
        hint_pattern=re.compile(
            r"(?:password|passphrase|secret|token|key)\x20(?:is|was|=|:)\x20", re.IGNORECASE
        ),
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # A password named, then what it is for, then the verb: "the password for the staging database is ...",
        # "le mot de passe de l'index PyPI interne est ...", "das Passwort für den Server ist ...". Only a
        # password's name: the value must still look like one.
        re.compile(
            r"(?<![^\W\d_])(?P<name>(?P<password>password|passphrase|"
            + _alternation(_FOREIGN_PASSWORD_WORDS)
            + r"))(?![^\W\d_])(?P<weak>(?!))?(?P<separator>\x20(?:[^\s\d]{1,20}\x20){1,5}?"
            r"(?:is|was|ist|war|est|es|era|é|è|är|er|jest|je|on|este|adalah|ialah|:)\x20)[\"'`]?"
            r"(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
        anchor_words=_anchors(("password", "passphrase", *_FOREIGN_PASSWORD_WORDS)),
    ),
    # Credentials handed over without their name: the sentence or layout says a credential follows ("here is
    # what you need: <v>", "use <v> as the credential", "Key name: … | Value: <v>" from a transcribed
    # screenshot, "auth failed for key=<v>" in a log line). The value must still look like a key.
    _Rule(
        "handed-over",
        "credential handed over",
        re.compile(
            r"(?:(?:\bhere(?:'s| is) (?:what you need|(?:the|your) (?:new )?(?:key|token|secret|password|credentials?))"
            r"|\bhere are (?:the|your) (?:new )?(?:keys|tokens|secrets|passwords|credentials)\b[^:\n]{0,40}?"
            r"|\bpasted (?:the|a|your) (?:new|rotated|current) (?:value|key|token|secret|password)\b[^:\n]{0,40}?"
            r"|\b(?:credencial|credential|chave|clave|senha)(?: nova| nueva| new)? (?:ficou|qued[óo]|is now)\b"
            r"[^:\n]{0,20}?)"
            r"\s*+:\s*+[\"'`]?"
            r"|\buse\s++(?=[^\s\"'`]{12,}+\s++as\s++(?:the|your|a|an)\s++(?:[a-z]+\s+)?"
            r"(?:credentials?|key|token|secret|password)\b)[\"'`]?"
            r"|\bkey name\s*+:[^\n]{0,80}?\bvalue\s*+:\s*+"
            r"|\b(?:auth(?:entication|orization)?|login)\s++(?:failed|denied|rejected|refused)\b[^\n=]{0,40}?"
            r"\b(?:key|token|secret|password)="
            r"|\b(?:invalid|wrong|expired|rejected) (?:credentials?|key|token|secret|password) for "
            r"(?:key|token|secret|password)=[\"'`]?)"
            r"(?P<value>[^\s\"'`|,;<>]{12,200})",
            re.IGNORECASE,
        ),
        accepts=_is_handed_over_credential,
        anchor_words=_anchors(
            (
                "here",
                "use",
                "key name",
                "auth",
                "login",
                "pasted",
                "credencial",
                "credential",
                "chave",
                "clave",
                "senha",
                "invalid",
                "wrong",
                "expired",
                "rejected",
            )
        ),
    ),
    _Rule(
        "handed-over",
        "credential handed over",
        # "here are the credentials you asked for:", "Voici le jeton demandé :", "下面是新的令牌：", then the
        # value alone on its line, after blank lines and indentation.
        re.compile(
            r"(?:(?<![A-Za-z])|(?=[^\x00-\x7f]))(?P<name>"
            + _NEARBY_NAMES
            + r")[^\n:：]{0,80}+[:：][ \t]*+\r?\n"
            # A quoted reply's "> " may start each line.
            r"(?:[ \t>]*+(?:```[A-Za-z]*+|~~~)?[ \t]*+\r?\n){0,2}+[ \t>]*+[\"'`]?(?P<value>[^\s\"'`]{12,200}+)[\"'`]?"
            r"[ \t]*+(?:\r?\n|$)",
            re.IGNORECASE,
        ),
        accepts=_is_value_listed_under_a_name,
        anchor_words=_NEARBY_ANCHORS,
    ),
    _Rule(
        "handed-over",
        "credential handed over",
        re.compile(
            r"(?<![A-Za-z])(?P<name>password|passwd|passphrase|key|token|secret|credential|"
            + _alternation(_FOREIGN_PASSWORD_WORDS + _FOREIGN_SECRET_WORDS)
            + r")(?![A-Za-z])",
            re.IGNORECASE,
        ),
        spans=_value_before_name_spans,
        anchor_words=_NEARBY_ANCHORS,
    ),
    _Rule(
        "auth-call",
        "credential passed to a sign-in call",
        re.compile(
            # A sign-in name starts a word ("oauth(" is not "auth("); "PaymentClient(" builds a client.
            r"(?P<call>(?<![A-Za-z0-9])(?:log_?in|sign_?in|authenticate|authori[sz]e|auth)|connect|client)"
            r"\s*+\(\s*+(?:[^()\n]{0,80}?,\s*+)?(?:(?P<keyword>[A-Za-z_][A-Za-z0-9_]*+)\s*+=\s*+)?"
            r"[\"'](?P<value>[^\"'\s]{16,300}+)[\"']",
            re.IGNORECASE,
        ),
        accepts=_is_key_of_an_auth_call,
        anchor_words=_anchors(("login", "log_in", "signin", "sign_in", "auth", "connect", "client")),
    ),
    # A Markdown table whose header names the secret and whose next row holds the value in that column.
    _Rule(
        "table-secret",
        "credential in a table under its name",
        re.compile(
            r"(?m)^[ \t]*+\|(?P<header>[^\n]*)\|[ \t]*+\r?\n[ \t]*+\|[-:| \t]++\r?\n[ \t]*+\|(?P<row>[^\n]*)\|"
        ),
        hint="|",
        spans=_table_secret_spans,
    ),
    # A CSV export whose header names the secret ("name,secret", AWS's "Access key ID,Secret access key"):
    # the value in that column of the next line, which has as many fields. Header cells are names, not prose.
    _Rule(
        "table-secret",
        "credential in a table under its name",
        re.compile(
            r"(?m)^(?P<header>[A-Za-z][A-Za-z0-9 _.-]{0,39}+(?P<delimiter>[,;\t])[A-Za-z][A-Za-z0-9 _.-]{0,39}+"
            r"(?:(?P=delimiter)[A-Za-z][A-Za-z0-9 _.-]{0,39}+){0,10}+)[ \t]*+\r?\n(?P<row>[^\n]++)"
        ),
        hint_words=("secret", "pass", "pwd", "token", "key", "credential"),
        spans=_table_secret_spans,
    ),
    # The secret that follows its access key id ("<id>\n<secret>" in a saved key file, "<id>,<secret>"):
    # the id says what the next random run is.
    _Rule(
        "access-key-pair",
        "secret access key after its id",
        re.compile(
            r"(?:LTAI[A-Za-z0-9]{12,20}|AKID[A-Za-z0-9]{32}|(?:AKIA|ASIA)[0-9A-Z]{16})[ \t\r\n,:;/|]{1,6}+"
            r"(?P<value>[A-Za-z0-9/+]{30,40})(?![A-Za-z0-9/+=])"
        ),
        accepts=lambda match: _looks_random(match["value"]) and not _is_placeholder_body(match["value"]),
        word_start=True,
    ),
    # Tencent Cloud's SecretId: "AKID" and 32 letters and digits.
    _Rule(
        "tencent-secret-id",
        "Tencent Cloud SecretId",
        re.compile(r"AKID(?P<body>[A-Za-z0-9]{32})\b"),
        accepts=_is_random_token_body,
        word_start=True,
    ),
    # Scaleway's access key ("SCW" and 17 upper-case letters and digits), with its secret key (a UUID)
    # when it follows after a slash, as the console shows the pair.
    _Rule(
        "scaleway-key",
        "Scaleway access key",
        re.compile(
            r"SCW(?P<body>[A-Z0-9]{17})\b(?:\s*+/\s*+[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b)?"
        ),
        accepts=_has_digit_and_upper_body,
        word_start=True,
    ),
    # Huawei Cloud's "AK,SK" pair: a 20-character access key and a 40-character secret after a comma.
    _Rule(
        "huawei-ak-sk",
        "Huawei Cloud access key pair",
        # The pattern starts at the comma (far fewer places than every letter) and looks back for the id.
        re.compile(r",(?P<body>[A-Za-z0-9]{40})\b"),
        accepts=lambda match: (
            match.start() >= 20
            and _HUAWEI_ACCESS_KEY_RE.fullmatch(match.string, match.start() - 20, match.start()) is not None
            and not _is_word_character(match.string[match.start() - 21 : match.start() - 20] or " ")
            and _is_random_token_body(match)
        ),
        hint=",",
    ),
    # Okta API tokens: "00" and 40 base64url characters.
    _Rule(
        "okta-token",
        "Okta API token",
        re.compile(r"00(?P<body>[A-Za-z0-9_-]{40})(?![A-Za-z0-9_-])"),
        accepts=lambda match: (
            match.string[match.start() - 1 : match.start()] != "-" and _is_random_token_body(match)
        ),
        word_start=True,
    ),
    # Twitter/X app-only bearer tokens: a run of "A"s, then random characters with a percent-encoded "=".
    _Rule(
        "twitter-bearer",
        "Twitter bearer token",
        re.compile(r"AAAAAAAAAAAAAAAAAA(?P<body>[A-Za-z0-9]{8,}%3D[A-Za-z0-9]{20,})"),
        accepts=_is_real_token,
    ),
    # Every character percent-encoded, letters and digits too: no program needs that; it hides a value.
    _Rule(
        "percent-encoded-run",
        "percent-encoded credential",
        re.compile(r"(?:%[2-7][0-9A-Fa-f]){20,}+"),
        accepts=_is_fully_percent_encoded_secret,
        hint="%",
    ),
    _Rule(
        "secret-nearby",
        "credential next to a secret's name",
        # The last resort for forms no rule above knows ("use the key \"<key>\" when calling", "token (prod)
        # → <key>"): a long run of random letters and digits within a few words after a secret's name, in
        # any language. The run must be far more random than a value under a name has to be.
        re.compile(
            # A name in a script without spaces may follow Latin letters ("APIキー", "API密钥").
            r"(?:(?<![A-Za-z])|(?=[^\x00-\x7f]))(?P<name>" + _NEARBY_NAMES + r")(?P<gap>[^\n]{0,80}?)"
            # A shorter run must hold a digit, so that a word between the name and the key is passed over.
            # A key of two dotted parts ("<32 hex>.<secret>", Zhipu's "<id>.<secret>") is judged by its first
            # part and redacted whole.
            r"(?<![A-Za-z0-9+/=_.~-])(?P<value>[A-Za-z0-9+/=_~-]{20,}+(?:\.[A-Za-z0-9]{8,}+(?![.A-Za-z0-9]))?"
            r"|(?=[A-Za-z+/=_~-]{0,18}[0-9])[A-Za-z0-9+/=_~-]{12,19}+(?![A-Za-z0-9+/=_~-])"
            # A password with a symbol ("<Word>!<word><digits>"), judged only where the text declares it.
            r"|(?=[A-Za-z0-9.+=_~-]{0,40}[!#$%&*@^])[A-Za-z0-9!#$%&*@^+=_~.-]{8,64}+(?!:))",
            re.IGNORECASE,
        ),
        accepts=_is_random_near_a_secret_name,
        anchor_words=_NEARBY_ANCHORS,
    ),
    _Rule(
        "prefixed-token",
        "API token",
        # Formats not listed above: most providers now follow the convention GitHub described for its
        # tokens in 2021, a short prefix naming the issuer and kind ("abc_", "xyz-live-") before a long
        # random base62 body. The pattern starts at the separator (far fewer places than every letter);
        # the prefix before it and the body's randomness are checked afterwards.
        # The end of the body (not followed by base64's "+/=") is checked afterwards too: in the pattern, a
        # failure there would start the run over from its next separator, quadratic in the run's length.
        # A dot separates the parts of some ("sk.live.<body>", "<id>.<secret>") as well.
        re.compile(r"(?<=[A-Za-z0-9])[_.-](?P<body>[A-Za-z0-9][A-Za-z0-9_.-]{29,}+)"),
        accepts=_is_prefixed_random_token,
    ),
    _Rule(
        "credential-context",
        "credential",
        # Any key-shaped run, judged by the words around it (_is_value_in_credential_context): for what people
        # write when they hand a key over without naming its format. A run that is not a key is passed over
        # whole: no shorter run inside it is tried again.
        _CREDENTIAL_CONTEXT_RE,
        spans=_credential_context_spans,
        min_joined_piece=_MIN_CONTEXT_JOINED_PIECE,
        skips_claimed=True,
    ),
    _Rule(
        "random-string",
        "random string that nothing explains (if it is an id or a digest, say which beside it)",
        # After every rule that knows a format or a name: a string random in both cases that no word explains
        # (_is_unexplained_random_string). The same runs as the credential-context rule's.
        _CREDENTIAL_CONTEXT_RE,
        spans=_unexplained_random_spans,
        min_joined_piece=_MIN_RANDOM_JOINED_PIECE,
        skips_claimed=True,
    ),
    _Rule(
        "app-password",
        "app password",
        # Google shows an app password as sixteen random lower-case letters in groups of four ("abcd efgh
        # ijkl mnop"); after a password's name, in any language, that is the password.
        re.compile(r"(?<![A-Za-z])(?P<value>[a-z]{4}(?: [a-z]{4}){3}|[a-z]{16})(?![A-Za-z])"),
        accepts=_is_app_password,
        hint_pattern=re.compile(r"[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4}|[a-z]{16}"),
    ),
)


_RULE_ORDER = {rule.id: index for index, rule in enumerate(_RULES)}


def _rule_spans(
    rule: _Rule, text: str, anchors: "_AnchorStarts", claimed: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[int, int]]:
    if rule.hint is not None and rule.hint not in text:
        return
    if rule.hint_pattern is not None:
        if rule.lowered_hint_pattern is not None and text.isascii():
            if rule.lowered_hint_pattern.search(text.lower()) is None:
                return
        elif rule.hint_pattern.search(text) is None:
            return
    if rule.hint_words is not None:
        lowered = text.lower()
        if not any(word in lowered for word in rule.hint_words):
            return
    span_group = "value" if "value" in rule.pattern.groupindex else 0
    position = 0
    next_match = (
        _anchored_search(rule, text, anchors) if rule.anchor_words is not None else rule.pattern.search
    )
    while (match := next_match(text, position)) is not None:
        start = match.start()
        if rule.word_start and start > 0 and _is_word_character(text[start - 1]):
            position = start + 1
        elif rule.spans is not None:
            if claimed is None or not (rule.skips_claimed and claimed(*match.span("token"))):
                yield from rule.spans(match)
            position = match.end()
        elif rule.accepts is None or rule.accepts(match):
            yield match.span(span_group)
            position = match.end()
        elif span_group:
            # A rejected value may begin the real assignment ("password: api_token=..."), so look again from
            # the value, or from the name's end when the separator holds another name ("credentials:\n
            # password: ..." reads as a type annotation). Values hold no delimiters and separators are short,
            # so a character is rescanned a bounded number of times.
            resume = match.end("name") if "separator" in rule.pattern.groupindex else match.start(span_group)
            position = max(resume, match.start() + 1)
        else:
            # Anything that could match inside a rejected token lies in the same run and was already judged.
            position = match.end()


def _anchored_search(
    rule: _Rule, text: str, anchors: "_AnchorStarts"
) -> Callable[[str, int], re.Match[str] | None]:
    """``rule.pattern.search``, tried only where one of the rule's anchor words starts."""
    starts = anchors.starts(rule.anchor_words or ())
    if starts is None:
        return rule.pattern.search

    def search(text: str, position: int) -> re.Match[str] | None:
        for start in starts[bisect_left(starts, position) :]:
            if (match := rule.pattern.match(text, start)) is not None:
                return match
        return None

    return search


# Several rules start at the same words (a secret's name in any language): their starts in a text are
# found once per scan of it, for all of them. Once per scan, not per text across calls: a cache keyed by the
# text would make a text checked again look cheaper than a new one.
class _AnchorStarts:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lowered = text.lower()
        self.by_words: dict[tuple[str, ...], tuple[int, ...] | None] = {}
        self.occurrences: dict[str, list[int]] | None = None

    def starts(self, words: tuple[str, ...]) -> tuple[int, ...] | None:
        if words not in self.by_words:
            self.by_words[words] = self._find(words)
        return self.by_words[words]

    def _find(self, words: tuple[str, ...]) -> tuple[int, ...] | None:
        text, lowered = self.text, self.lowered
        if len(lowered) != len(text):  # a few characters grow when lowered ("İ"); positions would not line up
            return None
        if not text.isascii():
            # Other scripts: one trie search, from the end of each word found (a word and a longer one from
            # the same start, "secret" and "secreto", give one start).
            return tuple(found.start() for found in _anchor_regex(words).finditer(lowered))
        # In ASCII text, every place where a word starts, also inside another word's place. Which of all
        # rules' ASCII words the text holds is asked once (str "in" is the fastest test for a word, and the
        # regex engine is slow on text most of whose letters could start one); only those are looked for.
        if self.occurrences is None:
            self.occurrences = {
                word: list(_occurrences(lowered, word)) for word in _ASCII_ANCHOR_WORDS if word in lowered
            }
        if not _is_among_all_anchor_words(words):
            return tuple(sorted({found for word in words for found in _occurrences(lowered, word)}))
        chosen = _anchor_word_set(words)
        return tuple(
            sorted({found for word, places in self.occurrences.items() if word in chosen for found in places})
        )


def _starts_of_any_word(lowered: str, pattern: re.Pattern[str]) -> list[int]:
    """Every place where a word of ``pattern`` starts. A word that starts inside another one found starts
    before that one's end, since the search that found the other one passed no start."""
    starts = []
    for found in pattern.finditer(lowered):
        starts.append(found.start())
        starts.extend(
            inside
            for inside in range(found.start() + 1, found.end())
            if pattern.match(lowered, inside) is not None
        )
    return starts


def _occurrences(text: str, word: str) -> Iterator[int]:
    found = text.find(word)
    while found != -1:
        yield found
        found = text.find(word, found + 1)


@cache
def _anchor_regex(words: tuple[str, ...]) -> re.Pattern[str]:
    # A trie: the longest word from each start, and one comparison per branch where a word could start.
    return re.compile(_word_trie(frozenset(words)))


@cache
def _is_among_all_anchor_words(words: tuple[str, ...]) -> bool:
    return set(words) <= set(_ALL_ANCHOR_WORDS)


@cache
def _anchor_word_set(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(words)


def _is_word_character(char: str) -> bool:
    # ASCII only, not str.isalnum: Korean particles glue straight onto a key ("키는sk-...를").
    return char == "_" or ("a" <= char <= "z") or ("A" <= char <= "Z") or ("0" <= char <= "9")


# --- other readings of the text -------------------------------------------------------------------------
# A credential disguised on purpose or by accident is found by scanning the text as a reader would see it:
# with compatibility forms folded (NFKC: fullwidth "ｇｈｐ＿" is "ghp_"), invisible and format characters
# removed (zero-width space, soft hyphen, bidi controls), percent-escapes of printable ASCII decoded, a line
# break inside a token removed, and long base64 runs decoded. A finding in such a reading is mapped back
# to the characters of the original text it came from, so redaction removes the disguised token whole.

# Default-ignorable code points (Unicode's list, format characters and fillers): nothing a reader sees.
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e0fff]"
)
# Printable ASCII, tab and line breaks: what a token and its assignment are written with.
# Non-ASCII text is percent-encoded as its UTF-8 bytes: a lead byte and one to three continuation bytes
# ("값" is %EA%B0%92), decoded as the one character they encode.
_PERCENT_ESCAPE = r"%(?:[2-7][0-9A-Fa-f]|0[9AaDd]|[C-Fc-f][0-9A-Fa-f](?:%[89ABab][0-9A-Fa-f]){1,3})"
_PERCENT_ESCAPE_RE = re.compile(_PERCENT_ESCAPE)
# HTML character references ("&#95;" for "_") of printable ASCII.
_HTML_REFERENCE = r"&#(?:3[2-9]|[4-9][0-9]|1[01][0-9]|12[0-6]);|&#x(?:[2-6][0-9A-Fa-f]|7[0-9A-Ea-e]);|&(?:lt|gt|amp|quot|apos);"
_HTML_REFERENCE_RE = re.compile(_HTML_REFERENCE)
# JSON's "\uff50": a character outside ASCII written as its escape (fullwidth letters, invisible ones).
_JSON_ESCAPE = r"\\u(?:[0-9A-Fa-f]{4})"
_JSON_ESCAPE_RE = re.compile(_JSON_ESCAPE)
_NORMALIZE_SPOT_RE = re.compile(
    _PERCENT_ESCAPE + "|" + _HTML_REFERENCE + "|" + _JSON_ESCAPE + r"|[^\x00-\x7f]+"
)
# A line break between two characters of a token, with the indentation or shell continuation around it.
_TOKEN_CHARS = "A-Za-z0-9_+/~.%$-"
# A JSON string writes the break as "\\n"; code splits a long string in two ("abc" + "def", "abc" "def").
# A continuation written with a space before the backslash ("glpat-abc \\\n def") is joined only when
# the pieces together look like a token, as at a bare line break: shell lines end so between arguments.
_LINE_BREAK_IN_TOKEN_RE = re.compile(
    f"(?<=[{_TOKEN_CHARS}])(?:(?P<continued>\\\\?)\r?\n|[ \t]++\\\\\r?\n|(?:\\\\[rn]){{1,2}}|(?P<quote>[\"'])[ \t]*+\\+?[ \t]*+(?P=quote))"
    # A reply quotes the rest of a wrapped line with "> " ("...b25189b89614f1ae55\n> 276ede0c...").
    f"[ \t]*(?:>[ \t]?)*(?=[{_TOKEN_CHARS}])"
)
_TOKEN_RUN_BEFORE_RE = re.compile(f"[{_TOKEN_CHARS}]*+$")
_TOKEN_RUN_AFTER_RE = re.compile(f"[{_TOKEN_CHARS}]*")
# Without a shell continuation, the two pieces together must look like a token (long, with a digit or both
# cases), so that wrapped prose is not read twice; a finding only counts if it runs across the break.
_MIN_JOINED_RUN = 16
_UUID_LENGTH = 36
_WHOLE_UUID_END_RE = re.compile(
    r"(?<![0-9A-Fa-f-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
)
_MIN_JOINED_DIGITS = 2
_MIN_JOINED_CASE_FLIPS = 3
_MAX_SINGLE_JOINS = 8
_JOIN_WINDOW = 250
# Base64 of a 20-character key id ("AKIA...", Huawei's and Alibaba's ids) is 27 characters and its padding;
# shorter runs are words and ids.
_BASE64_RUN_RE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{26,}+={0,2}")
_MIN_PRINTABLE_SHARE = 0.95


@dataclass(frozen=True)
class _Reading:
    """Text derived from the original, and for each of its characters the span of original text it came
    from (``None``: the same text)."""

    text: str
    starts: list[int] | None = None
    ends: list[int] | None = None

    def original_span(self, start: int, end: int) -> tuple[int, int]:
        if self.starts is None or self.ends is None:
            return start, end
        return self.starts[start], self.ends[end - 1]


def _percent_decoded(escape: str) -> str:
    if len(escape) == 3:
        return chr(int(escape[1:], 16))
    try:
        return bytes.fromhex(escape.replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return escape


def _normalized_reading(text: str) -> _Reading | None:
    """NFKC, invisible characters removed, printable percent-escapes decoded; None when nothing changes."""
    escaped = "\\u" in text and _JSON_ESCAPE_RE.search(text) is not None
    if text.isascii():
        percent = "%" in text and _PERCENT_ESCAPE_RE.search(text) is not None
        if not percent and not escaped and ("&" not in text or _HTML_REFERENCE_RE.search(text) is None):
            return None
    elif (
        not escaped
        and _PERCENT_ESCAPE_RE.search(text) is None
        and ("&" not in text or _HTML_REFERENCE_RE.search(text) is None)
        and _INVISIBLE_RE.search(text) is None
        and unicodedata.is_normalized("NFKC", text)
    ):
        return None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    copied = 0
    for spot in _NORMALIZE_SPOT_RE.finditer(text):
        begin, stop = spot.span()
        pieces.append(text[copied:begin])
        starts.extend(range(copied, begin))
        ends.extend(range(copied + 1, begin + 1))
        copied = stop
        found = spot[0]
        if found[0] in "%&\\":
            if found[0] == "\\":
                decoded = unicodedata.normalize("NFKC", chr(int(found[2:], 16)))
                decoded = "" if _INVISIBLE_RE.match(decoded) else decoded
            else:
                decoded = _percent_decoded(found) if found[0] == "%" else html.unescape(found)
            pieces.append(decoded)
            starts.extend([begin] * len(decoded))
            ends.extend([stop] * len(decoded))
            continue
        if _INVISIBLE_RE.search(found) is None and unicodedata.is_normalized("NFKC", found):
            pieces.append(found)
            starts.extend(range(begin, stop))
            ends.extend(range(begin + 1, stop + 1))
            continue
        for offset, char in enumerate(found):
            if _INVISIBLE_RE.match(char):
                continue
            folded = unicodedata.normalize("NFKC", char)
            pieces.append(folded)
            starts.extend([begin + offset] * len(folded))
            ends.extend([begin + offset + 1] * len(folded))
    pieces.append(text[copied:])
    starts.extend(range(copied, len(text)))
    ends.extend(range(copied + 1, len(text) + 1))
    return _Reading("".join(pieces), starts, ends)


def _starts_a_key(text: str, position: int) -> bool:
    # "==" and a "=" that closes the string or the call ('...aSQ=")') are base64 padding, the token's end.
    follows = text[position : position + 2]
    return follows[:1] == ":" or (follows[:1] == "=" and follows != "==" and follows[1:] not in _PADDING_END)


_PADDING_END = ("", '"', "'", "`", ")", ",", ";")


def _looks_like_a_token_run(run: str) -> bool:
    # Digits, or a case that flips back and forth: "db.internalORDERS_QUEUE" and "configurationThe" (the
    # end of one line and the start of the next) flip once or twice, a random run of 16 flips about 8 times.
    if sum(char.isdigit() for char in run) >= _MIN_JOINED_DIGITS:
        return True
    cases = [char.isupper() for char in run if char.isalpha()]
    return sum(a != b for a, b in pairwise(cases)) >= _MIN_JOINED_CASE_FLIPS


def _joined_windows(reading: _Reading) -> Iterator[tuple[_Reading, list[int]]]:
    """Readings of the text around each line break that falls inside a token-shaped run, with the break
    removed, and where in each window the joins are: only findings across a join are new."""
    text = reading.text
    breaks = []
    for found in _LINE_BREAK_IN_TOKEN_RE.finditer(text):
        if found["continued"]:
            breaks.append(found.span())
            continue
        right = _TOKEN_RUN_AFTER_RE.match(text, found.end())
        # A next line that goes on with "=" or ":" is an assignment or a YAML key of its own; "==" is base64
        # padding, the end of the token's rest.
        if right is None or _starts_a_key(text, right.end()):
            continue
        # The run before the break, in a bounded stretch: the pieces only have to be long enough together.
        left = _TOKEN_RUN_BEFORE_RE.search(text, max(0, found.start() - _MIN_JOINED_RUN), found.start())
        run = (left[0] if left else "") + right[0]
        # A UUID is whole at 36 characters: what the next line starts is something else ("<uuid>\nClient ID").
        if _WHOLE_UUID_END_RE.search(text, max(0, found.start() - _UUID_LENGTH - 1), found.start()):
            continue
        if len(run) >= _MIN_JOINED_RUN and _looks_like_a_token_run(run):
            breaks.append(found.span())
    if not breaks:
        return
    # Each break is joined alone (the next line's start is not always the token's rest), and breaks closer
    # than a window apart are also joined together, for a token broken over three lines or more. Past a
    # few breaks (a dump of base64 or hex lines) only the groups are read, which keeps the cost at about
    # one more pass over the text.
    groups: list[list[tuple[int, int]]] = (
        [[span] for span in breaks] if len(breaks) <= _MAX_SINGLE_JOINS else []
    )
    run: list[tuple[int, int]] = [breaks[0]]
    for span in breaks[1:]:
        if span[0] - run[-1][1] < _JOIN_WINDOW:
            run.append(span)
            continue
        if len(run) > 1 or len(breaks) > _MAX_SINGLE_JOINS:
            groups.append(run)
        run = [span]
    if len(run) > 1 or len(breaks) > _MAX_SINGLE_JOINS:
        groups.append(run)
    for group in groups:
        window_start = max(0, group[0][0] - _JOIN_WINDOW)
        window_end = min(len(text), group[-1][1] + _JOIN_WINDOW)
        pieces: list[str] = []
        positions: list[int] = []
        joins: list[int] = []
        copied = window_start
        for begin, stop in group:
            pieces.append(text[copied:begin])
            positions.extend(range(copied, begin))
            joins.append(len(positions))
            copied = stop
        pieces.append(text[copied:window_end])
        positions.extend(range(copied, window_end))
        starts = [reading.original_span(position, position + 1)[0] for position in positions]
        ends = [reading.original_span(position, position + 1)[1] for position in positions]
        yield _Reading("".join(pieces), starts, ends), joins


def _pieces_are_long_enough(rule: _Rule, start: int, end: int, joins: list[int]) -> bool:
    edges = [start, *joins, end]
    return all(right - left >= rule.min_joined_piece for left, right in pairwise(edges))


def _decoded_base64(run: str) -> str | None:
    """The text a base64 run encodes, or None if it is not base64 of text (a hash, a key, a word)."""
    stripped = run.rstrip("=")
    if len(stripped) % 4 == 1 or not stripped.isascii() or _PURE_HEX_RE.fullmatch(stripped):
        return None
    padded = stripped + "=" * (-len(stripped) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    printable = sum(char.isprintable() or char in "\n\r\t" for char in decoded)
    return decoded if printable >= _MIN_PRINTABLE_SHARE * len(decoded) else None


class _Claims:
    """Findings whose spans do not overlap: a span claimed by an earlier rule wins. A later reading that
    finds a longer span across a claimed one (the rest of a token after a zero-width space or a line break)
    widens the claim, so that redaction leaves none of the token behind."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []  # sorted and non-overlapping, so neighbours are enough
        self.by_span: dict[tuple[int, int], SecretFinding] = {}

    def _overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        index = bisect_left(self.spans, (start, end))
        if index > 0 and self.spans[index - 1][1] > start:
            index -= 1
        found = []
        while index < len(self.spans) and self.spans[index][0] < end:
            found.append(self.spans[index])
            index += 1
        return found

    def overlaps(self, start: int, end: int) -> bool:
        return bool(self._overlapping(start, end))

    def claim(self, rule: _Rule, start: int, end: int, layer: str) -> None:
        overlapping = self._overlapping(start, end)
        if not overlapping:
            finding = SecretFinding(rule=rule.id, label=rule.label, start=start, end=end, layer=layer)
        elif layer == "as written" or (overlapping[0][0] <= start and end <= overlapping[-1][1]):
            return
        else:
            first = self.by_span[overlapping[0]]
            start, end = min(start, overlapping[0][0]), max(end, overlapping[-1][1])
            # The rule that knows the format names the finding: a token's rest after a zero-width space is a
            # random string to the last rule, the whole of it a GitHub token to its own.
            if _RULE_ORDER[rule.id] < _RULE_ORDER[first.rule]:
                first = SecretFinding(rule=rule.id, label=rule.label, start=start, end=end, layer=layer)
            finding = replace(first, start=start, end=end)
            for span in overlapping:
                self.spans.remove(span)
                del self.by_span[span]
        self.spans.insert(bisect_left(self.spans, (start, end)), (start, end))
        self.by_span[(start, end)] = finding

    def findings(self) -> list[SecretFinding]:
        return [self.by_span[span] for span in self.spans]


def _scan(
    text: str, rules: tuple[_Rule, ...] = (), claimed: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[_Rule, int, int]]:
    anchors = _AnchorStarts(text)
    for rule in rules or _RULES:
        if rule.required is not None and rule.required not in text:
            continue
        for start, end in _rule_spans(rule, text, anchors, claimed):
            yield rule, start, end


_WRITTEN_OVER_UUID_RE = re.compile(r"[0-9a-fA-F][0-9a-fA-F-]{34}[0-9a-fA-F]")


def _is_masked_key_under_qualified_name(match: re.Match[str]) -> bool:
    name, value = match["name"], match["value"]
    if match.groupdict().get("random") is not None:
        return _is_random_under_access_name(match, value)
    qualified = not _is_bare_name(name)
    if match["weak"] is not None and _is_weak_key_name(name):
        return False
    # A UUID with a word written over one of its dashes ("f3f9cdb6-5e14-4243-9test4fd7..."): zeros over the
    # word leave 36 hex digits and dashes, still the key.
    if qualified and _WRITTEN_OVER_UUID_RE.fullmatch(value) is not None and 2 <= value.count("-") <= 4:
        return True
    return qualified and (_is_key_under_qualified_name(name, value) or _looks_random_or_id_and_secret(value))


# Part of a real token written over with a placeholder word ("sbp_0c22fe7377XXXXXXcd23e7...", "...demo7bf3")
# still gives most of the token away. The masked reading writes zeros over such words when they sit inside
# a run of letters and digits, which puts the token back in its format's alphabet; the body check then
# decides whether enough of it is left to be a credential ("ghp_xxxx...x" is not). Only the format rules
# and keys under a qualified name read it: for a value a context rule judges, a placeholder word standing
# at its edge ("changeme123", "<key>-EXAMPLE") still makes it a placeholder.
_MASK_WORDS = (
    "example", "sample", "test", "demo", "dummy", "fake", "xxxx", "your", "changeme", "placeholder", "redacted"
)  # fmt: skip
_CONTEXT_RULE_IDS = frozenset(
    {
        "private-key",
        "url-credentials",
        "authorization-header",
        "npm-auth-token",
        "command-line-password",
        "user-and-password",
        "sql-password",
        "login-key",
        "secret-nearby",
    }
)
_MASKED_RULES: tuple[_Rule, ...] = tuple(
    rule
    if rule.id != "secret-assignment" or "name" not in rule.pattern.groupindex
    else replace(rule, accepts=_is_masked_key_under_qualified_name)
    for rule in _RULES
    if rule.id not in _CONTEXT_RULE_IDS
)


def _masked_spots(text: str) -> list[tuple[int, int]]:
    """Where a placeholder word touches a letter or digit of the same run (str.find: a case-insensitive
    regex over the whole text costs more than all the rules)."""
    lowered = text.lower()
    spots = []
    for word in _MASK_WORDS:
        position = lowered.find(word)
        while position != -1:
            end = position + len(word)
            while word == "xxxx" and end < len(lowered) and lowered[end] == "x":
                end += 1
            touches = (position > 0 and _is_ascii_alnum(text[position - 1])) or (
                end < len(text) and _is_ascii_alnum(text[end])
            )
            if touches:
                spots.append((position, end))
            position = lowered.find(word, end)
    return spots


def _is_ascii_alnum(char: str) -> bool:
    return char != "_" and _is_word_character(char)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential in ``text``, sorted by position; a span claimed by an earlier rule wins. The text is
    read as written, then normalized, with broken lines joined and with base64 runs decoded."""
    claims = _Claims()
    for rule, start, end in _scan(text, claimed=claims.overlaps):
        claims.claim(rule, start, end, "as written")
    normalized = _normalized_reading(text)
    if normalized is not None:
        for rule, start, end in _scan(normalized.text):
            claims.claim(rule, *normalized.original_span(start, end), "normalized")
        if "%25" in text and (again := _normalized_reading(normalized.text)) is not None:
            # Encoded twice ("%253D"). A second decoding alongside the first: in a URL whose password holds an
            # escape ("%40"), only the first decoding keeps the URL's shape.
            for rule, start, end in _scan(again.text):
                first_start, first_end = again.original_span(start, end)
                span = normalized.original_span(first_start, first_end)
                claims.claim(rule, *span, "normalized")
    reading = normalized or _Reading(text)
    if any(mark in reading.text for mark in ("\n", "\\n", "\\r", '" ', "' ")):
        for window, joins in _joined_windows(reading):
            for rule, start, end in _scan(window.text):
                inside = [join for join in joins if start < join < end]
                if inside and _pieces_are_long_enough(rule, start, end, inside):
                    claims.claim(rule, *window.original_span(start, end), "joined lines")
    if spots := _masked_spots(reading.text):
        masked = list(reading.text)
        for begin, stop in spots:
            masked[begin:stop] = "0" * (stop - begin)
        for rule, start, end in _scan("".join(masked), _MASKED_RULES):
            if reading.text[start:end] in _DOCUMENTED_EXAMPLE_TOKENS:
                continue
            if any(begin < end and start < stop for begin, stop in spots):
                claims.claim(rule, *reading.original_span(start, end), "masked placeholder words")
    # "base64" and PEM-like dumps wrap their output at 64 or 76 columns: the lines are one run, read before
    # each line alone so that the whole run is what is redacted.
    runs = []
    if "\n" in reading.text:
        runs = [
            (re.sub(r"\s++", "", wrapped[0]), wrapped.span(), True)
            for wrapped in _WRAPPED_BASE64_RE.finditer(reading.text)
        ]
    runs += [(run[0], run.span(), False) for run in _BASE64_RUN_RE.finditer(reading.text)]
    for run, run_span, wrapped in runs:
        span = reading.original_span(*run_span)
        # A wrapped run is read even where a piece of it was claimed (a line joined to the one before), and
        # then widens the claim to the whole run.
        if not wrapped and claims.overlaps(*span):
            continue
        rule = _rule_of_encoded(run)
        if rule is not None:
            claims.claim(rule, *span, "base64-decoded")
    return claims.findings()


# Two or more lines of base64, all but the last at least 40 characters long.
_WRAPPED_BASE64_RE = re.compile(r"(?<![A-Za-z0-9+/])(?:[A-Za-z0-9+/]{40,}+\r?\n)++[A-Za-z0-9+/]{4,}+={0,2}")


def _rule_of_encoded(run: str, *, depth: int = 0) -> _Rule | None:
    """The rule that finds a credential in what a base64 run encodes; the first credential inside names the
    kind, the whole run is what has to go."""
    decoded = _decoded_base64(run)
    if decoded is None:
        return None
    for rule, _start, _end in _scan(unicodedata.normalize("NFKC", decoded)):
        return rule
    stripped = decoded.strip()
    # Base64 of a key alone, with no name ("base64 so the scanner leaves it alone: ..."): nothing else is
    # encoded as one run of key characters.
    if _ENCODED_KEY_CHARS_RE.fullmatch(stripped) is not None and _is_key_shaped(stripped):
        return _ENCODED_KEY_RULE
    # Encoded twice (a Basic header's "user:password" encoded again): one more decoding, no further.
    if depth == 0 and _BASE64_RUN_RE.fullmatch(stripped) is not None:
        if _is_encoded_user_and_password(stripped):
            return _ENCODED_KEY_RULE
        return _rule_of_encoded(stripped, depth=1)
    return None


_ENCODED_KEY_RULE = next(rule for rule in _RULES if rule.id == "encoded-key")
_ALL_ANCHOR_WORDS = tuple(sorted({word for rule in _RULES for word in rule.anchor_words or ()}))
_ASCII_ANCHOR_WORDS = tuple(word for word in _ALL_ANCHOR_WORDS if word.isascii())


def redact_secrets(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED:<rule-id>]``."""
    return _redacted(text, find_secrets(text))


def _redacted(text: str, findings: list[SecretFinding]) -> str:
    pieces: list[str] = []
    copied_up_to = 0
    for finding in findings:
        pieces.append(text[copied_up_to : finding.start])
        pieces.append(f"[REDACTED:{finding.rule}]")
        copied_up_to = finding.end
    pieces.append(text[copied_up_to:])
    return "".join(pieces)


def _join_labels(labels: list[str]) -> str:
    if len(labels) == 1:
        return labels[0]
    return ", ".join(labels[:-1]) + " and " + labels[-1]


def _article(label: str) -> str:
    return "an" if label[0].lower() in "aeiou" else "a"


def reject_secrets(*, field: str, text: str, named: bool = False) -> None:
    """Raise ``SecretDetected`` naming ``field`` and the kinds of credential found, never their values.
    ``named``: the field holds an identifier (a session id, a path, a symbol, a digest), never prose: its
    name explains any random run in it, and only the rules that know a credential's format or name judge it."""
    findings = _field_findings(text, named=named)
    if not findings:
        return
    labels = list(dict.fromkeys(finding.label for finding in findings))
    raise SecretDetected(
        f"{field} appears to contain {_article(labels[0])} {_join_labels(labels)}. Credentials must never be stored in shared "
        "memory: remove the value (you can say where it is kept, for example the name of the environment "
        "variable or secret manager entry) and try again"
    )


# --- structured data (archive import, the stored-memory scan) -----------------------------------------

# A key that names a secret ("password", "DB_PASS", "apiKey", "client_secret"): the same names the
# secret-assignment rule knows, as a whole key.
_SECRET_NAME_RE = re.compile(r"[A-Za-z0-9_.-]*?" + _SECRET_NAME_SUFFIX, re.IGNORECASE)
_SECRET_NAME_RULE = next(rule for rule in _RULES if rule.id == "secret-assignment")


@dataclass(frozen=True)
class NestedFinding:
    """A credential somewhere in a JSON-like value: where (``attrs.steps[2]``) and what kind, no value."""

    path: str
    rule: str
    label: str


def _is_secret_name(name: str) -> bool:
    found = _SECRET_NAME_RE.fullmatch(name)
    return found is not None and found["weak"] is None and found["random"] is None


def _is_secret_under_name(value: str) -> bool:
    """A value kept under a secret-named key (``{"password": "Summer2021!"}``) is one whenever it could be:
    the key already says what it is, as a secret-named assignment does in text."""
    return not _is_placeholder(value) and (_looks_random(value) or _looks_like_password(value))


def _key_label(key: str, index: int, *, holds_secret: bool) -> str:
    # A key is written by whoever wrote the data: a key holding a credential is named by its position.
    if holds_secret or len(key) > 40:
        return f"{{key #{index + 1}}}"
    return key


def _texts_and_secret_names(value: object) -> tuple[list[str], bool]:
    texts: list[str] = []
    secret_named = False
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            texts.append(node)
        elif isinstance(node, dict):
            for key, item in node.items():
                texts.append(str(key))
                secret_named = secret_named or _is_secret_name(str(key))
                stack.append(item)
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return texts, secret_named


def _may_hold_secrets(value: object) -> bool:
    """A quick and exact first test: False only if ``find_nested_secrets`` would find nothing.

    One pass of the rules over all the strings joined by blank lines costs about what one string costs,
    against a pass per string. Joining cannot hide a credential: a match that stays inside one string
    matches the same in the joined text (the blank line is a word and line boundary to every pattern), a
    span claimed across two strings is itself a finding, and a rejected match resumes at its value, which
    lies inside the later string, except the private-key pattern (it can run to the end of the text), so
    text that names a private key gets the full scan, as does anything under a secret-named key."""
    texts, secret_named = _texts_and_secret_names(value)
    joined = "\n\n".join(texts)
    return secret_named or "PRIVATE KEY" in joined or bool(find_secrets(joined))


def _value_findings(text: str, *, keyed: bool) -> list[SecretFinding]:
    """The findings in one string of structured data. A string under a key that is a single random run is
    named by its key, as a value under a name is in text: the key's name decides (a secret-named key, see
    _is_secret_under_name), not the random-string rule; a sentence under a key is judged as text."""
    findings = find_secrets(text)
    if not keyed:
        return findings
    stripped = text.strip()
    offset = text.find(stripped)
    return [
        finding
        for finding in findings
        if not (
            finding.rule == _RANDOM_STRING_RULE_ID
            and finding.start <= offset
            and finding.end >= offset + len(stripped)
        )
    ]


_RANDOM_STRING_RULE_ID = "random-string"


def holds_secrets(text: str, *, named: bool = False) -> bool:
    """Whether ``reject_secrets`` would refuse ``text`` (for a value dropped rather than refused)."""
    return bool(_field_findings(text, named=named))


def _field_findings(text: str, *, named: bool) -> list[SecretFinding]:
    findings = find_secrets(text)
    if not named:
        return findings
    return [finding for finding in findings if finding.rule != _RANDOM_STRING_RULE_ID]


def find_nested_secrets(value: object, *, path: str) -> list[NestedFinding]:
    """Every credential in the strings of a JSON-like ``value`` (dicts, lists, strings, numbers), map keys
    included; a string under a key that names a secret, at any depth, counts when it looks like one."""
    findings: list[NestedFinding] = []
    if not _may_hold_secrets(value):
        return findings

    def visit(node: object, where: str, secret_named: bool, keyed: bool) -> None:
        if isinstance(node, str):
            found = _value_findings(node, keyed=keyed)
            findings.extend(NestedFinding(path=where, rule=f.rule, label=f.label) for f in found)
            if not found and secret_named and _is_secret_under_name(node):
                findings.append(
                    NestedFinding(path=where, rule=_SECRET_NAME_RULE.id, label=_SECRET_NAME_RULE.label)
                )
        elif isinstance(node, dict):
            for index, (key, item) in enumerate(node.items()):
                in_key = find_secrets(str(key))
                label = _key_label(str(key), index, holds_secret=bool(in_key))
                findings.extend(
                    NestedFinding(path=f"{where}.{label}", rule=f.rule, label=f.label) for f in in_key
                )
                visit(item, f"{where}.{label}", secret_named or _is_secret_name(str(key)), True)
        elif isinstance(node, list | tuple):
            for index, item in enumerate(node):
                visit(item, f"{where}[{index}]", secret_named, keyed)

    visit(value, path, False, False)
    return findings


def redact_nested(value: object, *, secret_named: bool = False, keyed: bool = False) -> object:
    """``value`` with every credential that ``find_nested_secrets`` reports replaced by its marker
    (a whole value under a secret-named key becomes ``[REDACTED:secret-assignment]``)."""
    if isinstance(value, str):
        found = _value_findings(value, keyed=keyed)
        if not found and secret_named and _is_secret_under_name(value):
            return f"[REDACTED:{_SECRET_NAME_RULE.id}]"
        return _redacted(value, found)
    if isinstance(value, dict):
        return {
            redact_secrets(str(key)): redact_nested(
                item, secret_named=secret_named or _is_secret_name(str(key)), keyed=True
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_nested(item, secret_named=secret_named, keyed=keyed) for item in value]
    return value
