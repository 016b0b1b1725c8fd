"""One domain error hierarchy, raised by services and translated once at each edge.

MCP turns these into tool results with ``isError: true``; REST into ``{"error": ...}`` with a 4xx;
commands into ``CommandError``. Messages are written for the reader who has to act on them (often a
model), so they say what to do next. Anything that is not a ``KenfoldError`` is an internal failure and
is never shown to callers.
"""


class KenfoldError(Exception):
    """Base class of every error a caller is allowed to see."""

    status_code = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidInput(KenfoldError):
    """The caller sent something we refuse; nothing was changed."""


class SecretDetected(InvalidInput):
    """The content carries a credential; the message names its kind and field, never its value."""


class NotFound(KenfoldError):
    status_code = 404


class Conflict(KenfoldError):
    """The target is in a state that does not allow the operation (e.g. superseding a retired memory)."""

    status_code = 409


class AuthenticationFailed(KenfoldError):
    status_code = 401


class PermissionDenied(KenfoldError):
    """The caller is known but not allowed (e.g. a read-only key writing)."""

    status_code = 403


class TooManyAttempts(KenfoldError):
    """Refused for a while after repeated failures (the owner password's lockout), whatever is sent."""

    status_code = 429


class QuotaExceeded(KenfoldError):
    """A credential used up one of its write quotas; nothing was written. ``retry_after`` is the number of
    seconds until the window resets (REST sends it as Retry-After)."""

    status_code = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Unavailable(KenfoldError):
    """A dependency (the database, a provider) is not reachable right now; retrying may help."""

    status_code = 503
