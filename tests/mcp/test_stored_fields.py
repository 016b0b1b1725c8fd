"""Every field an agent's call stores is scanned for credentials, not only the text (issue 37, item 2):
the project (kept, lowercased, in the scope) and the session id (`_meta` `kenfold/session_id`, kept as
`source_session`). Refusals name the field and the kind of credential, never the value; with the SDK's
client over HTTP."""

from typing import Any

import pytest
from mcp import Client

from .support import AGENT_A, KenfoldServer, call, mcp_client, tool_error_text

pytestmark = pytest.mark.anyio

GITHUB_TOKEN = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
# Lowercased (as a scope keeps it) this no longer reads as a key: only the name as typed shows what it is.
AWS_KEY = "AKIA" + "Z7Q4M2X9RT3LW5KP"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _error(client: Client, tool: str, meta: dict[str, Any] | None = None, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments, meta=meta)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    return tool_error_text(result)


def _shows_no_secret(text: str) -> bool:
    return not any(part in text.lower() for part in (GITHUB_TOKEN[4:14].lower(), AWS_KEY[4:14].lower()))


@pytest.mark.parametrize(
    ("project", "kind"),
    [
        (f"github.com/acme/{GITHUB_TOKEN}", "a GitHub token"),
        (f"git@github.com:Acme/{AWS_KEY}.git", "an AWS access key"),
    ],
)
async def test_a_project_holding_a_credential_is_refused(
    server: KenfoldServer, project: str, kind: str
) -> None:
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as claude:
        for tool, arguments in (
            ("remember", {"content": "Deploys go out on Tuesdays."}),
            ("handoff", {"summary": "Half-way through the deploy checklist."}),
        ):
            message = await _error(claude, tool, project=project, **arguments)
            assert message.startswith(f"project appears to contain {kind}. Credentials must never be stored")
            assert _shows_no_secret(message)
        listed = await call(claude, "get_context")
        assert _shows_no_secret(str(listed.get("projects", [])))


async def test_a_remote_url_with_credentials_stays_a_project(server: KenfoldServer) -> None:
    # The credentials of a remote URL are dropped by normalization, never stored: no reason to refuse.
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as claude:
        project = f"https://x-access-token:{GITHUB_TOKEN}@github.com/acme/fields.git"
        await call(claude, "remember", content="Fields are scanned before they are stored.", project=project)
        context = await call(claude, "get_context", project="github.com/acme/fields")
        assert [m["content"] for m in context["project"]] == ["Fields are scanned before they are stored."]


async def test_a_session_id_holding_a_credential_is_refused(server: KenfoldServer) -> None:
    meta = {"kenfold/session_id": f"session-{GITHUB_TOKEN}"}
    async with mcp_client(server.url, key=server.keys[AGENT_A]) as claude:
        for tool, arguments in (
            ("remember", {"content": "The session added retries to checkout.", "type": "episodic"}),
            ("handoff", {"summary": "Retries are in; the tests are next."}),
        ):
            message = await _error(claude, tool, meta=meta, project="github.com/acme/sessions", **arguments)
            assert message.startswith(
                "the session id (_meta kenfold/session_id) appears to contain a GitHub token. "
                "Credentials must never be stored"
            )
            assert _shows_no_secret(message)
        # A session id without one is kept as before.
        await call(
            claude,
            "remember",
            meta={"kenfold/session_id": "session-42"},
            content="The session added retries to checkout.",
            type="episodic",
            project="github.com/acme/sessions",
        )
        context = await call(claude, "get_context", project="github.com/acme/sessions")
        assert "The session added retries to checkout." in str(context)
