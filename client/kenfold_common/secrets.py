"""Secret filter (spec §1.11): find, redact or reject credentials before text reaches shared memory.

Eighteen rules run in priority order; a span claimed by an earlier rule is never reported again by a later
one, so a JWT inside an ``Authorization`` header counts once, as a JWT. Provider tokens are recognized by
their prefixes alone. The three context rules (password in a URL, ``Authorization`` header, secret-named
assignment) also have to pass value checks, because their patterns match ordinary text far more often:
placeholders (``${API_TOKEN}``, ``<your-key>``, ``changeme123``) and, for the last two, values that do not
look random (commit SHAs, words, paths).

This runs on every write and on hook captures far longer than a memory, so the patterns are compiled once
and kept linear in the length of the text: no nested repetitions, possessive runs where a tail can still
fail, and the JWT and secret-assignment patterns start only where a run of their characters starts.
It imports nothing from Django, so the client hook can redact with it before anything reaches the disk.
"""

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from kenfold_common.errors import SecretDetected


@dataclass(frozen=True)
class SecretFinding:
    """Where a credential sits in a text; deliberately carries no copy of the value."""

    rule: str
    label: str
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    id: str
    label: str
    # A named group "value" narrows the finding to the credential itself (the password, not the whole URL).
    pattern: re.Pattern[str]
    accepts: Callable[[re.Match[str]], bool] | None = None


_PLACEHOLDER_PREFIXES = ("$", "%", "{{", "<")
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
_PURE_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_MIN_RANDOM_LENGTH = 12
_MIN_RANDOM_ENTROPY_BITS = 3.5
_URL_PASSWORD_SYMBOLS = frozenset("!#$%&*+=?^~-_")


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        value.startswith(_PLACEHOLDER_PREFIXES)
        or any(word in lowered for word in _PLACEHOLDER_WORDS)
        or len(set(value)) == 1
    )


def _character_class(char: str) -> str | None:
    if "A" <= char <= "Z":
        return "upper"
    if "a" <= char <= "z":
        return "lower"
    if "0" <= char <= "9":
        return "digit"
    # Separators of ordinary identifiers (snake_case, kebab-case, dotted.names) say nothing about randomness.
    if char in "._-":
        return None
    return "symbol"


def _shannon_entropy(value: str) -> float:
    length = len(value)
    return -sum(count / length * math.log2(count / length) for count in Counter(value).values())


def _looks_random(value: str) -> bool:
    # Cheap first test; the entropy bound alone would also refuse it (11 characters carry at most 3.46 bits).
    if len(value) < _MIN_RANDOM_LENGTH:
        return False
    # Paths and URLs are where a secret is kept, not the secret itself.
    if any(char.isspace() or char in "/\\:" for char in value):
        return False
    # Pure hex is a commit SHA or a digest far more often than a credential.
    if _PURE_HEX_RE.fullmatch(value) or not any(char.isalpha() for char in value):
        return False
    classes = {_character_class(char) for char in value} - {None}
    if len(classes) < 3 and not {"digit", "symbol"} <= classes:
        return False
    return _shannon_entropy(value) >= _MIN_RANDOM_ENTROPY_BITS


def _is_url_password(match: re.Match[str]) -> bool:
    password = match["value"]
    if _is_placeholder(password) or password.lower() == match["user"].lower():
        return False
    return len(password) >= 8 or any(char.isdigit() or char in _URL_PASSWORD_SYMBOLS for char in password)


def _is_random_non_placeholder(match: re.Match[str]) -> bool:
    value = match["value"]
    return not _is_placeholder(value) and _looks_random(value)


def _has_digit(match: re.Match[str]) -> bool:
    return any(char.isdigit() for char in match[0])


# Prefixed tokens count only at the start of a word, so "task-queue-restart-2024-11-30" is not an "sk-" key.
# ASCII classes, not \b: Korean particles glue straight onto a key ("키는sk-...를") and are \w in Unicode.
_WORD_START = r"(?<![A-Za-z0-9_])"
# A JWT never follows base64url characters; starting only at the beginning of such a run also keeps
# "eyJeyJeyJ..." linear, since its tail (a dot after a long run) can fail.
_BASE64URL_RUN_START = r"(?<![A-Za-z0-9_-])"
# The spec's "client_secret" is covered by "secret", since any name characters may come before the suffix.
# "secret_key" is ours: Django's SECRET_KEY is the secret most likely to be pasted into this project.
_SECRET_NAME_SUFFIX = (
    r"(?:password|passwd|pwd|secret|secret_key|token|api_key|api-key|apikey|access_key|private_key|auth_key"
    r"|credentials?)"
)

