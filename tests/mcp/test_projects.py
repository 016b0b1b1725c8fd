"""A remote client without a git remote finds the projects over MCP (issue 35, item 5): get_context without
project lists them, and a guessed project gets a hint naming the closest, with the SDK's client."""

import pytest

from .support import AGENT_A, AGENT_B, KenfoldServer, call, mcp_client

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_client_without_a_remote_finds_the_project_and_its_memories(server: KenfoldServer) -> None:
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as claude:
        await call(
            claude, "remember", content="The blog is built with Hugo.", project="git@github.com:acme/blog"
        )
        await call(
            claude,
            "remember",
            content="Checkout retries are idempotent.",
            project="git@github.com:Acme/shop.git",
        )
        await call(
            claude, "remember", content="Invoices are rendered as PDF.", project="github.com/acme/shop"
        )

    async with mcp_client(server.url, key=server.keys[AGENT_B], client_name="chatgpt") as remote:
        context = await call(remote, "get_context")
        assert [(p["name"], p["memories"]) for p in context["projects"]] == [
            ("github.com/acme/shop", 2),
            ("github.com/acme/blog", 1),
        ], "most recently written first"
        assert "only user-wide memories" in context["hint"]

        guessed = await call(remote, "recall", query="checkout retries", project="shop")
        assert guessed["memories"] == []
        assert guessed["hint"].startswith(
            'Kenfold holds no memories for project "shop" yet. Closest known project: github.com/acme/shop '
            "(2 memories). If you meant one of them, call again with that name as project."
        )
        assert {p["name"] for p in guessed["projects"]} == {"github.com/acme/shop", "github.com/acme/blog"}
        guessed_context = await call(remote, "get_context", project="shop")
        assert guessed_context["hint"] == guessed["hint"]

        # The name as listed is a project as any other client passes it.
        found = await call(remote, "recall", query="checkout retries", project=context["projects"][0]["name"])
        assert found["memories"][0]["content"] == "Checkout retries are idempotent."
        assert "hint" not in found and "projects" not in found
        known = await call(remote, "get_context", project="https://github.com/acme/shop")
        assert "hint" not in known and "projects" not in known
        assert {m["content"] for m in known["project"]} == {
            "Checkout retries are idempotent.",
            "Invoices are rendered as PDF.",
        }


async def test_the_tools_tell_the_model_where_projects_are_listed(server: KenfoldServer) -> None:
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as client:
        assert "omit project and pick from the `projects`" in client.instructions
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert "`projects` lists the known" in tools["get_context"].description
    assert "`hint` names the closest" in tools["recall"].description
    for name in ("get_context", "recall"):
        assert {"projects", "hint"} <= set(tools[name].output_schema["properties"])
