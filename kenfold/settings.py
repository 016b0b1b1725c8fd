"""Kenfold's settings: every value comes from a KENFOLD_* environment variable (see .env.example).

Each variable is read once here through the typed helpers of kenfold_common.env, which stop the process with a
clear message on a bad value. docs/configuration.md lists the same variables; a test keeps the code,
.env.example and docs/configuration.md in step.
"""

import os
import secrets
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured
from psycopg_pool.base import AttemptWithBackoff

from kenfold.capacity import POOL_SIZE
from kenfold.db_backend import pool_check
from kenfold.logging import logs_for_a_person
from kenfold.provider_settings import chat_from_env, embedding_from_env, rerank_from_env
from kenfold_common.env import (
    ConfigError,
    documented_variables,
    env_addr,
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_str,
)
from kenfold_common.identity import invalid_agent_name_message, is_valid_agent_name

BASE_DIR = Path(__file__).resolve().parent.parent
# Every KENFOLD_* variable the server or the client reads (a test keeps .env.example listing them all): a
# variable set but not among them is misspelt, and commands say so (kenfold.management.base).
KNOWN_VARIABLES = documented_variables(BASE_DIR / ".env.example")


def _default_home() -> Path:
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "kenfold"


# A connection pool per process (psycopg_pool): MCP requests each run on a thread of their own, so
# persistent per-thread connections would never be reused; opening a connection per request cost more
# than the search itself.
# Connections are checked when taken from the pool (kenfold.db_backend.pool_check: a round trip, unless the
# connection came back moments ago and its socket shows nothing), so a restart of the database costs no
# failed request; waiting for a connection is capped at 3 s, so a stopped database
# fails requests quickly (503) instead of piling them up. The pool is larger than the number of requests
# the admission gate lets run at once (kenfold.capacity), so load alone never makes a request wait for a
# connection.
_POOL = {
    "min_size": 1,
    "max_size": POOL_SIZE,
    "timeout": 3,
    "check": pool_check.check_connection,
    "reset": pool_check.note_returned,
}
# While the database is unreachable, psycopg_pool retries with a delay that doubles without a ceiling: after
# a one-minute outage the server would stay down another minute. Retry every half second instead; an
# attempt against a down server costs one failed connect.
AttemptWithBackoff.INITIAL_DELAY = 0.5
AttemptWithBackoff.DELAY_BACKOFF = 1.0
# Session settings sent with every new connection (libpq's startup options), so that no query pays a round
# trip to set them. hnsw.iterative_scan: a vector search filtered by scope and status keeps scanning the
# HNSW index until enough rows pass the filter (pgvector >= 0.8; older servers keep it as an unused
# placeholder). relaxed_order: rows may come slightly out of order; memories.search sorts them again.
_SESSION_OPTIONS = "-c hnsw.iterative_scan=relaxed_order"


