"""The MCP SDK's own OAuth client against real Kenfold servers (issue "Remote clients", Done when):
401 -> discovery -> DCR -> PKCE authorization with the owner scripted on the consent page -> token -> tool
call, in both protocol eras; step-up from read to write; API keys beside OAuth; and two servers sharing one
database, with the flow's steps and the lockout spread across both."""

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata

from bench.support.processes import DatabaseHome, free_port, manage
from tests.mcp.support import INITIALIZE, MODES, call, mcp_client
from tests.oauth.support import (
    PASSWORD,
    REDIRECT,
    MemoryStorage,
    OAuthServer,
    ScriptedOwner,
    authorize_url,
    grant_tokens,
    oauth_server,
    owner_decides,
    pkce,
    set_password,
)

PROJECT = "github.com/kenfold/oauth-e2e"
# The first tool call of a fresh server loads the embedding models; on a busy machine that takes seconds.
# Idle connections are dropped after 1 s, before the test server's gunicorn closes its own (2 s, the
# default; `serve` keeps them 75 s): otherwise a request sent as the server closes the connection fails
# with "Server disconnected without sending a response" (seen once in CI).
HTTP = httpx.Client(timeout=60, limits=httpx.Limits(keepalive_expiry=1.0))


@pytest.fixture(scope="module")
def home(module_home: Path) -> Path:
    set_password(module_home, PASSWORD)
    return module_home


@pytest.fixture(scope="module")
def server(home: Path) -> Iterator[OAuthServer]:
    with oauth_server(home) as started:
        yield started


def sdk_provider(
    server: OAuthServer, owner: ScriptedOwner, storage: MemoryStorage, **extra: object
) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=server.mcp,
        client_metadata=OAuthClientMetadata(
            client_name="SDK remote client",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="client_secret_post",  # what claude.ai asks for
        ),
        storage=storage,
        redirect_handler=owner.redirect_handler,
        callback_handler=owner.callback_handler,
        **extra,
    )


def test_without_a_token_the_challenge_names_the_resource_metadata(server: OAuthServer) -> None:
    for path in ("/mcp", "/api/v1/refs/status?project=github.com/a/b"):
        response = HTTP.post(server.base + path, json={}) if path == "/mcp" else HTTP.get(server.base + path)
        assert response.status_code == 401
        assert response.headers["www-authenticate"] == (
            f'Bearer scope="memory:read memory:write", '
            f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"'
        )
    bad = HTTP.post(server.mcp, json={}, headers={"authorization": "Bearer kfa_" + "x" * 43})
    assert bad.status_code == 401
    assert bad.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


@pytest.mark.parametrize("mode", MODES)
def test_sdk_flow_read_then_step_up_to_write(server: OAuthServer, mode: str) -> None:
    async def scenario() -> None:
        storage, owner = MemoryStorage(), ScriptedOwner("read", "write", agent=f"sdk-{mode}")
        provider = sdk_provider(server, owner, storage)
        async with (
            httpx2.AsyncClient(auth=provider, timeout=60) as http,
            Client(streamable_http_client(server.mcp, http_client=http), mode=mode) as client,
        ):
            assert storage.client_info is not None
            assert storage.client_info.token_endpoint_auth_method == "none"
            assert storage.client_info.client_id.startswith("kfd_")
            first = owner.urls[0]
            assert "code_challenge_method=S256" in first and "resource=" in first
            assert owner.last is not None and owner.last.query["iss"] == [server.base]
            assert storage.tokens is not None and storage.tokens.scope == "memory:read"
            await call(client, "recall", query="deploy", project=PROJECT)
            # The read-only grant asks to write: 403 insufficient_scope, the SDK asks the owner again.
            stored = await call(
                client,
                "remember",
                content=f"Deploys go through Caddy ({mode}).",
                project=PROJECT,
                type="project",
            )
            assert len(owner.urls) == 2
            assert storage.tokens.scope == "memory:read memory:write"
            found = await call(client, "recall", query=f"Caddy {mode}", project=PROJECT)
            mine = [m for m in found["memories"] if m["id"] == stored["id"]]
            assert mine and mine[0]["source_agent"] == f"sdk-{mode}"

    asyncio.run(scenario())


