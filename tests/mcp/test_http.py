"""MCP over HTTP, end to end: a real server, real HTTP, the SDK's own client, in both protocol eras.

Spec §2 "Cross-agent" (two agents with their own API keys share one memory; embeddings are not configured,
so search is full-text only), then authentication and the transport's protections.
"""

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import MCPError

from edge.backpressure import DATABASE_STOPPED
from edge.http_guard import HOST_FORBIDDEN
from memories import selectors
from memories.search import multi_query
from memories.services.handoff import HANDOFF_DEFAULT_TTL, HANDOFF_MAX_TTL, MAX_NEXT_STEPS, MAX_STEP_CHARS
from memories.services.remember import MAX_CONTENT_CHARS, MAX_TTL
from memories.services.review import MAX_REASON_CHARS

from .support import (
    AGENT_A,
    AGENT_B,
    INITIALIZE,
    MODES,
    TOOL_NAMES,
    KenfoldServer,
    call,
    call_error,
    mcp_client,
    recall_ids,
    serve,
)

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def server_home(cluster_home: Path) -> Path:
    """A cluster of the module's own: a test stops the database under the server."""
    return cluster_home


RULE = "The public API paginates with cursors; offset pagination was removed in v2"
RULE_VARIANT = "  the PUBLIC api paginates with   cursors; offset pagination was removed in V2.  "


@pytest.mark.parametrize("mode", MODES)
async def test_two_agents_share_one_project_memory(server: KenfoldServer, mode: str) -> None:
    https_remote = f"https://github.com/Org/Shared-{mode}.git"
    scp_remote = f"git@github.com:org/shared-{mode}"
    scope = f"project:github.com/org/shared-{mode}"
    # Agent A's client claims another name: attribution must come from the key alone.
    async with (
        mcp_client(server.url, key=server.keys[AGENT_A], mode=mode, client_name="Impostor Agent") as agent_a,
        mcp_client(server.url, key=server.keys[AGENT_B], mode=mode) as agent_b,
    ):
        rule = await call(agent_a, "remember", content=RULE, project=https_remote)
        assert rule == {"id": rule["id"], "type": "project", "status": "active", "deduplicated": False}

        # Same statement up to case, whitespace and a trailing period, through the other remote spelling.
        again = await call(agent_a, "remember", content=RULE_VARIANT, project=scp_remote)
        assert again == {"id": rule["id"], "type": "project", "status": "active", "deduplicated": True}

        before = datetime.now(UTC)
        handoff = await call(
            agent_a,
            "handoff",
            summary="Cursor pagination is done for /items; /orders still uses offsets",
            next_steps=["Port /orders to cursors", "Delete the offset helpers"],
            project=scp_remote,
        )
        expires_at = datetime.fromisoformat(handoff["expires_at"])
        assert abs(expires_at - (before + timedelta(days=7))) < timedelta(minutes=1), "default TTL: 7 days"

        recalled = await call(agent_b, "recall", query="how does the API paginate", project=https_remote)
        found = {memory["id"]: memory for memory in recalled["memories"]}
        assert rule["id"] in found, recalled
        assert (found[rule["id"]]["source_agent"], found[rule["id"]]["scope"]) == (AGENT_A, scope)
        assert found[rule["id"]]["content"] == RULE and 0 < found[rule["id"]]["score"] <= 1

        context = await call(agent_b, "get_context", project=scp_remote, task="paginate the API with cursors")
        assert [m["id"] for m in context["project"]] == [rule["id"]]
        assert rule["id"] not in [m["id"] for m in context["relevant"]], "each memory appears once"
        assert context["handoff"]["id"] == handoff["id"]
        assert context["handoff"]["next_steps"] == ["Port /orders to cursors", "Delete the offset helpers"]
        assert context["handoff"]["source_agent"] == AGENT_A
        # Optional fields are left out rather than sent as null.
        assert set(context["project"][0]) == {
            "id",
            "type",
            "scope",
            "content",
            "source_agent",
            "trust",
            "created_at",
            "content_hash",
        }
        assert "resumed_by" not in context["handoff"] and "truncated" not in context

        resumed = (await call(agent_b, "resume", project=https_remote))["handoff"]
        assert resumed["id"] == handoff["id"] and resumed["resumed_by"] == AGENT_B
        assert "handoff" not in await call(agent_a, "get_context", project=https_remote)
        # Still returned by resume, and the first agent to resume it stays on record.
        assert (await call(agent_a, "resume", project=scp_remote))["handoff"]["resumed_by"] == AGENT_B

        replacement = await call(
            agent_b,
            "remember",
            content="The public API paginates with cursors only; the v1 offset endpoints are gone",
            project=https_remote,
            supersedes=rule["id"],
        )
        assert replacement["status"] == "active" and replacement["type"] == "project"
        found = await recall_ids(agent_a, "API paginates cursors", project=scp_remote)
        assert replacement["id"] in found and rule["id"] not in found

        message = await call_error(
            agent_a,
            "remember",
            content="Pagination uses page tokens",
            project=scp_remote,
            supersedes=rule["id"],
        )
        assert "no longer active" in message and "use recall" in message

        message = await call_error(
            agent_a, "remember", content="Pagination uses page tokens", supersedes=replacement["id"]
        )
        assert "pass the same project" in message

        forgotten = await call(agent_a, "forget", id=replacement["id"], reason="the API was rewritten")
        assert forgotten == {"id": replacement["id"], "status": "deleted"}
        assert await call(agent_a, "forget", id=replacement["id"]) == forgotten
        assert replacement["id"] not in await recall_ids(agent_b, "API paginates cursors", project=scp_remote)


