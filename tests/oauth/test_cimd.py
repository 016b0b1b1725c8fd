"""Client ID Metadata Documents: the SSRF rules (no connection is ever opened for a refused URL), the
documents Claude and ChatGPT publish, and the whole flow with the MCP SDK's client and a document served
over TLS from 127.0.0.1 through the test seam (tests/oauth/cimd_seam.py)."""

import asyncio
import http.server
import json
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
import trustme
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata
from oauth2_provider import cimd as dot_cimd

from oauth.cimd import KenfoldCimdFetcher, normalize_client_metadata
from tests.mcp.support import call
from tests.oauth.support import (
    PASSWORD,
    REDIRECT,
    MemoryStorage,
    OAuthServer,
    ScriptedOwner,
    authorize_url,
    oauth_server,
    pkce,
    set_password,
)

CLAUDE = {  # as Claude publishes it (notes/oauth.md §3.7)
    "client_id": "https://claude.ai/oauth/mcp-oauth-client-metadata",
    "client_name": "Claude",
    "redirect_uris": ["https://claude.ai/api/mcp/auth_callback"],
    "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}
CHATGPT = {
    "client_id": "https://chatgpt.com/oauth/client.json",
    "client_uri": "https://chatgpt.com/",
    "redirect_uris": ["https://chatgpt.com/connector_platform_oauth_redirect"],
    "token_endpoint_auth_method": "private_key_jwt",
    "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
    "grant_types": ["authorization_code", "refresh_token"],
    "response_types": ["code"],
    "client_name": "ChatGPT",
    "token_endpoint_auth_signing_alg": "RS256",
    "jwks_uri": "https://chatgpt.com/oauth/jwks.json",
}


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://client.example/x.json", "https"),
        ("https://client.example", "path"),
        ("https://client.example/", "path"),
        ("https://client.example:8443/x.json", "default https port"),
        ("https://client.example/" + "a" * 2050, "longer than 2048"),
        ("https://u:p@client.example/x.json", "userinfo"),
        ("https://client.example/x.json#f", "fragment"),
        ("https://client.example/a/../x.json", "dot path"),
        ("https://127.0.0.1/x.json", "non-public"),
        ("https://localhost/x.json", "non-public"),
        ("https://10.0.0.7/x.json", "non-public"),
        ("https://192.168.1.1/x.json", "non-public"),
        ("https://169.254.169.254/latest/meta-data", "non-public"),
        ("https://100.64.0.1/x.json", "non-public"),
        ("https://[::1]/x.json", "non-public"),
        ("https://[::ffff:127.0.0.1]/x.json", "non-public"),
        ("https://[64:ff9b::a00:1]/x.json", "non-public"),
        ("https://[fc00::1]/x.json", "non-public"),
    ],
)
def test_refused_client_id_urls(url: str, reason: str) -> None:
    with pytest.raises(dot_cimd.CIMDError, match=reason):
        KenfoldCimdFetcher().fetch(url)


def test_the_real_documents_become_public_clients() -> None:
    for document in (CLAUDE, CHATGPT):
        with pytest.raises(dot_cimd.CIMDError):
            dot_cimd._build_application_kwargs(document)  # what stock DOT 3.4.1 does
        normalized = normalize_client_metadata(document)
        kwargs = dot_cimd._build_application_kwargs(normalized)
        assert kwargs["authorization_grant_type"] == "authorization-code"
        assert kwargs["redirect_uris"] == document["redirect_uris"][0]
        assert normalized["token_endpoint_auth_method"] == "none"
        assert "jwks_uri" not in normalized


def test_secret_methods_stay_refused() -> None:
    document = CHATGPT | {
        "token_endpoint_auth_method": "client_secret_post",
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
    }
    with pytest.raises(dot_cimd.CIMDError):
        dot_cimd._build_application_kwargs(normalize_client_metadata(document))


