"""Test support for the sync client: real git repositories in temporary folders, and a small real HTTP
server on 127.0.0.1 that speaks the references REST contract (and answers the health check and whoami)
and records what it receives."""

import json
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

_GIT_IDENTITY = [
    "-c",
    "user.name=Kenfold Test",
    "-c",
    "user.email=test@kenfold.invalid",
    "-c",
    "commit.gpgsign=false",
]


class Repo:
    """A git working tree for one test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", *_GIT_IDENTITY, *args], cwd=self.path, capture_output=True, text=True, check=True
        )
        return result.stdout.strip()

    def write(self, path: str, text: str) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)

    def commit(self, message: str = "change") -> str:
        """Commit everything in the working tree; returns the new HEAD."""
        self.git("add", "--all")
        self.git("commit", "--quiet", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")

    def blob(self, path: str) -> str:
        return self.git("rev-parse", f"HEAD:{path}")


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class RefsServer:
    """What the fake server answers, and every request it received."""

    url: str = ""
    targets: list[dict[str, Any]] = field(default_factory=list)
    report: dict[str, Any] = field(
        default_factory=lambda: {"updated": 0, "anchored": 0, "unmatched": 0, "states": {}}
    )
    # (status, body) answered to every request instead of the contract's reply, when set.
    failure: tuple[int, dict[str, Any]] | None = None
    # path -> absolute URL to redirect to with 307 (the query string is kept).
    redirects: dict[str, str] = field(default_factory=dict)
    received: list[Received] = field(default_factory=list)

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    def posts(self) -> list[Received]:
        return [request for request in self.received if request.method == "POST"]


def _handler(state: RefsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

        def _answer(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _handle(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            state.received.append(
                Received(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query),
                    headers={name.lower(): value for name, value in self.headers.items()},
                    body=json.loads(raw) if raw else None,
                )
            )
            if parts.path in state.redirects:
                location = state.redirects[parts.path] + (f"?{parts.query}" if parts.query else "")
                self._answer(307, {}, {"Location": location})
            elif self.command == "GET" and parts.path == "/healthz":
                # What `kenfold hook install` checks first (then who the key is, below): always healthy.
                self._answer(200, {"status": "ok"})
            elif state.failure is not None:
                self._answer(*state.failure)
            elif self.command == "GET" and parts.path.endswith("/api/v1/refs"):
                project = parse_qs(parts.query)["project"][0]
                self._answer(200, {"scope": f"project:{project}", "targets": state.targets})
            elif self.command == "POST" and parts.path.endswith("/api/v1/refs/check"):
                self._answer(200, state.report)
            elif self.command == "GET" and parts.path.endswith("/api/v1/whoami"):
                self._answer(200, {"agent": "claude-code", "read_only": False, "credential": "api_key"})
            else:
                self._answer(404, {"error": f"no such endpoint: {parts.path}"})

        do_GET = _handle
        do_POST = _handle

    return Handler


def start_server(state: RefsServer) -> ThreadingHTTPServer:
    """Serve ``state`` on a free port of 127.0.0.1 in a background thread; sets ``state.url``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server