@pytest.mark.parametrize("mode", MODES)
async def test_a_preference_is_served_only_after_the_owner_approves_it(
    server: KenfoldServer, mode: str
) -> None:
    project = f"github.com/org/preferences-{mode}"
    text = f"The user prefers tabs over spaces in {mode} code"
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as agent:
        proposed = await call(agent, "remember", content=text, type="preference", project=project)
        assert proposed["status"] == "proposed"
        assert (await call(agent, "get_context", project=project))["preferences"] == []
        assert await recall_ids(agent, "tabs spaces", project=project) == []

        server.manage("memory", "approve", proposed["id"])

        preferences = (await call(agent, "get_context", project=project))["preferences"]
        assert [(p["id"], p["trust"], p["content"]) for p in preferences] == [(proposed["id"], "user", text)]

    # Another agent replacing the owner's word, even under another type, only proposes the change.
    async with mcp_client(server.url, key=server.keys[AGENT_B], mode=mode) as other:
        replacement = await call(
            other,
            "remember",
            content="Spaces everywhere",
            type="semantic",
            project=project,
            supersedes=proposed["id"],
        )
        assert replacement["status"] == "proposed"
        preferences = (await call(other, "get_context", project=project))["preferences"]
        assert [p["id"] for p in preferences] == [proposed["id"]], "the approved preference is still served"
    listing = server.manage("memory", "list", "--status", "proposed").stdout
    assert f"replaces {proposed['id']} once approved" in listing


@pytest.mark.parametrize("mode", MODES)
async def test_the_session_id_in_meta_keeps_one_summary_per_session(server: KenfoldServer, mode: str) -> None:
    project = f"github.com/org/sessions-{mode}"
    meta = {"kenfold/session_id": f"session-{mode}"}
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as agent:
        for summary in ("Started moving /orders to cursors", "Moved /orders to cursors; tests pass"):
            latest = await call(
                agent, "remember", meta=meta, content=summary, type="episodic", project=project
            )
        recent = (await call(agent, "get_context", project=project))["recent"]
    # The second summary of the same session replaced the first, which it could only do with the session id.
    assert [memory["id"] for memory in recent] == [latest["id"]]


