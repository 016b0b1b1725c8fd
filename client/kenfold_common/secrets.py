"""Secret filter (spec §1.11): find, redact or reject credentials before text reaches shared memory.

The rules run in priority order; a span claimed by an earlier rule is never reported again by a later
one, so a JWT inside an ``Authorization`` header counts once, as a JWT. Provider tokens are recognized by
their prefixes, unless their body is a documented placeholder (``ghp_`` + 36 ``x``,
``AKIAIOSFODNN7EXAMPLE``). The context rules (AWS keys by name, password in a URL, ``Authorization``
header, ``.npmrc``, command-line passwords, secret-named assignment) also have to pass value checks,
because their patterns match ordinary text far more often: placeholders (``${API_TOKEN}``, ``<your-key>``,
``changeme123``) and, for most, values that do not look random (commit SHAs, words, paths) or, in a
password field, not like a password a person would choose (``Summer2021!``).

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
# The random body of a provider token contains a given four-letter word by chance about once in 30,000
# tokens, and a JWT or a session token runs to hundreds of characters, so bodies are held to the longer
# words and to the runs of x that documentation uses, in one case ("ghp_xxxx...", "AKIAXXXXXXXXXXXXXXXX",
# "AKIAIOSFODNN7EXAMPLE").
_TOKEN_PLACEHOLDER_WORDS = tuple(word for word in _PLACEHOLDER_WORDS if len(word) >= 5)
_TOKEN_PLACEHOLDER_RUNS = ("xxxx", "XXXX")
_PURE_HEX_RE = re.compile(r"[0-9a-fA-F]+")
# Base64 output ("openssl rand -base64 32", AWS secret keys) holds "/" and "+" but, unlike a path, holds no
# dots and has a lower-case word of four letters between slashes ("config/", "/keys") in well under 1 of
# 1000 keys.
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")
_PATH_WORD_RE = re.compile(r"(?:^|/)[a-z]{4,}+(?:/|$)")
_DOTTED_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_KEY_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/]{16}")
_MIN_RANDOM_LENGTH = 12
_MIN_RANDOM_ENTROPY_BITS = 3.5
# "openssl rand -hex 32" and Rails' secret_key_base are hex too; 64 digits is longer than any commit SHA
# (40) and as long as a SHA-256 digest, which nobody assigns to a secret-named field.
_MIN_HEX_KEY_LENGTH = 64
_MIN_PASSWORD_LENGTH = 8
_MIN_RANDOM_LETTERS_LENGTH = 20
_URL_PASSWORD_SYMBOLS = frozenset("!#$%&*+=?^~-_")


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        value.startswith(_PLACEHOLDER_PREFIXES)
        or _PERCENT_PLACEHOLDER_RE.match(value) is not None
        or any(word in lowered for word in _PLACEHOLDER_WORDS)
        or len(set(value)) == 1
    )


def _is_placeholder_body(body: str) -> bool:
    lowered = body.lower()
    return (
        any(word in lowered for word in _TOKEN_PLACEHOLDER_WORDS)
        or any(run in body for run in _TOKEN_PLACEHOLDER_RUNS)
        or len(set(body)) == 1
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


def _character_classes(value: str) -> set[str]:
    return {_character_class(char) for char in value} - {None}


def _shannon_entropy(value: str) -> float:
    length = len(value)
    return -sum(count / length * math.log2(count / length) for count in Counter(value).values())


def _names_a_location(value: str) -> bool:
    """Paths, URLs and references (``vault:db``) say where a secret is kept, not what it is."""
    if any(char.isspace() or char in "\\:" for char in value):
        return True
    if "/" not in value:
        return False
    if not _BASE64_RE.fullmatch(value) or _PATH_WORD_RE.search(value) is not None:
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
    if len(classes) < 3 and not {"digit", "symbol"} <= classes and not _has_random_case(value, classes):
        return False
    return _shannon_entropy(value) >= _MIN_RANDOM_ENTROPY_BITS


def _has_random_case(value: str, classes: set[str]) -> bool:
    # One random 32-letter key in 300 has no digit. Its case flips at random, so upper case is about half of
    # it; CamelCase names ("AbstractSingletonProxyFactoryBean") stay below a third.
    if classes != {"upper", "lower"} or len(value) < _MIN_RANDOM_LETTERS_LENGTH:
        return False
    return 1 / 3 <= sum(char.isupper() for char in value) / len(value) <= 2 / 3


def _looks_like_password(value: str) -> bool:
    """A human-chosen password (``Summer2021!``): what password policies ask for, and not code."""
    return (
        len(value) >= _MIN_PASSWORD_LENGTH
        and not _names_a_location(value)
        and not _DOTTED_IDENTIFIER_RE.fullmatch(value)
        and len(_character_classes(value)) >= 3
    )


def _is_url_password(match: re.Match[str]) -> bool:
    password = match["value"]
    if _is_placeholder(password) or password.lower() == match["user"].lower():
        return False
    return len(password) >= 8 or any(char.isdigit() or char in _URL_PASSWORD_SYMBOLS for char in password)


def _is_random_non_placeholder(match: re.Match[str]) -> bool:
    value = match["value"]
    return not _is_placeholder(value) and _looks_random(value)


def _is_real_token(match: re.Match[str]) -> bool:
    return not _is_placeholder_body(match["body"])


def _is_openai_key(match: re.Match[str]) -> bool:
    return _is_real_token(match) and any(char.isdigit() for char in match["body"])


def _is_private_key(match: re.Match[str]) -> bool:
    # "the file starts with -----BEGIN OPENSSH PRIVATE KEY-----" names a key without pasting one.
    body = match["body"]
    return _KEY_MATERIAL_RE.search(body) is not None and not _is_placeholder_body(body)


def _is_non_placeholder(match: re.Match[str]) -> bool:
    return not _is_placeholder(match["value"])


def _is_real_key(match: re.Match[str]) -> bool:
    # For a value the name identifies and the pattern confines to key characters, such as a session token
    # of several hundred base64 characters, which holds a four-letter word by chance once in 250.
    return not _is_placeholder_body(match["value"])


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


def _is_assigned_secret(match: re.Match[str]) -> bool:
    value = match["value"]
    if _is_placeholder(value):
        return False
    if _looks_random(value):
        return True
    # A password field holds whatever a person typed, so policy-shaped values count there; but only after
    # ":" or "=" or a command-line flag, since "password" followed by a word is mostly prose.
    assigned = match["separator"].strip() != "" or match["name"].startswith("-")
    return match["password"] is not None and assigned and _looks_like_password(value)


# Prefixed tokens count only at the start of a word, so "task-queue-restart-2024-11-30" is not an "sk-" key.
# ASCII classes, not \b: Korean particles glue straight onto a key ("키는sk-...를") and are \w in Unicode.
_WORD_START = r"(?<![A-Za-z0-9_])"
# A JWT never follows base64url characters; starting only at the beginning of such a run also keeps
# "eyJeyJeyJ..." linear, since its tail (a dot after a long run) can fail.
_BASE64URL_RUN_START = r"(?<![A-Za-z0-9_-])"
# Any name characters may come before a suffix, so "secret" covers the spec's "client_secret" and "pass"
# covers "DB_PASS"; "pass" must start a word ("bypass" is not a password) or a camelCase part ("dbPass").
# The "[_-]?" forms admit camelCase JSON keys ("secretKey", "apiKey"). The key names are ours beyond the
# spec's: Django's SECRET_KEY, Rails' secret_key_base, and the usual names of encryption and signing keys.
_SECRET_NAME_SUFFIX = (
    r"(?:(?P<password>password|passwd|passphrase|pwd|(?<![A-Za-z])pass|(?-i:(?<=[a-z])P)ass)"
    r"|secret(?:[_-]?key(?:[_-]?base)?)?|token|credentials?"
    r"|(?:api|access|private|auth|encryption|signing|master|hmac|app)[_-]?key)"
)
# Tools that take a password on their command line: mysql and friends glue it to "-p", registry logins
# and sshpass take it as the next argument. The flag must come within 100 characters on the same line
# (longer than any real invocation before "-p"), which keeps a line of repeated command names linear.
_PASSWORD_COMMANDS = (
    r"(?:mysql(?:dump|admin|import|check|show|slap)?|mariadb(?:-dump|-admin)?|sshpass"
    r"|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm registry|helm) login)"
)

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
    _Rule(
        "aws-access-key",
        "AWS access key",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)(?P<body>[0-9A-Z]{16})\b", re.ASCII),
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
        re.compile(_WORD_START + r"gh[pousr]_(?P<body>[A-Za-z0-9]{36,255})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "github-token",
        "GitHub token",
        re.compile(_WORD_START + r"github_pat_(?P<body>[A-Za-z0-9_]{50,255})"),
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
        re.compile(_WORD_START + r"sk-ant-(?P<body>[A-Za-z0-9_-]{20,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "openai-key",
        "OpenAI API key",
        # The possessive prefix makes the 20 characters count after "proj-" etc., as they do in real keys.
        re.compile(_WORD_START + r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?+(?P<body>[A-Za-z0-9_-]{20,})"),
        accepts=_is_openai_key,
    ),
    _Rule(
        "slack-token",
        "Slack token",
        # xoxe is a refresh token, xapp an app-level token.
        re.compile(_WORD_START + r"(?:xox[abposre]|xapp)-(?P<body>[A-Za-z0-9-]{10,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "slack-webhook",
        "Slack webhook URL",
        re.compile(r"https://hooks\.slack\.com/services/(?P<body>[A-Za-z0-9_/]{20,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "stripe-key",
        "Stripe API key",
        re.compile(_WORD_START + r"(?:sk|rk)_(?:live|test)_(?P<body>[A-Za-z0-9]{20,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "stripe-webhook-secret",
        "webhook signing secret",
        # Stripe's are base62; Svix and the services built on it use the same prefix with base64.
        re.compile(_WORD_START + r"whsec_(?P<body>[A-Za-z0-9+/]{24,}+=*+)"),
        accepts=_is_real_token,
    ),
    _Rule(
        "google-api-key",
        "Google API key",
        re.compile(_WORD_START + r"AIza(?P<body>[0-9A-Za-z_-]{35})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "google-oauth-client-secret",
        "Google OAuth client secret",
        re.compile(_WORD_START + r"GOCSPX-(?P<body>[A-Za-z0-9_-]{24,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "google-oauth-token",
        "Google OAuth access token",
        re.compile(_WORD_START + r"ya29\.(?P<body>[A-Za-z0-9_-]{20,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "npm-token",
        "npm token",
        re.compile(_WORD_START + r"npm_(?P<body>[A-Za-z0-9]{36})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "pypi-token",
        "PyPI token",
        # Every PyPI token is a macaroon whose first bytes encode "pypi.org", hence the fixed start.
        re.compile(_WORD_START + r"pypi-AgEIcHlwaS5vcmc(?P<body>[A-Za-z0-9_-]{50,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "huggingface-token",
        "Hugging Face token",
        re.compile(_WORD_START + r"hf_(?P<body>[A-Za-z0-9]{30,})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "kenfold-key",
        "Kenfold API key",
        re.compile(_WORD_START + r"kf_(?P<body>[A-Za-z0-9_-]{43})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "kenfold-oauth-token",
        "Kenfold OAuth token",
        re.compile(_WORD_START + r"kf[arc]_(?P<body>[A-Za-z0-9_-]{43})"),
        accepts=_is_real_token,
    ),
    _Rule(
        "jwt",
        "JWT",
        re.compile(
            _BASE64URL_RUN_START
            + r"(?P<body>eyJ[A-Za-z0-9_-]{10,}+\.eyJ[A-Za-z0-9_-]{10,}+\.[A-Za-z0-9_-]{10,})"
        ),
        accepts=_is_real_token,
    ),
    _Rule(
        "sentry-dsn",
        "Sentry DSN key",
        # The key is the DSN's user name (32 hex digits), with no password after it.
        re.compile(r"https?://(?P<value>[0-9a-f]{32})@", re.IGNORECASE),
        accepts=_is_real_key,
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
        "command-line-password",
        "password on a command line",
        re.compile(
            _WORD_START
            + _PASSWORD_COMMANDS
            + r"(?=\s)[^\n|;&]{0,100}?\s-p(?:\s++)?+[\"']?(?P<value>[^\s\"'`]+)"
        ),
        accepts=_is_command_line_password,
    ),
    _Rule(
        "secret-assignment",
        "credential assigned to a secret-named field",
        # Starts at the beginning of the text or after whitespace or an opening delimiter; "export NAME=" and
        # "--name=" need no special case because the name starts after the space and may contain "-".
        # ":=" and "=>" (Go, Ruby, PHP) are accepted besides the spec's ":" "=" and whitespace.
        re.compile(
            r"(?<![^\s\"'{(,;])(?P<name>[A-Za-z0-9_.-]*?" + _SECRET_NAME_SUFFIX + r")[\"']?"
            r"(?P<separator>\s*+(?::=|=>|[:=])\s*+|\s++)[\"'`]?(?P<value>[^\s\"'`<>{}()\[\],;]{8,200})",
            re.IGNORECASE,
        ),
        accepts=_is_assigned_secret,
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
    return _SECRET_NAME_RE.fullmatch(name) is not None


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


def find_nested_secrets(value: object, *, path: str) -> list[NestedFinding]:
    """Every credential in the strings of a JSON-like ``value`` (dicts, lists, strings, numbers), map keys
    included; a string under a key that names a secret, at any depth, counts when it looks like one."""
    findings: list[NestedFinding] = []
    if not _may_hold_secrets(value):
        return findings

    def visit(node: object, where: str, secret_named: bool) -> None:
        if isinstance(node, str):
            found = find_secrets(node)
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
                visit(item, f"{where}.{label}", secret_named or _is_secret_name(str(key)))
        elif isinstance(node, list | tuple):
            for index, item in enumerate(node):
                visit(item, f"{where}[{index}]", secret_named)

    visit(value, path, False)
    return findings


def redact_nested(value: object, *, secret_named: bool = False) -> object:
    """``value`` with every credential that ``find_nested_secrets`` reports replaced by its marker
    (a whole value under a secret-named key becomes ``[REDACTED:secret-assignment]``)."""
    if isinstance(value, str):
        if not find_secrets(value) and secret_named and _is_secret_under_name(value):
            return f"[REDACTED:{_SECRET_NAME_RULE.id}]"
        return redact_secrets(value)
    if isinstance(value, dict):
        return {
            redact_secrets(str(key)): redact_nested(
                item, secret_named=secret_named or _is_secret_name(str(key))
            )
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_nested(item, secret_named=secret_named) for item in value]
    return value
