"""The `server` fixture: a real Kenfold server on a fresh home, one per test module.

The tests of a module share it, so each test keeps to projects (or users) of its own.
"""

from collections.abc import Iterator

import pytest

from bench.support.processes import manage, stop_cluster

from .support import AGENT_A, AGENT_B, KenfoldServer, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KenfoldServer]:
    home = tmp_path_factory.mktemp("kenfold") / "home"
    try:
        manage(home, "migrate", "--verbosity", "0")
        keys = {agent: manage(home, "key", "create", agent).stdout.strip() for agent in (AGENT_A, AGENT_B)}
        with serve(home, keys) as started:
            yield started
    finally:
        stop_cluster(home)