def test_a_read_only_grant_can_recall_but_not_write(server: OAuthServer) -> None:
    tokens = _tokens(server, access="read", agent="reader")
    headers = {"authorization": f"Bearer {tokens['access_token']}"}
    for tool, arguments in (
        ("remember", {"content": "x", "project": PROJECT}),
        ("handoff", {"summary": "s", "project": PROJECT}),
        ("forget", {"id": "00000000-0000-0000-0000-000000000000", "reason": "r"}),
        ("resume", {"id": "00000000-0000-0000-0000-000000000000"}),
    ):
        response = _raw_tool_call(server, headers, tool, arguments)
        assert response.status_code == 403, tool
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    assert _raw_tool_call(server, headers, "recall", {"query": "x", "project": PROJECT}).status_code == 200


def _raw_tool_call(
    server: OAuthServer, headers: dict[str, str], tool: str, arguments: dict
) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    assert HTTP.post(server.mcp, json=INITIALIZE, headers=headers | accept).status_code == 200
    return HTTP.post(server.mcp, json=body, headers=headers | accept | {"mcp-protocol-version": "2025-11-25"})


def _tokens(server: OAuthServer, *, access: str, agent: str, consent_base: str | None = None) -> dict:
    return grant_tokens(server.base, access=access, agent=agent, consent_base=consent_base)


def test_api_keys_keep_working_beside_oauth(server: OAuthServer, home: Path) -> None:
    key = manage(home, "key", "create", "keyed-agent").stdout.strip()

    async def scenario() -> None:
        async with mcp_client(server.mcp, key=key) as client:
            stored = await call(
                client, "remember", content="API keys still work.", project=PROJECT, type="project"
            )
            assert stored["status"] == "active"

    asyncio.run(scenario())


def test_oauth_clients_and_revoke_end_the_session(server: OAuthServer, home: Path) -> None:
    tokens = _tokens(server, access="write", agent="revoked-agent")
    headers = {"authorization": f"Bearer {tokens['access_token']}"}
    assert _raw_tool_call(server, headers, "recall", {"query": "x", "project": PROJECT}).status_code == 200
    listing = manage(home, "oauth", "clients").stdout
    line = next(row for row in listing.splitlines() if "revoked-agent" in row)
    assert "Hand client" in line and "read+write" in line
    prefix = line.split()[0]
    out = manage(home, "oauth", "revoke", prefix).stdout
    assert "Revoked grant" in out
    response = HTTP.post(server.mcp, json={}, headers=headers)
    assert response.status_code == 401
    refreshed = HTTP.post(
        server.base + "/oauth/token",
        data={
            "grant_type": "refresh_token",
            "refresh_token": tokens["refresh_token"],
            "client_id": tokens["client_id"],
        },
    )
    assert refreshed.status_code == 400
    assert "revoked-agent" not in manage(home, "oauth", "clients").stdout
    assert "revoked by the owner" in manage(home, "oauth", "clients", "--all").stdout


def test_security_log_has_events_and_no_secrets(server: OAuthServer) -> None:
    tokens = _tokens(server, access="read", agent="logged-agent")
    log = server.log()
    for event in ('"consent approved"', '"client registered"'):
        assert event in log
    assert PASSWORD not in log
    assert (
        tokens["access_token"] not in log and tokens["refresh_token"] not in log and tokens["code"] not in log
    )


# --- two servers, one database --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pair(
    tmp_path_factory: pytest.TempPathFactory, database_home: DatabaseHome
) -> Iterator[tuple[OAuthServer, OAuthServer]]:
    """Two Kenfold processes on one database, as two replicas behind one public URL would be (here each
    has its own loopback URL; the public URL of both is A's, so tokens from either serve on both)."""
    port_a = free_port()
    public = f"http://127.0.0.1:{port_a}"
    with database_home(tmp_path_factory.mktemp("kenfold-oauth-pair") / "home") as home:
        set_password(home, PASSWORD)
        with oauth_server(home, port=port_a) as a, oauth_server(home, KENFOLD_PUBLIC_URL=public) as b:
            yield a, b


def test_two_servers_share_every_step(pair: tuple[OAuthServer, OAuthServer]) -> None:
    a, b = pair
    # Authorize page from A, the owner's POST to B, the code redeemed at B, then MCP calls on both.
    tokens = _tokens(a, access="write", agent="replicated", consent_base=b.base)
    headers = {"authorization": f"Bearer {tokens['access_token']}"}
    for server in (a, b):
        assert (
            _raw_tool_call(server, headers, "recall", {"query": "x", "project": PROJECT}).status_code == 200
        )
    # The code, replayed at A with its verifier, revokes the grant everywhere.
    replay = HTTP.post(
        a.base + "/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": tokens["code"],
            "code_verifier": tokens["verifier"],
            "redirect_uri": REDIRECT,
            "client_id": tokens["client_id"],
        },
    )
    assert replay.json()["error"] == "invalid_grant"
    for server in (a, b):
        assert HTTP.post(server.mcp, json={}, headers=headers).status_code == 401


