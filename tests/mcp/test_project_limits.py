"""Projects per key and per grant (issue 38, item 1), over the real MCP client and REST on a live server.

A key created with `--project` and an OAuth grant the owner limited on the consent page reach only their
projects: at every tool and REST entry point, a memory (or project) outside them gets exactly the answer an
id (or project) that never existed gets, byte for byte once the id itself is replaced. User-wide memories
stay readable unless the owner said otherwise, and a limited credential never writes them.
"""

import asyncio
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_types import CallToolResult

from bench.support.processes import DatabaseHome, manage
from tests.mcp.support import call, call_error, mcp_client
from tests.oauth.support import PASSWORD, OAuthServer, grant_tokens, oauth_server, set_password

OWN = "github.com/kenfold/limits-own"
OUTSIDE = "github.com/kenfold/limits-outside"
# Never written by anyone: what a project outside the limit must look like.
NOWHERE = "github.com/kenfold/limits-nowhere"
OUTSIDE_FACT = "The heron release of limits-outside ships billing/retry.py with RetryPolicy backoff"
USER_FACT = "The owner prefers heron-themed release names in every project"
OWN_FACT = "The heron branch of limits-own deploys on Fridays"
HTTP = httpx.Client(timeout=60)


@dataclass(frozen=True)
class World:
    server: OAuthServer
    home: Path
    full: str
    # credential kind -> bearer token: limited to OWN, and limited to OWN without user-wide memories
    limited: dict[str, str]
    hidden: dict[str, str]
    outside_id: str
    user_id: str
    own_id: str


def _tool(url: str, token: str, tool: str, **arguments: Any) -> CallToolResult:
    async def go() -> CallToolResult:
        async with mcp_client(url, key=token) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(go())


def _structured(url: str, token: str, tool: str, **arguments: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with mcp_client(url, key=token) as client:
            return await call(client, tool, **arguments)

    return asyncio.run(go())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, database_home: DatabaseHome) -> Iterator[World]:
    with database_home(tmp_path_factory.mktemp("kenfold-limits") / "home") as home:
        set_password(home, PASSWORD)
        full = manage(home, "key", "create", "owner-agent").stdout.strip()
        limited_key = manage(home, "key", "create", "limited-key", "--project", OWN).stdout.strip()
        hidden_key = manage(
            home,
            "key",
            "create",
            "hidden-key",
            "--project",
            f"git@{OWN.replace('/', ':', 1)}.git",
            "--no-user-memories",
        ).stdout.strip()
        with oauth_server(home, KENFOLD_EMBED="off") as server:
            limited_grant = grant_tokens(
                server.base,
                access="write",
                agent="limited-grant",
                extra={"projects_choice": "some", "projects": f"https://{OWN}.git\n"},
            )["access_token"]
            hidden_grant = grant_tokens(
                server.base,
                access="write",
                agent="hidden-grant",
                extra={"projects_choice": "some", "projects": OWN, "no_user_memories": "on"},
            )["access_token"]
            outside = _structured(
                server.mcp, full, "remember", content=OUTSIDE_FACT, type="codebase", project=OUTSIDE
            )
            user = _structured(server.mcp, full, "remember", content=USER_FACT, type="semantic")
            own = _structured(server.mcp, full, "remember", content=OWN_FACT, project=OWN)
            _structured(server.mcp, full, "handoff", summary="Outside work in progress", project=OUTSIDE)
            synced = HTTP.post(
                server.base + "/api/v1/docs/sync",
                headers={"authorization": f"Bearer {full}"},
                json={
                    "project": OUTSIDE,
                    "files": [
                        {
                            "path": "docs/heron.md",
                            "file_hash": "a" * 64,
                            "chunks": [
                                {"heading_path": ["Heron"], "content": "## Heron\n\nThe heron runbook."}
                            ],
                        }
                    ],
                },
            )
            assert synced.status_code == 200, synced.text
            yield World(
                server=server,
                home=home,
                full=full,
                limited={"key": limited_key, "grant": limited_grant},
                hidden={"key": hidden_key, "grant": hidden_grant},
                outside_id=outside["id"],
                user_id=user["id"],
                own_id=own["id"],
            )


