"""Real Kenfold servers (gunicorn with its ASGI worker) and the MCP SDK's own clients for them."""

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client

from bench.support.mcp import call, tool_error_text
from bench.support.mcp import mcp_client as mcp_client  # the tests import it from here
from bench.support.processes import REPO, Running, free_port, kenfold_env, manage, running

MODES = ["auto", "legacy"]  # 2026-07-28 (server/discover) and 2025-11-25 (initialize handshake)
AGENT_A = "claude-code"
AGENT_B = "codex"
TOOL_NAMES = ["get_context", "remember", "recall", "handoff", "resume", "forget"]
# A raw 2025-era handshake, for checks below the SDK client.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


@dataclass(frozen=True)
class StdioExchange:
    """What `manage.py mcp` answered: the replies in order, then what else it wrote once its input ended."""

    replies: list[dict[str, Any]]
    rest: str
    stderr: str
    returncode: int


def stdio_tool_calls(calls: list[tuple[str, dict[str, Any]]], *, env: dict[str, str]) -> StdioExchange:
    """`manage.py mcp` in a child process given a raw handshake and then ``calls`` (tool name, arguments),
    each reply read before the next message is sent: the end of input ends the server, and with it a call
    still running. Then its input is closed."""
    messages: list[dict[str, Any]] = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    messages += [
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        for number, (name, arguments) in enumerate(calls, 2)
    ]
    process = subprocess.Popen(
        [sys.executable, "manage.py", "mcp"],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin and process.stdout
    replies = []
    for message in messages:
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        if "id" in message:
            line = process.stdout.readline()
            assert line.startswith("{"), (
                f"not JSON-RPC on stdout: {line!r}; stderr: {process.communicate(timeout=30)[1]}"
            )
            replies.append(json.loads(line))
    rest, stderr = process.communicate(timeout=30)  # closes stdin: the server ends at end of input
    return StdioExchange(replies=replies, rest=rest, stderr=stderr, returncode=process.returncode)


@dataclass(frozen=True)
class KenfoldServer:
    home: Path
    base: str
    keys: dict[str, str]
    running: Running

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def manage(self, *args: str, check: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
        return manage(self.home, *args, check=check, **env)

    def create_key(self, agent: str, *flags: str) -> str:
        return self.manage("key", "create", agent, *flags).stdout.strip()

    def log(self) -> str:
        return self.running.output()


@contextmanager
def serve(
    home: Path, keys: dict[str, str], *, port: int | None = None, **env: str
) -> Iterator[KenfoldServer]:
    """gunicorn -k asgi with one worker on `port` (a free one by default), for an already migrated home.

    A test passes the port of a server it stopped to start it again at the same address.
    """
    port = port or free_port()
    gunicorn = str(Path(sys.executable).parent / "gunicorn")
    argv = [gunicorn, "edge.asgi:application", "-k", "asgi", "-w", "1", "-b", f"127.0.0.1:{port}"]
    # Several servers run side by side in a test run; a shared control socket would make them collide.
    argv.append("--no-control-socket")
    base = f"http://127.0.0.1:{port}"
    process_env = kenfold_env(home, KENFOLD_HTTP_ADDR=f"127.0.0.1:{port}", **env)
    with running(argv, env=process_env, ready_url=f"{base}/healthz") as started:
        yield KenfoldServer(home=home, base=base, keys=keys, running=started)


async def recall_ids(client: Client, query: str, *, project: str) -> list[str]:
    return [
        memory["id"] for memory in (await call(client, "recall", query=query, project=project))["memories"]
    ]


async def call_error(client: Client, tool: str, **arguments: Any) -> str:
    """The message of a tool error; fails the test if the call succeeded."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} unexpectedly succeeded: {result.structured_content}"
    return tool_error_text(result)