_RULES: tuple[_Rule, ...] = (
    _Rule(
        "private-key",
        "private key",
        # A key whose END line is missing (truncated paste) is redacted to the end of the text.
        re.compile(
            r"-----BEGIN (?P<kind>[A-Z0-9 ]{0,40})PRIVATE KEY(?P<block> BLOCK|)-----"
            r"(?:.*?-----END (?P=kind)PRIVATE KEY(?P=block)-----|.*)",
            re.DOTALL,
        ),
    ),
    _Rule(
        "aws-access-key",
        "AWS access key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", re.ASCII),
    ),
    _Rule(
        "github-token",
        "GitHub token",
        re.compile(_WORD_START + r"(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{50,255})"),
    ),
    _Rule("gitlab-token", "GitLab token", re.compile(_WORD_START + r"glpat-[A-Za-z0-9_-]{20,}")),
    _Rule("anthropic-key", "Anthropic API key", re.compile(_WORD_START + r"sk-ant-[A-Za-z0-9_-]{20,}")),
    _Rule(
        "openai-key",
        "OpenAI API key",
        # The possessive prefix makes the 20 characters count after "proj-" etc., as they do in real keys.
        re.compile(_WORD_START + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?+[A-Za-z0-9_-]{20,}"),
        accepts=_has_digit,
    ),
    _Rule("slack-token", "Slack token", re.compile(_WORD_START + r"xox[abposr]-[A-Za-z0-9-]{10,}")),
    _Rule(
        "slack-webhook",
        "Slack webhook URL",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}"),
    ),
    _Rule(
        "stripe-key", "Stripe API key", re.compile(_WORD_START + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}")
    ),
    _Rule("google-api-key", "Google API key", re.compile(_WORD_START + r"AIza[0-9A-Za-z_-]{35}")),
    _Rule("npm-token", "npm token", re.compile(_WORD_START + r"npm_[A-Za-z0-9]{36}")),
    _Rule("huggingface-token", "Hugging Face token", re.compile(_WORD_START + r"hf_[A-Za-z0-9]{30,}")),
    _Rule("kenfold-key", "Kenfold API key", re.compile(_WORD_START + r"kf_[A-Za-z0-9_-]{43}")),
    _Rule(
        "kenfold-oauth-token", "Kenfold OAuth token", re.compile(_WORD_START + r"kf[arc]_[A-Za-z0-9_-]{43}")
    ),
    _Rule(
        "jwt",
        "JWT",
        re.compile(
            _BASE64URL_RUN_START + r"eyJ[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,}"
        ),
    ),
    _Rule(
        "url-credentials",
        "password in a URL",
        # The user may be empty: redis://:password@host is the usual Redis form.
        re.compile(r"[A-Za-z][A-Za-z0-9+.-]{1,20}://(?P<user>[^\s:/@]*+):(?P<value>[^\s/@]++)@"),
        accepts=_is_url_password,
    ),
    _Rule(
        "authorization-header",
        "credential in an Authorization header",
        # The optional quote before the colon admits JSON and dict literals: {"Authorization": "Bearer ..."}.
        re.compile(
            r"authorization[\"']?\s*+[:=]\s*+[\"']?(?:bearer|basic|token)\s++"
            r"(?P<value>[A-Za-z0-9._~+/=-]{16,})",
            re.IGNORECASE,
        ),
        accepts=_is_random_non_placeholder,
    ),
    _Rule(
        "secret-assignment",
        "random-looking value assigned to a secret-named field",
        # Starts at the beginning of the text or after whitespace or an opening delimiter; "export NAME=" and
        # "--name=" need no special case because the name starts after the space and may contain "-".
        # ":=" and "=>" (Go, Ruby, PHP) are accepted besides the spec's ":" "=" and whitespace.
        re.compile(
            r"(?<![^\s\"'{(,;])[A-Za-z0-9_.-]*?" + _SECRET_NAME_SUFFIX + r"[\"']?"
            r"(?:\s*+(?::=|=>|[:=])\s*+|\s++)[\"'`]?(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_random_non_placeholder,
    ),
)


def _rule_spans(rule: _Rule, text: str) -> Iterator[tuple[int, int]]:
    span_group = "value" if "value" in rule.pattern.groupindex else 0
    position = 0
    while (match := rule.pattern.search(text, position)) is not None:
        if rule.accepts is None or rule.accepts(match):
            yield match.span(span_group)
            position = match.end()
        elif span_group:
            # A rejected value may begin the real assignment ("password: api_token=..."), so look again from
            # the value. Values hold no delimiters, so a character is rescanned a bounded number of times.
            position = match.start(span_group)
        else:
            # Anything that could match inside a rejected token lies in the same run and was already judged.
            position = match.end()


def find_secrets(text: str) -> list[SecretFinding]:
    """Every credential in ``text``, sorted by position; a span claimed by an earlier rule wins."""
    claimed: list[tuple[int, int]] = []  # sorted and non-overlapping, so neighbours are enough to check
    findings: list[SecretFinding] = []
    for rule in _RULES:
        for start, end in _rule_spans(rule, text):
            index = bisect_left(claimed, (start, end))
            if index > 0 and claimed[index - 1][1] > start:
                continue
            if index < len(claimed) and claimed[index][0] < end:
                continue
            claimed.insert(index, (start, end))
            findings.append(SecretFinding(rule=rule.id, label=rule.label, start=start, end=end))
    findings.sort(key=lambda finding: finding.start)
    return findings


def redact_secrets(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED:<rule-id>]``."""
    pieces: list[str] = []
    copied_up_to = 0
    for finding in find_secrets(text):
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


def reject_secrets(*, field: str, text: str) -> None:
    """Raise ``SecretDetected`` naming ``field`` and the kinds of credential found, never their values."""
    findings = find_secrets(text)
    if not findings:
        return
    labels = list(dict.fromkeys(finding.label for finding in findings))
    raise SecretDetected(
        f"{field} appears to contain {_article(labels[0])} {_join_labels(labels)}. Credentials must never be stored in shared "
        "memory: remove the value (you can say where it is kept, for example the name of the environment "
        "variable or secret manager entry) and try again"
    )