@pytest.fixture(params=["key", "grant"])
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


def _answer(result: CallToolResult, *ids: str) -> tuple[bool, str]:
    """The whole tool answer as the client sees it, with the ids asked about written as <id>."""
    text = "".join(getattr(block, "text", "") for block in result.content)
    text += json.dumps(result.structured_content, sort_keys=True)
    for memory_id in ids:
        text = text.replace(memory_id, "<id>")
    return result.is_error, text


def _served_to_owner(world: World, memory_id: str) -> bool:
    loaded = _structured(world.server.mcp, world.full, "recall", ids=[memory_id], project=OUTSIDE)
    return [memory["id"] for memory in loaded["memories"]] == [memory_id]


# --- tools: an outside project is refused exactly like one never written ---------------------------------

PROJECT_CALLS = [
    ("recall", {"query": "heron"}),
    ("get_context", {"task": "heron"}),
    ("remember", {"content": "Written into a project outside the limit, zanzibar"}),
    ("handoff", {"summary": "A handoff outside the limit, zanzibar"}),
    ("resume", {}),
]


@pytest.mark.parametrize(("tool", "arguments"), PROJECT_CALLS, ids=[tool for tool, _ in PROJECT_CALLS])
def test_an_outside_project_answers_as_a_project_never_written(
    world: World, kind: str, tool: str, arguments: dict[str, Any]
) -> None:
    token = world.limited[kind]
    outside = _tool(world.server.mcp, token, tool, project=OUTSIDE, **arguments)
    nowhere = _tool(world.server.mcp, token, tool, project=NOWHERE, **arguments)
    assert outside.is_error, _answer(outside)
    assert _answer(outside) == _answer(nowhere)
    # The refusal names the credential's own projects, never the one asked for.
    text = _answer(outside)[1]
    assert OWN in text and OUTSIDE not in text and "heron" not in text.lower()
    # Nothing was written outside, and the outside handoff was not taken.
    # get_context offers a handoff only until someone resumes it.
    owner_view = _structured(world.server.mcp, world.full, "get_context", project=OUTSIDE)
    assert owner_view["handoff"]["content"] == "Outside work in progress"
    for project in (OUTSIDE, NOWHERE):
        found = _structured(world.server.mcp, world.full, "recall", query="zanzibar", project=project)
        assert found["memories"] == []


def test_a_delta_state_does_not_open_an_outside_project(world: World, kind: str) -> None:
    token = world.limited[kind]
    state = _structured(world.server.mcp, token, "get_context", project=OWN)["state"]
    outside = _tool(world.server.mcp, token, "get_context", project=OUTSIDE, state=state)
    nowhere = _tool(world.server.mcp, token, "get_context", project=NOWHERE, state=state)
    assert outside.is_error and _answer(outside) == _answer(nowhere)


# --- tools: an outside memory answers as an id nobody stored ---------------------------------------------


def _id_calls(memory_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("recall ids in the own project", {"tool": "recall", "ids": [memory_id], "project": OWN}),
        ("recall ids without a project", {"tool": "recall", "ids": [memory_id]}),
        (
            "recall ids with known_hashes",
            {"tool": "recall", "ids": [memory_id], "known_hashes": {memory_id: "x"}},
        ),
        (
            "remember superseding it",
            {
                "tool": "remember",
                "content": "A replacement from the limited side",
                "project": OWN,
                "supersedes": memory_id,
            },
        ),
        ("forget", {"tool": "forget", "id": memory_id, "reason": "limited credential"}),
    ]


