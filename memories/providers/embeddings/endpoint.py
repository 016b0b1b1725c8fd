"""HTTP plumbing shared by the model providers' clients (embeddings, rerank): one endpoint per provider,
reached only at its configured origin, with bounded answers and errors that name the variable to fix."""

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from kenfold_common.errors import Unavailable


class ProviderError(Unavailable):
    """A model provider failed: unreachable, too slow, or it answered something we cannot use.

    ``status`` and ``body`` are set when the provider answered with an HTTP error, for callers that
    adapt to a provider's dialect.
    """

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


@dataclass(frozen=True)
class ProviderVariables:
    """The KENFOLD_* variables that configure a provider, named in error messages as the thing to fix."""

    url: str
    api_key: str
    model: str


class ProviderEndpoint:
    """One HTTP endpoint of a model provider, reached only at the configured origin.

    A pooled, thread-safe httpx client that posts JSON and returns the decoded answer, or raises
    ``error`` with a message naming the variable to fix (``KENFOLD_EMBED_URL`` and so on). Redirects are
    followed only within the configured origin: a redirect elsewhere would carry our request, and the
    bearer key with it, to a host the owner never chose.
    """

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        api_key: str,
        variables: ProviderVariables,
        what: str,
        error: type[ProviderError],
        max_response_bytes: int,
    ) -> None:
        self.url = f"{base_url.rstrip('/')}/{path}"
        self._path = path
        self._variables = variables
        self._what = what
        self._error = error
        self._max_response_bytes = max_response_bytes
        self._origin = _origin(httpx.URL(self.url))
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers,
            follow_redirects=True,
            max_redirects=3,
            event_hooks={"request": [self._refuse_other_origins]},
        )

    def post(self, payload: Mapping[str, object], *, timeout: float) -> object:
        """POST ``payload`` as JSON; the decoded JSON answer of a 2xx response, within ``timeout`` s."""
        # httpx's timeouts bound each phase (connect, each read); the deadline bounds the whole answer,
        # so a provider trickling bytes cannot hold the caller much past the timeout either.
        deadline = time.monotonic() + timeout
        try:
            with self._client.stream("POST", self.url, json=payload, timeout=timeout) as response:
                body = self._read(response, deadline, timeout)
                status = response.status_code
        except httpx.TimeoutException:
            raise self.timeout_error(timeout) from None
        except httpx.TooManyRedirects:
            raise self._error(
                f"{self._what} redirected too many times; point {self._variables.url} at the final address"
            ) from None
        except httpx.HTTPError as exc:
            raise self._error(
                f"{self._what} could not be reached ({type(exc).__name__}: {exc}); check that it is "
                f"running and that {self._variables.url} points at it"
            ) from None
        if not 200 <= status < 300:
            text = _excerpt(body)
            raise self._error(
                f"{self._what} answered HTTP {status}: {text}; {self._status_hint(status)}",
                status=status,
                body=text,
            )
        try:
            return json.loads(body)
        except ValueError:
            raise self._error(
                f"{self._what} answered something that is not JSON ({_excerpt(body)}); check that "
                f"{self._variables.url} is the API base URL (Kenfold appends /{self._path})"
            ) from None

    def _read(self, response: httpx.Response, deadline: float, timeout: float) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self._max_response_bytes:
                raise self._error(
                    f"{self._what} answered more than {self._max_response_bytes // (1024 * 1024)} MB; "
                    f"check that {self._variables.url} is the API base URL (Kenfold appends /{self._path})"
                )
            if time.monotonic() > deadline:
                raise self.timeout_error(timeout)
            chunks.append(chunk)
        return b"".join(chunks)

    def _refuse_other_origins(self, request: httpx.Request) -> None:
        if _origin(request.url) != self._origin:
            raise self._error(
                f"{self._what} redirected to another origin ({request.url.scheme}://{request.url.netloc.decode()}); "
                f"Kenfold does not follow it, so the request and its key stay with the configured host. "
                f"Point {self._variables.url} at the final address if that host is the right one"
            )

    def timeout_error(self, timeout: float) -> ProviderError:
        return self._error(
            f"{self._what} did not answer within {seconds(timeout)} s; check that it is running and not "
            "overloaded, or choose a faster model"
        )

    def _status_hint(self, status: int) -> str:
        if status in (401, 403):
            return f"check {self._variables.api_key}"
        if status in (404, 405):
            return f"check that {self._variables.url} is the API base URL (Kenfold appends /{self._path})"
        if status == 429 or status >= 500:
            return "the provider is overloaded or failing; retrying later may help"
        return f"check {self._variables.model} and the provider's documentation"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default_port = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default_port


def seconds(duration: float) -> str:
    """A duration for a message: 0.2, 4, 30 (two significant digits below 10 s, whole seconds above)."""
    return f"{duration:.2g}" if duration < 10 else f"{duration:.0f}"


def _excerpt(body: bytes) -> str:
    text = body[:300].decode("utf-8", errors="replace").strip()
    return " ".join(text.split()) or "(empty body)"