def _public_url(raw: str) -> str:
    """KENFOLD_PUBLIC_URL in canonical form (spec §1.16): lowercase scheme and host, no default port, no
    trailing slash. It is the OAuth issuer and the base of the one resource (`<public URL>/mcp`), so a
    value that could be read two ways is refused rather than guessed at."""
    from ipaddress import ip_address

    parts = urlsplit(raw.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in ("http", "https") or not host:
        raise ConfigError("KENFOLD_PUBLIC_URL must be an absolute https URL, e.g. https://memory.example.org")
    if parts.username or parts.password or parts.query or parts.fragment or parts.path.strip("/"):
        raise ConfigError(
            "KENFOLD_PUBLIC_URL must be a base URL without a path, query or credentials, "
            "e.g. https://memory.example.org (Kenfold serves /mcp and /oauth under it)"
        )
    try:
        loopback = host == "localhost" or ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if scheme == "http" and not loopback:
        raise ConfigError(
            "KENFOLD_PUBLIC_URL must use https (http only on a loopback host such as 127.0.0.1); "
            "put a TLS proxy in front of Kenfold (docs/deploy.md)"
        )
    try:
        port = parts.port
    except ValueError:
        raise ConfigError("KENFOLD_PUBLIC_URL has an invalid port") from None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != {"http": 80, "https": 443}[scheme]:
        netloc += f":{port}"
    return f"{scheme}://{netloc}"


def _with_session_options(options: dict[str, str]) -> dict[str, object]:
    """Connection OPTIONS with ours appended to any libpq `options` the URL already gives.

    prepare_threshold: Django's default (None) makes psycopg ignore even an explicit prepare=True. Only
    kenfold.db_functions.server_bound asks for preparing (Django's own cursors bind on the client and
    never prepare), so any number turns it on; the large one keeps psycopg from preparing other statements
    by itself after repeats. KENFOLD_DATABASE_PREPARED=false leaves it None.
    """
    given = options.get("options", "").strip()
    return options | {
        "options": f"{given} {_SESSION_OPTIONS}".strip(),
        "pool": _POOL,
        "prepare_threshold": 1_000_000 if env_bool("KENFOLD_DATABASE_PREPARED", True) else None,
    }


def _database_from_url(url: str, password: str) -> dict:
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ConfigError(
            f"KENFOLD_DATABASE_URL must be a postgres:// URL, got scheme {parts.scheme!r}; "
            "for example postgres://kenfold@127.0.0.1:5432/kenfold"
        )
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ConfigError("KENFOLD_DATABASE_URL names no database; add it as the path, e.g. .../kenfold")
    if password and not parts.username:
        raise ConfigError(
            "KENFOLD_DATABASE_PASSWORD needs a user in KENFOLD_DATABASE_URL (postgres://USER@host/db)"
        )
    options: dict[str, str] = {}
    for pair in filter(None, parts.query.split("&")):
        key, _, value = pair.partition("=")
        options[unquote(key)] = unquote(value)
    return {
        "ENGINE": "kenfold.db_backend",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": password or unquote(parts.password or ""),
        "HOST": unquote(parts.hostname or ""),
        "PORT": str(parts.port or ""),
        "OPTIONS": _with_session_options(options),
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
    }


try:
    KENFOLD_HOME = Path(env_str("KENFOLD_HOME") or _default_home()).expanduser().absolute()
    DATABASE_URL = env_str("KENFOLD_DATABASE_URL")
    DATABASE_PASSWORD = env_str("KENFOLD_DATABASE_PASSWORD")
    EMBEDDED_DURABLE = env_bool("KENFOLD_EMBEDDED_DURABLE", True)
    # 0: a quarter of the machine's memory, at most 4 GB (kenfold.embedded_db.memory_settings).
    EMBEDDED_MEMORY_MB = env_int("KENFOLD_EMBEDDED_MEMORY_MB", 0, minimum=0, maximum=1_048_576)
    HTTP_HOST, HTTP_PORT = env_addr("KENFOLD_HTTP_ADDR", "127.0.0.1:7077")
    HTTP_WORKERS = env_int("KENFOLD_WORKERS", 2, minimum=1, maximum=64)
    KENFOLD_ALLOWED_HOSTS = [
        h.lower() for h in env_list("KENFOLD_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "::1"])
    ]
    AUTH_MODE = env_choice("KENFOLD_AUTH", "apikey", ("apikey", "none"))
    # OAuth for remote clients (the oauth app) is mounted only when the public URL is set.
    PUBLIC_URL = _public_url(env_str("KENFOLD_PUBLIC_URL")) if env_str("KENFOLD_PUBLIC_URL") else ""
    MCP_RESOURCE = PUBLIC_URL + "/mcp" if PUBLIC_URL else ""
    OAUTH_DCR = env_bool("KENFOLD_OAUTH_DCR", True)
    OAUTH_CIMD = env_bool("KENFOLD_OAUTH_CIMD", True)
    if PUBLIC_URL:
        # The public host is the one remote clients name in Host; allow it without a second setting.
        _public_host = urlsplit(PUBLIC_URL).hostname or ""
        if _public_host not in KENFOLD_ALLOWED_HOSTS:
            KENFOLD_ALLOWED_HOSTS.append(_public_host)
    # The owner's dashboard (spec §1.17): "local" answers only loopback Host names and no proxied request,
    # "remote" also the public URL's host through a TLS proxy, "off" does not mount it.
    DASHBOARD = env_choice("KENFOLD_DASHBOARD", "local", ("local", "remote", "off"))
    if DASHBOARD == "remote" and not PUBLIC_URL.startswith("https://"):
        raise ConfigError(
            "KENFOLD_DASHBOARD=remote needs KENFOLD_PUBLIC_URL with https (the dashboard's password and "
            "session cookie must not cross a network in clear); or use KENFOLD_DASHBOARD=local"
        )
    # The agent that `manage.py mcp` (stdio) attributes writes to; None means the client's own name.
    STDIO_AGENT = env_str("KENFOLD_AGENT") or None
    if STDIO_AGENT is not None and not is_valid_agent_name(STDIO_AGENT):
        raise ConfigError(invalid_agent_name_message("KENFOLD_AGENT", example="codex"))
    AUTO_MIGRATE = env_bool("KENFOLD_AUTO_MIGRATE", False)
    LOG_LEVEL = env_choice("KENFOLD_LOG_LEVEL", "info", ("debug", "info", "warning", "error")).upper()
    SECRET_KEY_FROM_ENV = env_str("KENFOLD_SECRET_KEY")
    # Retrieval constants (spec §1.7 defaults; tuned values are recorded in docs/benchmarks.md).
    RETRIEVAL = {
        # None: the embedder's own cutoff (memories.embeddings).
        "max_distance": env_float("KENFOLD_SEARCH_MAX_DISTANCE", 0.0, minimum=0.0, maximum=2.0) or None,
        # k = 60 (the spec's) flattens the fusion so much that a memory first in one ranking and absent
        # from the other loses to anything middling in both. Measured on dev.json and LoCoMo, smaller was
        # better on both down to k = 3-5 (docs/benchmarks.md); 3 is the middle of that plateau.
        "rrf_k": env_int("KENFOLD_SEARCH_RRF_K", 3, minimum=1, maximum=1000),
        "vector_weight": env_float("KENFOLD_SEARCH_VECTOR_WEIGHT", 1.0, minimum=0.0, maximum=10.0),
        # The multilingual model's ranking beside MiniLM (KENFOLD_EMBED=local). 0.7: dev.json R@5 is the
        # same at 0.7 and 1.0 (0.962), and LoCoMo (English only) loses less (R@10 0.693 against 0.682).
        "companion_weight": env_float("KENFOLD_SEARCH_COMPANION_WEIGHT", 0.7, minimum=0.0, maximum=10.0),
        # Pseudo-relevance feedback (memories.retrieval): "auto" only when no vector ranking is available
        # (full-text search), "always", or "off"; and the weight of its ranking in the fusion.
        "feedback": env_choice("KENFOLD_SEARCH_FEEDBACK", "auto", ("auto", "always", "off")),
        "feedback_weight": env_float("KENFOLD_SEARCH_FEEDBACK_WEIGHT", 0.5, minimum=0.0, maximum=10.0),
        "pool": env_int("KENFOLD_SEARCH_POOL", 30, minimum=1, maximum=200),
        # Cross-language fusion (memories.ranking): how far a ranking that cannot read a memory's script
        # (MiniLM on Korean, full-text search across scripts) stops counting against it; 0 turns it off.
        # 0.5 (0.15 for English questions): dev.json R@5 0.960 -> 0.967, every language kind up, no kind
        # down; 1.0 over-trusts the multilingual model alone (0.941; docs/benchmarks.md).
        "cross_language": env_float("KENFOLD_SEARCH_CROSS_LANGUAGE", 0.5, minimum=0.0, maximum=1.0),
        # The bridge ranking for English questions (memories.crosslang): the weight in the fusion of the
        # Korean candidates ranked by the Korean words of the candidates holding the question's words; 0
        # turns it off. 0.5: dev.json R@5 0.967 -> 0.976, cross-en-ko 0.935 -> 0.957, korean 0.906 -> 0.969.
        "bridge_weight": env_float("KENFOLD_SEARCH_BRIDGE_WEIGHT", 0.5, minimum=0.0, maximum=10.0),
        # The multilingual model's weight for questions mostly in Korean (or another non-Latin script) is
        # multiplied by this (memories.crosslang.script_factor); 1 turns it off. 2: dev.json MRR@10 0.840 ->
        # 0.856 (cross-ko-en 0.644 -> 0.742), no R@5 changed; 3 cost a kind's MRR (docs/benchmarks.md).
        "script_weight": env_float("KENFOLD_SEARCH_SCRIPT_WEIGHT", 2.0, minimum=0.1, maximum=10.0),
        # The learned order of the first stage's best candidates (memories.learned_rank). Off: it lifts
        # LoCoMo (held-out conversations) but costs dev.json R@5 0.960 -> 0.882 (docs/benchmarks.md).
        "learned_rank": env_bool("KENFOLD_SEARCH_LEARNED_RANK", False),
        "rerank_top": env_int("KENFOLD_RERANK_TOP", 15, minimum=1, maximum=100),
        "rerank_timeout": env_float("KENFOLD_RERANK_TIMEOUT", 4.0, minimum=0.1, maximum=60.0),
    }
    # The model providers (kenfold.provider_settings), checked here like everything else so that a bad
    # value stops the process at start; memories.providers builds the clients from these values.
    EMBEDDING = embedding_from_env()
    RERANK = rerank_from_env()
    # The chat model of extraction and of the classification of untyped remembers (spec §1.12-1.13).
    CHAT = chat_from_env()
    # "propose": every extracted memory waits for the owner's review; "auto": a directly stated,
    # confident fact that resembles nothing existing is served at once (preferences are always proposed).
    EXTRACT_POLICY = env_choice("KENFOLD_EXTRACT_POLICY", "propose", ("propose", "auto"))
    # Which memories agents are served and reuse (memories.usage): kept this many days (0 records
    # nothing), and at most this many answers, so the table stays small whatever the traffic.
    USAGE_DAYS = env_int("KENFOLD_USAGE_DAYS", 30, minimum=0, maximum=3650)
    USAGE_MAX_ROWS = env_int("KENFOLD_USAGE_MAX_ROWS", 100_000, minimum=100, maximum=10_000_000)
    # Classify remembers sent without a type (only when a chat model is configured).
    CLASSIFY = env_bool("KENFOLD_CLASSIFY", True)
    # Consolidation proposals (duplicates, conflicts, digests of old sessions; spec §1.14), made by the
    # chat model for the owner to apply or reject. On whenever a chat model is configured, unless false.
    CONSOLIDATE = env_bool("KENFOLD_CONSOLIDATE", True)
    # Write quotas per credential (API key or OAuth grant; memories.quotas): writes per UTC minute and
    # memories created per UTC day, unless the owner set the credential's own. 0 means no limit. Generous
    # on purpose: they stop a runaway loop, not an agent at work.
    QUOTA_WRITES_PER_MINUTE = env_int("KENFOLD_QUOTA_WRITES_PER_MINUTE", 120, minimum=0, maximum=1_000_000)
    QUOTA_MEMORIES_PER_DAY = env_int("KENFOLD_QUOTA_MEMORIES_PER_DAY", 2000, minimum=0, maximum=100_000_000)
    if env_str("KENFOLD_CONSOLIDATE") and CONSOLIDATE and not CHAT.url:
        raise ConfigError(
            "KENFOLD_CONSOLIDATE=true needs a chat model: set KENFOLD_CHAT_URL (an OpenAI-compatible API "
            "base URL), or leave KENFOLD_CONSOLIDATE unset"
        )
    if DATABASE_URL:
        _default_db = _database_from_url(DATABASE_URL, DATABASE_PASSWORD)
    else:
        if DATABASE_PASSWORD:
            raise ConfigError("KENFOLD_DATABASE_PASSWORD only applies together with KENFOLD_DATABASE_URL")
        from kenfold.embedded_db import EmbeddedCluster

        EMBEDDED_CLUSTER = EmbeddedCluster(
            home=KENFOLD_HOME, durable=EMBEDDED_DURABLE, memory_mb=EMBEDDED_MEMORY_MB or None
        )
        _default_db = {
            "ENGINE": "kenfold.db_backend",
            "NAME": EMBEDDED_CLUSTER.database,
            "USER": EMBEDDED_CLUSTER.app_role,
            "HOST": str(EMBEDDED_CLUSTER.socket_dir),
            "PORT": str(EMBEDDED_CLUSTER.port),
            "OPTIONS": _with_session_options({}),
            "CONN_MAX_AGE": 0,
            "CONN_HEALTH_CHECKS": True,
        }
except ConfigError as exc:
    raise ImproperlyConfigured(str(exc)) from None


def _secret_key() -> str:
    """The key that signs Django's cookies and tokens.

    It must be the same in every process of one installation (web workers, stdio servers), so it is read
    from KENFOLD_SECRET_KEY or from a 0600 file in KENFOLD_HOME that the first process creates.
    """
    if SECRET_KEY_FROM_ENV:
        return SECRET_KEY_FROM_ENV
    path = KENFOLD_HOME / "secret_key"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    KENFOLD_HOME.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process won the race; use its key
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = False
# Kenfold applies its own Host allowlist (KENFOLD_ALLOWED_HOSTS) in edge.http_guard, because /healthz
# and /readyz must answer any Host (container health checks) and /mcp never passes through Django.
ALLOWED_HOSTS = ["*"]

INSTALLED_APPS = [
    "kenfold",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.postgres",
    "django.contrib.staticfiles",
    "ninja",
    "django_q",
    # Always installed, so that its tables exist whatever KENFOLD_PUBLIC_URL says; mounted only with it.
    "oauth2_provider",
    "access",
    "memories",
    "coderefs",
    "projectdocs",
    "oauth",
    "dashboard",
    "consolidation",
    "archive",
    "evals",
    # The edge (ASGI router, REST, MCP): installed for its `serve` and `mcp` commands.
    "edge",
]

MIDDLEWARE = [
    "edge.http_guard.HostAllowlistMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    # The consent page's form (and the dashboard's): a cookie-based token, no session needed. The API and
    # the OAuth endpoints that clients call are exempt (ninja's views and DOT's token views say so).
    "django.middleware.csrf.CsrfViewMiddleware",
    "edge.api.ApiErrorShapeMiddleware",
]

ROOT_URLCONF = "edge.urls"
ASGI_APPLICATION = "edge.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES = {"default": _default_db}
STATIC_URL = "/static/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

# The largest body any endpoint takes (a refs check with 1000 results); anything larger is refused unread.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
CSRF_COOKIE_HTTPONLY = True
CSRF_COOKIE_SAMESITE = "Strict"
CSRF_COOKIE_SECURE = PUBLIC_URL.startswith("https://")
# Behind a TLS proxy Django sees http; the browser's Origin is the public URL, which is ours.
CSRF_TRUSTED_ORIGINS = [PUBLIC_URL] if PUBLIC_URL else []
CSRF_FAILURE_VIEW = "oauth.views.consent.csrf_failure"

# The authorization server for remote clients (spec §1.16; ../shared/notes/oauth.md): django-oauth-toolkit
# with the RFC 9700 gates on, Kenfold's validator and server class (oauth.validator), hashed storage.
OAUTH2_PROVIDER = {
    "SCOPES": {"memory:read": "Read memories", "memory:write": "Create and change memories (includes read)"},
    "DEFAULT_SCOPES": ["memory:read"],
    "OAUTH2_VALIDATOR_CLASS": "oauth.validator.KenfoldValidator",
    "OAUTH2_SERVER_CLASS": "oauth.validator.KenfoldServer",
    "ACCESS_TOKEN_GENERATOR": "oauth.tokens.access_token",
    "REFRESH_TOKEN_GENERATOR": "oauth.tokens.refresh_token",
    "CLIENT_ID_GENERATOR_CLASS": "oauth.tokens.ClientIdGenerator",
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 300,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": 0,
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_REFRESH_TOKEN": True,
    "COMPLIANT_BCP_RFC9700_REDIRECT_URI_MATCHING": True,
    "COMPLIANT_BCP_RFC9700_PKCE_REQUIRED": True,
    # http stays allowed for loopback redirect URIs of native clients; oauth.clients refuses other http.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http"],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OIDC_ISS_ENDPOINT": PUBLIC_URL,
    "RESOURCE_SERVER_TOKEN_RESOURCE_VALIDATOR": "oauth.validator.audience_is_mcp_resource",
    "DCR_ENABLED": bool(PUBLIC_URL) and OAUTH_DCR,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
    "CIMD_ENABLED": bool(PUBLIC_URL) and OAUTH_CIMD,
    "CIMD_METADATA_FETCHER": "oauth.cimd.KenfoldCimdFetcher",
    "CIMD_MAX_DOCUMENT_SIZE": 64 * 1024,
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_METADATA_MAX_AGE_SECONDS": 24 * 3600,
}
# Kenfold's own OAuth models point at DOT's swappable models; makemigrations needs their names.
OAUTH2_PROVIDER_APPLICATION_MODEL = "oauth2_provider.Application"
OAUTH2_PROVIDER_ACCESS_TOKEN_MODEL = "oauth2_provider.AccessToken"
OAUTH2_PROVIDER_REFRESH_TOKEN_MODEL = "oauth2_provider.RefreshToken"
OAUTH2_PROVIDER_GRANT_MODEL = "oauth2_provider.Grant"
OAUTH2_PROVIDER_ID_TOKEN_MODEL = "oauth2_provider.IDToken"

# Background jobs (embedding backfill): django-q2 with the ORM broker, so PostgreSQL is the only
# service. One worker process is enough for a person's memory; `poll` keeps the idle broker cheap.
Q_CLUSTER = {
    "name": "kenfold",
    "orm": "default",
    "workers": 1,
    "recycle": 200,
    "timeout": 600,
    "retry": 900,
    "max_attempts": 2,
    "poll": 5,
    "catch_up": False,
    "ack_failures": True,
    "save_limit": 200,
    "label": "Jobs",
}

_QUIET_LEVEL = "WARNING" if LOG_LEVEL != "DEBUG" else "DEBUG"
_FOR_A_PERSON = logs_for_a_person()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": "kenfold.logging.JsonFormatter"},
        "plain": {"()": "kenfold.logging.PlainFormatter"},
    },
    # stderr only: in stdio mode stdout carries the MCP protocol.
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "formatter": "plain" if _FOR_A_PERSON else "json",
        }
    },
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"level": _QUIET_LEVEL},
        # Logs "Terminating session: None" at INFO after every stateless 2025-era POST.
        "mcp.server.streamable_http": {"level": _QUIET_LEVEL},
        # django-q2 logs its start, every scheduled task it creates and runs, and its stop at INFO: an idle
        # worker would write a few lines a minute. Failures are ERROR and still show.
        "django-q": {"level": _QUIET_LEVEL},
        # A command's security events (`password`, `oauth revoke`) belong in a service's log, not on the
        # terminal of the person who just ran the command.
        "kenfold.security": {"level": "ERROR" if _FOR_A_PERSON else "NOTSET"},
    },
}