@pytest.mark.parametrize("entry", [name for name, _ in _id_calls("x")])
def test_an_outside_memory_answers_as_an_unknown_id(world: World, kind: str, entry: str) -> None:
    token = world.limited[kind]
    unknown = str(uuid.uuid4())
    outside_call = dict(_id_calls(world.outside_id))[entry]
    unknown_call = dict(_id_calls(unknown))[entry]
    outside = _tool(world.server.mcp, token, **outside_call)
    nowhere = _tool(world.server.mcp, token, **unknown_call)
    assert _answer(outside, world.outside_id) == _answer(nowhere, unknown)
    assert world.outside_id in "".join(getattr(block, "text", "") for block in outside.content)
    assert OUTSIDE_FACT not in _answer(outside)[1]
    assert _served_to_owner(world, world.outside_id), "the outside memory is untouched"


def test_recall_and_get_context_never_show_outside_memories_or_projects(world: World, kind: str) -> None:
    token = world.limited[kind]
    found = _structured(world.server.mcp, token, "recall", query="heron", project=OWN, limit=50)
    ids = [memory["id"] for memory in found["memories"]]
    # Its own project's memory and the user-wide one, nothing of the other project.
    assert world.own_id in ids and world.user_id in ids and world.outside_id not in ids
    context = _structured(world.server.mcp, token, "get_context", task="heron runbook")
    text = json.dumps(context)
    assert OUTSIDE not in text and "limits-outside" not in text and world.outside_id not in text
    assert [project["name"] for project in context["projects"]] == [OWN]
    # The unlimited key still lists both.
    owners = _structured(world.server.mcp, world.full, "get_context")
    assert {OWN, OUTSIDE} <= {project["name"] for project in owners["projects"]}


def test_a_limited_credential_reads_user_wide_memories_but_never_writes_them(world: World, kind: str) -> None:
    token = world.limited[kind]
    loaded = _structured(world.server.mcp, token, "recall", ids=[world.user_id])
    assert [memory["id"] for memory in loaded["memories"]] == [world.user_id]
    refused = asyncio.run(
        _error(world.server.mcp, token, "remember", content="A user-wide note from the limited side")
    )
    assert "limited to projects" in refused and OWN in refused
    refused = asyncio.run(_error(world.server.mcp, token, "forget", id=world.user_id))
    assert "limited to projects" in refused and "does not exist" not in refused
    assert _structured(world.server.mcp, world.full, "recall", ids=[world.user_id])["memories"]


def test_user_wide_memories_kept_from_a_credential_do_not_exist_for_it(world: World, kind: str) -> None:
    token = world.hidden[kind]
    unknown = str(uuid.uuid4())
    for arguments in ({"tool": "recall", "ids": [world.user_id]}, {"tool": "forget", "id": world.user_id}):
        as_user = _tool(world.server.mcp, token, **arguments)
        as_unknown = _tool(
            world.server.mcp, token, **json.loads(json.dumps(arguments).replace(world.user_id, unknown))
        )
        assert _answer(as_user, world.user_id) == _answer(as_unknown, unknown)
    found = _structured(world.server.mcp, token, "recall", query="heron", project=OWN, limit=50)
    assert [memory["id"] for memory in found["memories"]] == [world.own_id]
    context = _structured(world.server.mcp, token, "get_context", task="heron")
    assert USER_FACT not in json.dumps(context)


def test_inside_its_projects_a_limited_credential_works_as_before(world: World, kind: str) -> None:
    token = world.limited[kind]
    stored = _structured(
        world.server.mcp, token, "remember", content=f"Inside the limit, written by a {kind}", project=OWN
    )
    assert _structured(world.server.mcp, token, "recall", ids=[stored["id"]], project=OWN)["memories"]
    assert _structured(world.server.mcp, token, "forget", id=stored["id"])["status"] == "deleted"
    handoff = _structured(world.server.mcp, token, "handoff", summary=f"Own handoff by a {kind}", project=OWN)
    assert _structured(world.server.mcp, token, "resume", project=OWN)["handoff"]["id"] == handoff["id"]


