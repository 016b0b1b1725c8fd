"""The session hook's MCP client: one stateless `tools/call` per request over Streamable HTTP (spec §1.10).

The hook is an MCP client of the server like any agent, authenticated by the agent's API key, so its writes
pass the same checks. It needs two tools and lives with a few seconds of budget, so it speaks the 2026-07-28
stateless form directly (every request carries its protocol version and client name in `_meta`, no
handshake, no standalone SSE stream) with zero retries: a failure is reported at once and the caller
spools what it could not send. The MCP SDK is not used: the client distribution stays free of it.
"""

import itertools
import json
from types import TracebackType
from typing import Any, Self

import httpx

from kenfold_client.errors import ClientError, ServerError
from kenfold_client.http import HTTP_TIMEOUT_SECONDS, api_base_from_mcp_url, send_same_origin
from kenfold_common.identity import SESSION_ID_META_KEY

PROTOCOL_VERSION = "2026-07-28"
_CLIENT_VERSION = "0.1.0"


class ToolRejected(ClientError):
    """The server ran the tool and answered with a tool error (``isError``).

    Permanent (sending the same arguments again gets the same answer) unless the server says it failed
    because of an internal error, which a later attempt may not hit.
    """

    @property
    def transient(self) -> bool:
        return "internal error" in str(self)


class McpClient:
    """Tool calls to one Kenfold server, as ``client_name`` (the agent, when no API key names it)."""

    def __init__(self, *, mcp_url: str, api_key: str | None, client_name: str) -> None:
        api_base_from_mcp_url(mcp_url)  # the same check of the URL as the REST client's
        self.url = mcp_url.strip()
        self.client_name = client_name
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": PROTOCOL_VERSION}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._authenticated = bool(api_key)
        self._client = httpx.Client(headers=headers, follow_redirects=False, timeout=HTTP_TIMEOUT_SECONDS)
        self._ids = itertools.count(1)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._client.close()

    def call_tool(
        self,
        *,
        name: str,
        arguments: dict[str, Any],
        session_id: str | None = None,
        timeout: float = HTTP_TIMEOUT_SECONDS,
    ) -> dict[str, Any]:
        """The tool's structured result. Raises ``ToolRejected`` for a tool error, ``ServerUnreachable``
        for a transport failure and ``ServerError`` for an answer that is not a JSON-RPC result."""
        meta: dict[str, Any] = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientInfo": {"name": self.client_name, "version": _CLIENT_VERSION},
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        if session_id:
            meta[SESSION_ID_META_KEY] = session_id
        body = {
            "jsonrpc": "2.0",
            "id": next(self._ids),
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta},
        }
        # 2026-07-28 servers route on these headers and refuse a request whose headers and body disagree.
        request = self._client.build_request(
            "POST",
            self.url,
            json=body,
            headers={"Mcp-Method": "tools/call", "Mcp-Name": name},
            timeout=timeout,
        )
        response = send_same_origin(self._client, request, authenticated=self._authenticated)
        result = _jsonrpc_result(response, tool=name)
        if result.get("isError"):
            text = " ".join(
                block.get("text", "") for block in result.get("content", []) if isinstance(block, dict)
            )
            raise ToolRejected(f"{name}: {text.strip() or 'the tool failed without a message'}")
        structured = result.get("structuredContent")
        if not isinstance(structured, dict):
            raise ServerError(f"{name} answered without structured content", status_code=response.status_code)
        return structured


def _jsonrpc_result(response: httpx.Response, *, tool: str) -> dict[str, Any]:
    message = _message(response)
    if isinstance(message, dict) and isinstance(message.get("result"), dict):
        return message["result"]
    if isinstance(message, dict) and isinstance(message.get("error"), dict):
        detail = message["error"].get("message", "no message")
    elif isinstance(message, dict) and isinstance(message.get("error"), str):
        detail = message["error"]  # Kenfold's own HTTP errors (401, 403) are {"error": "..."}
    else:
        detail = "no JSON-RPC answer; is --url the server's /mcp address?"
    raise ServerError(f"{tool} failed ({response.status_code}): {detail}", status_code=response.status_code)


def _message(response: httpx.Response) -> Any:
    """The JSON body, or the last `data:` event of an SSE answer (a server may stream even one reply)."""
    content_type = response.headers.get("content-type", "")
    try:
        if content_type.startswith("text/event-stream"):
            events = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
            return json.loads(events[-1]) if events else None
        return response.json()
    except ValueError:
        return None
