"""The client's errors: what the CLI prints (exit 1, or 2 for usage) and what a session hook can sort.

A hook keeps quiet about failures that are nobody's fault right now (an unreachable server, a timeout, an
older server without the REST API) and shows the rest; the classes and ``status_code`` let it tell which.
"""


class ClientError(Exception):
    """A failure the user can act on; the message says what to do next."""


class UsageError(ClientError):
    """The command was called with options or configuration we cannot use (exit code 2)."""


class GitError(ClientError):
    """A git command failed or ran out of time."""


class ServerUnreachable(ClientError):
    """The request did not get an answer (connection refused, timeout); retrying later may help."""


class ServerError(ClientError):
    """The server answered with an error or with something that is not the REST contract."""

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code