# --- the flow ---------------------------------------------------------------------------------------------
CIMD_HOST = "cimd.kenfold.test"
CIMD_URL = f"https://{CIMD_HOST}/oauth/client.json"
DOCUMENT = {
    "client_id": CIMD_URL,
    "client_name": "Remote CIMD agent",
    "redirect_uris": [REDIRECT],
    # Both quirks of the real documents: a JWT-bearer grant, and private_key_jwt with `none` offered.
    "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
    "response_types": ["code"],
    "token_endpoint_auth_method": "private_key_jwt",
    "token_endpoint_auth_methods_supported": ["none", "private_key_jwt"],
    "jwks_uri": f"https://{CIMD_HOST}/oauth/jwks.json",
}


class _DocumentHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/oauth/client.json" and self.headers.get("Host") == CIMD_HOST:
            body = json.dumps(DOCUMENT).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Cache-Control", "max-age=3600")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(302)
            self.send_header("Location", "https://127.0.0.1/elsewhere")
            self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def document_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The client's document over TLS on 127.0.0.1, its certificate from a throwaway CA."""
    folder = tmp_path_factory.mktemp("cimd")
    ca = trustme.CA()
    cert = ca.issue_cert(CIMD_HOST)
    ca_file = folder / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(context)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _DocumentHandler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    config = folder / "seam.json"
    config.write_text(
        json.dumps({"address": ["127.0.0.1", httpd.server_address[1]], "ca_file": str(ca_file)})
    )
    try:
        yield {"config": config}
    finally:
        httpd.shutdown()


@pytest.fixture(scope="module")
def cimd_server(module_home: Path, document_server: dict) -> Iterator[OAuthServer]:
    set_password(module_home, PASSWORD)
    app = f"tests.oauth.cimd_seam:application_for('{document_server['config']}')"
    # DCR off: the client can only be known through its document.
    with oauth_server(module_home, app=app, KENFOLD_OAUTH_DCR="false") as started:
        yield started


def test_sdk_flow_with_a_cimd_client_over_tls(cimd_server: OAuthServer) -> None:
    metadata = httpx.get(cimd_server.base + "/.well-known/oauth-authorization-server", timeout=60).json()
    assert metadata["client_id_metadata_document_supported"] is True
    assert "registration_endpoint" not in metadata

    async def scenario() -> None:
        storage, owner = MemoryStorage(), ScriptedOwner("write", agent="cimd-agent")
        provider = OAuthClientProvider(
            server_url=cimd_server.mcp,
            client_metadata=OAuthClientMetadata(
                client_name="Remote CIMD agent", redirect_uris=[REDIRECT], response_types=["code"]
            ),
            storage=storage,
            redirect_handler=owner.redirect_handler,
            callback_handler=owner.callback_handler,
            client_metadata_url=CIMD_URL,
        )
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            Client(streamable_http_client(cimd_server.mcp, http_client=http), mode="auto") as client,
        ):
            assert storage.client_info is not None and storage.client_info.client_id == CIMD_URL
            stored = await call(
                client,
                "remember",
                content="CIMD clients write as their grant's agent.",
                project="github.com/k/cimd",
            )
            found = await call(client, "recall", query="CIMD grant agent", project="github.com/k/cimd")
            assert [m["source_agent"] for m in found["memories"] if m["id"] == stored["id"]] == ["cimd-agent"]

    asyncio.run(scenario())


def test_the_consent_page_of_a_cimd_client(cimd_server: OAuthServer) -> None:
    _verifier, challenge = pkce()
    url = authorize_url(
        cimd_server.base, client_id=CIMD_URL, challenge=challenge, scope="memory:read memory:write"
    )
    page = httpx.get(url, timeout=60).text
    assert "Remote CIMD agent" in page and CIMD_URL in page and "127.0.0.1" in page
    assert 'value="read" checked' in page and 'value="write"' in page
    assert 'name="agent" value="remote-cimd-agent"' in page


def test_a_cimd_client_on_a_private_address_is_refused(cimd_server: OAuthServer, tmp_path: Path) -> None:
    for client_id in ("https://127.0.0.1/oauth/client.json", "https://10.1.2.3/client.json"):
        _verifier, challenge = pkce()
        response = httpx.get(
            authorize_url(cimd_server.base, client_id=client_id, challenge=challenge), timeout=60
        )
        assert response.status_code == 400
        assert "location" not in response.headers
