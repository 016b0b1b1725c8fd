"""The client side of Kenfold's REST API (`/api/v1`, spec §1.9): fetch reference targets, report results.

Requests carry the API key as a bearer token. A redirect to another origin is refused while a key is sent,
so a misconfigured or hostile server cannot forward the key elsewhere; the user is told the address to
use instead.
"""

import os
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx

from kenfold_client.errors import ClientError, ServerError, ServerUnreachable, UsageError
from kenfold_common.env import ConfigError, env_url

DEFAULT_MCP_URL = "http://127.0.0.1:7077/mcp"
HTTP_TIMEOUT_SECONDS = 15.0
# A docs sync stores and embeds up to a few hundred sections per request.
SYNC_TIMEOUT_SECONDS = 120.0
API_KEY_VARIABLE = "KENFOLD_API_KEY"
_MAX_REDIRECTS = 5


def mcp_url_from_environment() -> str:
    """KENFOLD_URL, else the local server's default address."""
    try:
        return env_url("KENFOLD_URL", DEFAULT_MCP_URL)
    except ConfigError as error:
        raise UsageError(str(error)) from None


def api_base_from_mcp_url(mcp_url: str) -> httpx.URL:
    """`https://host/kenfold/mcp` -> `https://host/kenfold/api/v1`: the REST API sits beside the MCP endpoint."""
    try:
        url = httpx.URL(mcp_url.strip())
    except httpx.InvalidURL as error:
        raise UsageError(f"{mcp_url!r} is not a valid URL: {error}") from None
    path = url.path.rstrip("/")
    if url.scheme not in ("http", "https") or not url.host or not path.endswith("/mcp"):
        raise UsageError(
            f"{mcp_url!r} is not a Kenfold MCP URL; pass the address agents use, ending in /mcp "
            f"(for example {DEFAULT_MCP_URL})"
        )
    return url.copy_with(path=path.removesuffix("/mcp") + "/api/v1", query=None, fragment=None)


def read_api_key(*, key_file: Path | None = None, key_env: str | None = None) -> str | None:
    """The API key from ``key_file``, else the variable ``key_env``, else KENFOLD_API_KEY; None if unset."""
    if key_file is not None:
        try:
            key = key_file.read_text().strip()
        except OSError as error:
            raise UsageError(f"cannot read the API key file {key_file}: {error.strerror}") from None
        if not key:
            raise UsageError(f"the API key file {key_file} is empty; put the key (kf_…) in it")
        return key
    if key_env is not None:
        key = os.environ.get(key_env, "").strip()
        if not key:
            raise UsageError(f"the environment variable {key_env} named by --key-env is not set or empty")
        return key
    return os.environ.get(API_KEY_VARIABLE, "").strip() or None