async def _error(url: str, token: str, tool: str, **arguments: Any) -> str:
    async with mcp_client(url, key=token) as client:
        return await call_error(client, tool, **arguments)


# --- REST: refs and docs -----------------------------------------------------------------------------------

REST_CALLS = [
    ("GET", "/api/v1/refs", lambda project: {"params": {"project": project}}),
    (
        "POST",
        "/api/v1/refs/check",
        lambda project: {"json": {"project": project, "commit": "abcdef1", "results": []}},
    ),
    ("GET", "/api/v1/docs/files", lambda project: {"params": {"project": project}}),
    (
        "POST",
        "/api/v1/docs/sync",
        lambda project: {"json": {"project": project, "files": [], "deleted": ["docs/heron.md"]}},
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "request_for"), REST_CALLS, ids=[f"{m} {p}" for m, p, _ in REST_CALLS]
)
def test_rest_answers_an_outside_project_as_one_never_written(
    world: World, kind: str, method: str, path: str, request_for: Any
) -> None:
    headers = {"authorization": f"Bearer {world.limited[kind]}"}
    outside = HTTP.request(method, world.server.base + path, headers=headers, **request_for(OUTSIDE))
    nowhere = HTTP.request(method, world.server.base + path, headers=headers, **request_for(NOWHERE))
    assert outside.status_code == 403, outside.text
    assert (outside.status_code, outside.content) == (nowhere.status_code, nowhere.content)
    assert OUTSIDE not in outside.text and OWN in outside.text
    # The outside docs page is still served, and the owner's key still sees its targets.
    owner = {"authorization": f"Bearer {world.full}"}
    files = HTTP.get(
        world.server.base + "/api/v1/docs/files", params={"project": OUTSIDE}, headers=owner
    ).json()
    assert [item["path"] for item in files["files"]] == ["docs/heron.md"]
    targets = HTTP.get(world.server.base + "/api/v1/refs", params={"project": OUTSIDE}, headers=owner).json()
    assert targets["targets"], "the outside codebase memory has references"
    # Inside its project, the same endpoint answers.
    inside = HTTP.request(method, world.server.base + path, headers=headers, **request_for(OWN))
    assert inside.status_code == 200, inside.text


# --- the owner changes a key's projects without a new key --------------------------------------------------


def test_key_projects_changes_what_the_same_key_reaches(world: World) -> None:
    token = world.limited["key"]
    prefix = token[:11]
    assert _tool(world.server.mcp, token, "recall", ids=[world.outside_id], project=OUTSIDE).is_error
    changed = manage(
        world.home, "key", "projects", prefix, "--add", f"git@{OUTSIDE.replace('/', ':', 1)}.git"
    )
    assert f"now reaches only {OUTSIDE}, {OWN}." in changed.stdout
    try:
        loaded = _structured(world.server.mcp, token, "recall", ids=[world.outside_id], project=OUTSIDE)
        assert [memory["id"] for memory in loaded["memories"]] == [world.outside_id]
    finally:
        manage(world.home, "key", "projects", prefix, "--remove", OUTSIDE)
    assert _tool(world.server.mcp, token, "recall", ids=[world.outside_id], project=OUTSIDE).is_error
    listed = [json.loads(line) for line in manage(world.home, "key", "list", "--json").stdout.splitlines()]
    limits = {row["agent"]: (row["projects"], row["user_memories"]) for row in listed}
    assert limits["limited-key"] == ([OWN], True)
    assert limits["hidden-key"] == ([OWN], False)
    assert limits["owner-agent"] == (None, True)
    grants = [
        json.loads(line) for line in manage(world.home, "oauth", "clients", "--json").stdout.splitlines()
    ]
    assert {row["agent"]: (row["projects"], row["user_memories"]) for row in grants} == {
        "limited-grant": ([OWN], True),
        "hidden-grant": ([OWN], False),
    }
