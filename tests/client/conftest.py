"""Fixtures for the sync client: a git checkout per test, and fake Kenfold servers on 127.0.0.1."""

from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from .support import RefsServer, Repo, start_server


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo(tmp_path / "checkout")


@pytest.fixture
def start_refs_server() -> Iterator[Callable[[], RefsServer]]:
    """Starts fake servers on 127.0.0.1 (a test may need two origins); all are stopped afterwards."""
    servers: list[ThreadingHTTPServer] = []

    def start() -> RefsServer:
        state = RefsServer()
        servers.append(start_server(state))
        return state

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def refs_server(start_refs_server: Callable[[], RefsServer]) -> RefsServer:
    return start_refs_server()