class KenfoldApi:
    """A connection to one Kenfold server's REST API."""

    def __init__(self, *, mcp_url: str, api_key: str | None) -> None:
        self.base_url = api_base_from_mcp_url(mcp_url)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._authenticated = bool(api_key)
        self._client = httpx.Client(headers=headers, follow_redirects=False, timeout=HTTP_TIMEOUT_SECONDS)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def whoami(self, *, timeout: float = HTTP_TIMEOUT_SECONDS) -> dict[str, Any]:
        """Who the key is: `agent`, `read_only` and `credential` (`api_key`, `oauth` or `none`)."""
        return self._send("GET", "whoami", timeout=timeout)

    def refs_targets(self, *, project: str, timeout: float = HTTP_TIMEOUT_SECONDS) -> list[Any]:
        """The references of ``project`` to check, as the server sent them (unanchored first)."""
        body = self._send("GET", "refs", params={"project": project}, timeout=timeout)
        targets = body.get("targets")
        if not isinstance(targets, list):
            raise ServerError("the server's answer to GET /refs has no list of targets", status_code=200)
        return targets

    def refs_report(
        self,
        *,
        project: str,
        commit: str,
        results: list[dict[str, Any]],
        timeout: float = HTTP_TIMEOUT_SECONDS,
    ) -> dict[str, Any]:
        """Report check results; the server answers with counts (`updated`, `anchored`, `states`, ...)."""
        payload = {"project": project, "commit": commit, "results": results}
        return self._send("POST", "refs/check", payload=payload, timeout=timeout)

    def docs_files(self, *, project: str, timeout: float = HTTP_TIMEOUT_SECONDS) -> list[dict[str, Any]]:
        """The pages of ``project`` the server holds: each a dict with `path` and `file_hash`."""
        body = self._send("GET", "docs/files", params={"project": project}, timeout=timeout)
        files = body.get("files")
        if not isinstance(files, list):
            raise ServerError("the server's answer to GET /docs/files has no list of files", status_code=200)
        return [
            item
            for item in files
            if isinstance(item, dict)
            and isinstance(item.get("path"), str)
            and isinstance(item.get("file_hash"), str)
        ]

    def docs_sync(
        self,
        *,
        project: str,
        files: list[dict[str, Any]],
        deleted: list[str],
        timeout: float = SYNC_TIMEOUT_SECONDS,
    ) -> dict[str, Any]:
        """Send changed pages and deleted paths; the server answers with counts and refused pages."""
        payload = {"project": project, "files": files, "deleted": deleted}
        return self._send("POST", "docs/sync", payload=payload, timeout=timeout)

    def usage_used(
        self, *, used: list[str], session_id: str | None, timeout: float = HTTP_TIMEOUT_SECONDS
    ) -> dict[str, Any]:
        """Report served memories the session reused; the server answers with `marked`."""
        payload = {"used": used, "session_id": session_id}
        return self._send("POST", "usage/used", payload=payload, timeout=timeout)

    def _send(
        self,
        method: str,
        endpoint: str,
        *,
        timeout: float,
        params: dict[str, str] | None = None,
        payload: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        url = self.base_url.copy_with(path=f"{self.base_url.path}/{endpoint}")
        request = self._client.build_request(method, url, params=params, json=payload, timeout=timeout)
        response = send_same_origin(self._client, request, authenticated=self._authenticated)
        return _json_body(response, method=method, endpoint=endpoint)


def send_same_origin(client: httpx.Client, request: httpx.Request, *, authenticated: bool) -> httpx.Response:
    """Send ``request`` and follow its redirects, refusing one to another origin while a key is sent.

    Transport failures become ``ServerUnreachable`` (a later attempt may succeed); the REST client and the
    hook's MCP client both send through here, so neither can forward the key elsewhere.
    """
    url = request.url
    timeout = request.extensions.get("timeout", {}).get("read") or HTTP_TIMEOUT_SECONDS
    try:
        response = client.send(request)
        for _ in range(_MAX_REDIRECTS):
            if not response.is_redirect or response.next_request is None:
                break
            target = response.next_request.url
            if authenticated and _origin(target) != _origin(url):
                raise ClientError(
                    f"{url} redirects to another origin ({_origin(target)}); the API key is not sent there. "
                    "If that is the right server, pass its /mcp URL with --url or KENFOLD_URL"
                )
            response = client.send(response.next_request)
    except httpx.TimeoutException:
        raise ServerUnreachable(f"Kenfold at {url} did not answer within {timeout:.1f} s") from None
    except httpx.TransportError as error:
        raise ServerUnreachable(f"cannot reach Kenfold at {url}: {error}") from None
    return response


def _origin(url: httpx.URL) -> str:
    # httpx.URL.port is None for the scheme's default port, so http://h and http://h:80 compare equal.
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return f"{url.scheme}://{url.host}:{port}"


def _json_body(response: httpx.Response, *, method: str, endpoint: str) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success and isinstance(body, dict):
        return body
    where = f"{method} /api/v1/{endpoint}"
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        message = f"Kenfold refused {where} ({response.status_code}): {body['error']}"
    elif response.is_redirect:
        message = f"{where} was redirected too many times ({response.status_code})"
    else:
        message = f"{where} answered {response.status_code} without a Kenfold JSON body; is --url right?"
    raise ServerError(message, status_code=response.status_code)