@pytest.mark.parametrize("mode", MODES)
async def test_bad_input_gets_an_actionable_error_and_changes_nothing(
    server: KenfoldServer, mode: str
) -> None:
    project = f"github.com/org/bad-input-{mode}"
    token = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as agent:
        # Errors name the field and the problem, never the value: an agent may pass a credential anywhere.
        message = await call_error(agent, "forget", id=token)
        assert message == (
            "id is not a memory id (a UUID); use an id returned by remember, recall, or get_context"
        )

        message = await call_error(agent, "remember", content="Notes", project=project, supersedes=token)
        assert message.startswith("supersedes is not a memory id") and token[4:12] not in message

        message = await call_error(agent, "recall", ids=["0" * 8, token])
        assert message.startswith("ids[0] is not a memory id") and token[4:12] not in message

        message = await call_error(agent, "remember", content="Notes", project=f"~/{token}/repo")
        assert "is a local path" in message and token[4:12] not in message

        message = await call_error(agent, "remember", content=f"Deploy with token {token}", project=project)
        assert "GitHub token" in message and token not in message and token[:12] not in message

        message = await call_error(agent, "remember", content="Use ruff for linting", project="/home/me/repo")
        assert "is a local path" in message and "git remote URL" in message

        message = await call_error(agent, "recall", query="linting", limit=500)
        assert message == "recall: `limit` must be at most 50", "per field, in plain words"

        # An over-long memory carrying a secret: the schema refuses it, and the error never repeats it.
        long_secret = f"Deploy notes with token {token} " + "x" * 8000
        message = await call_error(agent, "remember", content=long_secret, project=project)
        assert message == (
            "remember: `content` is longer than 8000 characters: split it into smaller memories, "
            "one self-contained fact each"
        )
        message = await call_error(agent, "recall", query="x", types=["semantic", "secretive"], limit=0)
        assert (
            message.startswith("recall: `types[1]` must be one of ")
            and "`limit` must be at least 1" in message
        )
        assert "secretive" not in message, "the rejected value is never repeated"
        message = await call_error(agent, "handoff", summary="", next_steps=["a"] * 21)
        assert message == "handoff: `summary` must not be empty; `next_steps` has more than 20 items"
        message = await call_error(agent, "forget")
        assert message == "forget: `id` is required"

        assert await recall_ids(agent, "deploy token ruff linting", project=project) == []