def test_concurrent_redemptions_of_one_code_leave_no_live_token(
    pair: tuple[OAuthServer, OAuthServer],
) -> None:
    a, b = pair
    tokens = _tokens(a, access="read", agent="racer")  # redeemed once already: start a fresh code instead
    verifier, challenge = pkce()
    url = authorize_url(a.base, client_id=tokens["client_id"], challenge=challenge)
    code = owner_decides(url, agent="racer").query["code"][0]
    data = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": REDIRECT,
        "client_id": tokens["client_id"],
    }
    answers: list[httpx.Response] = []
    barrier = threading.Barrier(2)

    def redeem(base: str) -> None:
        barrier.wait()
        answers.append(HTTP.post(base + "/oauth/token", data=data, timeout=60))

    threads = [threading.Thread(target=redeem, args=(base,)) for base in (a.base, b.base)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    statuses = sorted(answer.status_code for answer in answers)
    assert statuses in ([200, 400], [400, 400]), [answer.text for answer in answers]
    assert all(answer.status_code != 500 for answer in answers)
    for answer in answers:
        if answer.status_code == 200:
            headers = {"authorization": f"Bearer {answer.json()['access_token']}"}
            # Whichever won, the loser proved possession of the code: the grant is revoked.
            assert HTTP.post(a.mcp, json={}, headers=headers).status_code == 401


def test_lockout_is_counted_across_both_servers(pair: tuple[OAuthServer, OAuthServer]) -> None:
    a, b = pair
    client_id = HTTP.post(
        a.base + "/oauth/register", json={"client_name": "Locked", "redirect_uris": [REDIRECT]}
    ).json()["client_id"]
    _verifier, challenge = pkce()

    def url(server: OAuthServer) -> str:
        return authorize_url(server.base, client_id=client_id, challenge=challenge)

    statuses = [
        owner_decides(url(server), password=f"wrong password {n}").status
        for n, server in enumerate((a, b, a, b, a))
    ]
    assert statuses == [401] * 5
    for server in (a, b):
        assert owner_decides(url(server)).status == 429
    assert "Try again in 15 minutes" in owner_decides(url(b)).page


def test_tool_errors_stay_tool_errors_for_write_grants(server: OAuthServer) -> None:
    tokens = _tokens(server, access="write", agent="writer")
    headers = {"authorization": f"Bearer {tokens['access_token']}"}
    response = _raw_tool_call(server, headers, "forget", {"id": "not-a-uuid", "reason": "r"})
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True


def test_the_read_only_tools_are_the_ones_that_say_so(server: OAuthServer, home: Path) -> None:
    from edge.mcp.tools import READ_ONLY_TOOLS

    key = manage(home, "key", "create", "lister").stdout.strip()

    async def scenario() -> set[str]:
        async with mcp_client(server.mcp, key=key) as client:
            tools = (await client.list_tools()).tools
        return {tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint}

    assert asyncio.run(scenario()) == READ_ONLY_TOOLS


def test_the_rest_api_takes_oauth_tokens_with_the_same_access(server: OAuthServer) -> None:
    reader = _tokens(server, access="read", agent="rest-reader")
    writer = _tokens(server, access="write", agent="rest-writer")
    for tokens in (reader, writer):
        listed = HTTP.get(
            server.base + "/api/v1/refs",
            params={"project": PROJECT},
            headers={"authorization": f"Bearer {tokens['access_token']}"},
        )
        assert listed.status_code == 200, listed.text
    check = {"project": PROJECT, "commit": "0" * 40, "results": []}
    refused = HTTP.post(
        server.base + "/api/v1/refs/check",
        json=check,
        headers={"authorization": f"Bearer {reader['access_token']}"},
    )
    assert refused.status_code == 403
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    allowed = HTTP.post(
        server.base + "/api/v1/refs/check",
        json=check,
        headers={"authorization": f"Bearer {writer['access_token']}"},
    )
    assert allowed.status_code == 200, allowed.text
