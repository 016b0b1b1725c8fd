"""Who is calling: bearer API keys over HTTP, KENFOLD_AGENT or the client's own name otherwise (spec §1.2).

The HTTP guard (edge.http_guard) authenticates each request once and binds the resulting Caller to
the request's context with `authenticated_as`; the MCP tools (and later the REST API) read it with
`authenticated_caller`. The agent recorded on writes comes only from the credential. Without one (stdio,
or KENFOLD_AUTH=none) the caller has full access and is named by `local_caller`.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

from access.caller import Caller
from access.keys import api_key_authenticate
from kenfold_common.errors import AuthenticationFailed
from kenfold_common.identity import sanitize_agent_name
from oauth.resource import is_oauth_token, verify_access_token

# Set by the guard for the duration of one request. The MCP SDK runs tool handlers in tasks that copy
# the request task's context, so tools see the value the guard set.
_authenticated_caller: ContextVar[Caller | None] = ContextVar("kenfold_authenticated_caller", default=None)


def caller_from_authorization(header: str | None) -> Caller:
    """The caller named by an `Authorization: Bearer …` header (an API key `kf_…`, or with OAuth on an
    access token `kfa_…`), or AuthenticationFailed.

    Touches the database (the key lookup): run it in a thread, inside the request's DB scope. Database
    errors propagate unchanged, so the guard can answer 500 rather than a misleading 401.
    """
    if not header:
        raise AuthenticationFailed(
            "missing API key: send the header `Authorization: Bearer <key>` "
            "(the owner creates keys with `python manage.py key create <agent>`)"
        )
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationFailed("malformed Authorization header: expected `Authorization: Bearer <key>`")
    token = token.strip()
    if settings.PUBLIC_URL and is_oauth_token(token):
        info = verify_access_token(token=token)
        return Caller(
            agent=info.agent,
            read_only=info.read_only,
            oauth_grant=info.grant_id,
            credential=f"grant:{info.grant_id}",
            projects=info.projects,
            user_memories=info.user_memories,
        )
    key = api_key_authenticate(token=token)
    return Caller(
        agent=key.agent,
        read_only=key.read_only,
        credential=f"key:{key.id}",
        projects=frozenset(key.projects) if key.projects is not None else None,
        user_memories=key.user_memories,
    )


@contextmanager
def authenticated_as(caller: Caller) -> Iterator[None]:
    token = _authenticated_caller.set(caller)
    try:
        yield
    finally:
        _authenticated_caller.reset(token)


def authenticated_caller() -> Caller | None:
    """The caller the HTTP guard authenticated for this request; None on stdio and with KENFOLD_AUTH=none."""
    return _authenticated_caller.get()


def local_caller(*, configured_agent: str | None, client_name: str | None) -> Caller:
    """A full-access caller for a connection without credentials.

    Named by KENFOLD_AGENT when the operator set it (stdio), else by the client's self-reported
    `clientInfo.name`, sanitized (`Claude Code` -> `claude-code`), else `unknown`.
    """
    return Caller(agent=configured_agent or sanitize_agent_name(client_name))