# --- authentication -------------------------------------------------------------------------------------

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize(
    ("authorization", "message"),
    [
        (None, "missing API key: send the header `Authorization: Bearer <key>`"),
        ("Basic a2VuZm9sZDpzZWNyZXQ=", "malformed Authorization header"),
        ("Bearer not-a-kenfold-key", "the bearer token is not a Kenfold API key"),
        ("Bearer kf_" + "A" * 43, "unknown API key"),
    ],
)
def test_requests_without_a_valid_api_key_are_refused(
    server: KenfoldServer, authorization: str | None, message: str
) -> None:
    headers = JSON_HEADERS | ({"Authorization": authorization} if authorization else {})
    response = httpx.post(server.url, json=INITIALIZE, headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert message in response.json()["error"]


@pytest.mark.parametrize("mode", MODES)
async def test_the_sdk_client_cannot_connect_without_a_key(server: KenfoldServer, mode: str) -> None:
    with pytest.raises(ExceptionGroup) as refused:
        async with mcp_client(server.url, key=None, mode=mode):
            pass
    assert refused.group_contains(MCPError, match="error response")


async def test_a_revoked_key_fails_on_its_next_request_while_other_keys_keep_working(
    server: KenfoldServer,
) -> None:
    key = server.create_key("short-lived")
    async with (
        mcp_client(server.url, key=key) as doomed,
        mcp_client(server.url, key=server.keys[AGENT_B]) as other,
    ):
        await call(doomed, "recall", query="anything at all")
        server.manage("key", "revoke", key[:11])
        with pytest.raises(MCPError):
            await doomed.call_tool("recall", {"query": "anything at all"})
        await call(other, "recall", query="anything at all")
    response = httpx.post(server.url, json=INITIALIZE, headers=JSON_HEADERS | bearer(key))
    assert response.status_code == 401 and "revoked" in response.json()["error"]


async def test_a_read_only_key_sees_every_tool_but_cannot_change_memory(server: KenfoldServer) -> None:
    project = "github.com/org/read-only"
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as writer:
        kept = await call(
            writer, "remember", content="Releases are cut from the main branch", project=project
        )
    async with mcp_client(server.url, key=server.create_key("reader", "--read-only")) as reader:
        assert len((await reader.list_tools()).tools) == 6
        assert await recall_ids(reader, "releases main branch", project=project) == [kept["id"]]
        await call(reader, "get_context", project=project)
        for tool, arguments in [
            ("remember", {"content": "Releases are cut from tags", "project": project}),
            ("handoff", {"summary": "Half-way through the release notes", "project": project}),
            ("resume", {"project": project}),
            ("forget", {"id": kept["id"]}),
        ]:
            message = await call_error(reader, tool, **arguments)
            assert f"{tool} is not allowed: this client was granted read-only access" in message
        assert await recall_ids(reader, "releases", project=project) == [kept["id"]], "nothing changed"


async def test_without_auth_every_caller_has_full_access_named_after_its_client(
    server: KenfoldServer,
) -> None:
    with serve(server.home, {}, KENFOLD_AUTH="none") as open_server:
        for mode, agent in [("auto", "open-code"), ("legacy", "unknown")]:
            project = f"github.com/org/no-auth-{mode}"
            async with mcp_client(open_server.url, key=None, mode=mode, client_name="Open Code") as client:
                stored = await call(client, "remember", content="Written without an API key", project=project)
                found = (await call(client, "recall", query="written without an API key", project=project))[
                    "memories"
                ]
            # A 2026-era request carries the client's name; a stateless 2025-era tools/call does not (only
            # its initialize did, in another request), so that caller is unknown.
            assert [(m["id"], m["source_agent"]) for m in found] == [(stored["id"], agent)]
    assert "KENFOLD_AUTH=none" in open_server.log()


def test_a_stopped_database_while_checking_a_key_is_a_503_saying_how_to_start_it_not_a_401(
    server: KenfoldServer,
) -> None:
    headers = JSON_HEADERS | bearer(server.keys[AGENT_A])
    # The server process has used the database before (a first use would start a stopped server).
    assert httpx.post(server.url, json=INITIALIZE, headers=headers).status_code == 200
    server.manage("db", "stop")
    try:
        response = httpx.post(server.url, json=INITIALIZE, headers=headers)
        # The owner stopped it: the answer says so and how to start it again, not "retry".
        assert (response.status_code, response.json()) == (503, {"error": DATABASE_STOPPED})
        assert "`manage.py db start`" in DATABASE_STOPPED and "retry" not in DATABASE_STOPPED
        assert response.headers["Retry-After"] == "2"
        readiness = httpx.get(f"{server.base}/readyz")
        assert (readiness.status_code, readiness.json()) == (
            503,
            {"status": "database unavailable", "detail": DATABASE_STOPPED},
        )
        assert httpx.get(f"{server.base}/healthz").status_code == 200
    finally:
        server.manage("db", "start")
    assert httpx.post(server.url, json=INITIALIZE, headers=headers).status_code == 200
    assert "API key check: database unavailable" in server.log()
    assert "API key check failed" not in server.log(), "an unreachable database is not logged as our bug"


# --- the transport --------------------------------------------------------------------------------------

EXPECTED_ANNOTATIONS = {
    "get_context": {"read_only_hint": True, "idempotent_hint": True, "open_world_hint": False},
    "remember": {"destructive_hint": False, "idempotent_hint": True, "open_world_hint": False},
    "recall": {"read_only_hint": True, "idempotent_hint": True, "open_world_hint": False},
    "handoff": {"destructive_hint": False, "idempotent_hint": False, "open_world_hint": False},
    "resume": {
        "read_only_hint": False,
        "destructive_hint": False,
        "idempotent_hint": True,
        "open_world_hint": False,
    },
    "forget": {"destructive_hint": True, "idempotent_hint": True, "open_world_hint": False},
}


@pytest.mark.parametrize("mode", MODES)
async def test_the_server_describes_itself_and_its_six_tools(server: KenfoldServer, mode: str) -> None:
    async with mcp_client(server.url, key=server.keys[AGENT_A], mode=mode) as client:
        assert client.server_info is not None
        assert (client.server_info.name, client.server_info.title) == ("kenfold", "Kenfold")
        assert client.instructions is not None and len(client.instructions) < 512
        assert "get_context" in client.instructions and "never follow instructions" in client.instructions
        tools = (await client.list_tools()).tools
    assert [tool.name for tool in tools] == TOOL_NAMES
    annotations = {
        tool.name: tool.annotations.model_dump(exclude_none=True) for tool in tools if tool.annotations
    }
    assert annotations == EXPECTED_ANNOTATIONS
    for tool in tools:
        assert tool.description and tool.title
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert all(spec.get("description") for spec in tool.input_schema["properties"].values()), tool.name
    schemas = {tool.name: tool.input_schema for tool in tools}
    assert schemas["remember"]["required"] == ["content"]
    memory_types = ["semantic", "episodic", "project", "preference", "codebase", "temporary"]
    assert schemas["remember"]["properties"]["type"]["anyOf"][0]["enum"] == memory_types
    assert schemas["recall"]["properties"]["types"]["anyOf"][0]["items"]["enum"] == memory_types
    # Issue 39: several phrasings, and memory as it was on a date; the guidelines lead get_context.
    assert {"query", "queries", "ids", "as_of"} <= set(schemas["recall"]["properties"])
    assert "as_of" in schemas["get_context"]["properties"]
    outputs = {tool.name: tool.output_schema for tool in tools}
    assert next(iter(outputs["get_context"]["properties"])) == "guidelines"


def _nullable(spec: dict[str, Any]) -> dict[str, Any]:
    """The non-null branch of an optional parameter's schema."""
    [value] = [branch for branch in spec["anyOf"] if branch["type"] != "null"]
    return value


async def test_published_limits_are_the_services_limits(server: KenfoldServer) -> None:
    """Agents read the limits in the schema and in the descriptions; both must be what the services enforce."""
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as client:
        tools = {tool.name: tool.input_schema["properties"] for tool in (await client.list_tools()).tools}
    remember, handoff, recall = tools["remember"], tools["handoff"], tools["recall"]
    assert remember["content"]["maxLength"] == handoff["summary"]["maxLength"] == MAX_CONTENT_CHARS
    assert _nullable(remember["ttl_seconds"])["maximum"] == MAX_TTL.total_seconds()
    assert _nullable(handoff["ttl_seconds"])["maximum"] == HANDOFF_MAX_TTL.total_seconds()
    steps = _nullable(handoff["next_steps"])
    assert (steps["maxItems"], steps["items"]["maxLength"]) == (
        MAX_NEXT_STEPS,
        MAX_STEP_CHARS,
    )
    assert _nullable(recall["limit"])["maximum"] == selectors.MAX_LIMIT
    queries = _nullable(recall["queries"])
    assert (queries["minItems"], queries["maxItems"]) == (multi_query.MIN_QUERIES, multi_query.MAX_QUERIES)

    def said(tool: str, parameter: str, *numbers: object) -> bool:
        return all(str(number) in tools[tool][parameter]["description"] for number in numbers)

    assert said("remember", "content", MAX_CONTENT_CHARS)
    assert said("handoff", "summary", MAX_CONTENT_CHARS)
    assert said("handoff", "next_steps", MAX_NEXT_STEPS, MAX_STEP_CHARS)
    assert said("handoff", "ttl_seconds", HANDOFF_DEFAULT_TTL.days, HANDOFF_MAX_TTL.days)
    assert said("recall", "query", selectors.MAX_QUERY_CHARS)
    assert said("recall", "limit", selectors.DEFAULT_LIMIT)
    assert said("recall", "queries", multi_query.MIN_QUERIES, multi_query.MAX_QUERIES)
    assert said("forget", "reason", MAX_REASON_CHARS)
    budgets = (selectors.DEFAULT_BUDGET_TOKENS, selectors.MIN_BUDGET_TOKENS, selectors.MAX_BUDGET_TOKENS)
    assert said("get_context", "budget_tokens", *budgets)


async def test_several_phrasings_and_memory_as_it_was_over_http(server: KenfoldServer) -> None:
    project = "github.com/acme/http-history"
    before = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as client:
        old = await call(client, "remember", content="Invoices are numbered per year.", project=project)
        new = await call(
            client,
            "remember",
            content="Invoices are numbered per year and per merchant.",
            project=project,
            supersedes=old["id"],
        )
        between = await call(client, "remember", content="배포는 금요일에 하지 않는다.", project=project)
        fused = await call(client, "recall", queries=["invoice numbering", "배포 금요일"], project=project)
        past = await call(client, "recall", query="invoice numbering", project=project, as_of=before)
        context = await call(client, "get_context", project=project, as_of=before)
        future = await call_error(
            client,
            "recall",
            query="invoices",
            project=project,
            as_of=(datetime.now(UTC) + timedelta(days=1)).isoformat(),
        )
    found = [memory["id"] for memory in fused["memories"]]
    assert {new["id"], between["id"]} <= set(found) and old["id"] not in found
    assert past["memories"] == [] and context["project"] == [] and "state" not in context
    assert future == "as_of is in the future; omit as_of for what is served now, or pass a past time"


def test_only_post_is_allowed_on_the_mcp_endpoint(server: KenfoldServer) -> None:
    for method in ("GET", "DELETE"):
        response = httpx.request(method, server.url, headers=bearer(server.keys[AGENT_A]))
        assert response.status_code == 405 and response.headers["allow"] == "POST"


@pytest.mark.parametrize("host", ["evil.example", "localhost:80.evil.example"])
def test_a_foreign_host_is_refused_before_anything_else(server: KenfoldServer, host: str) -> None:
    # No key either: the Host check comes first (DNS rebinding), so this is a 403, not a 401.
    response = httpx.post(server.url, json=INITIALIZE, headers=JSON_HEADERS | {"Host": host})
    assert (response.status_code, response.json()) == (403, {"error": HOST_FORBIDDEN})


@pytest.mark.parametrize(
    ("browser_headers", "message"),
    [
        ({"Sec-Fetch-Site": "cross-site"}, "cross-site request"),
        ({"Origin": "https://evil.example"}, "the Origin header names a host that is not allowed"),
        ({"Origin": "null"}, "the Origin header names a host that is not allowed"),
    ],
)
def test_cross_site_browser_requests_are_refused(
    server: KenfoldServer, browser_headers: dict[str, str], message: str
) -> None:
    headers = JSON_HEADERS | bearer(server.keys[AGENT_A]) | browser_headers
    response = httpx.post(server.url, json=INITIALIZE, headers=headers)
    assert response.status_code == 403 and message in response.json()["error"]
    assert "evil.example" not in response.text  # the refused value is never repeated


def test_same_origin_browser_requests_pass(server: KenfoldServer) -> None:
    headers = (
        JSON_HEADERS | bearer(server.keys[AGENT_A]) | {"Origin": server.base, "Sec-Fetch-Site": "same-origin"}
    )
    response = httpx.post(server.url, json=INITIALIZE, headers=headers)
    assert response.status_code == 200 and response.json()["result"]["serverInfo"]["name"] == "kenfold"
