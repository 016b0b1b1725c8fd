"""The `server` fixture: a real Kenfold server on a fresh home, one per test module.

The tests of a module share it, so each test keeps to projects (or users) of its own. Its home is
`server_home`: a database of the module's own on the run's cluster, unless the module overrides it (a
module whose tests stop the database takes `cluster_home`).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.support.processes import manage

from .support import AGENT_A, AGENT_B, KenfoldServer, serve


@pytest.fixture(scope="module")
def server_home(module_home: Path) -> Path:
    return module_home


@pytest.fixture(scope="module")
def server(server_home: Path) -> Iterator[KenfoldServer]:
    keys = {agent: manage(server_home, "key", "create", agent).stdout.strip() for agent in (AGENT_A, AGENT_B)}
    with serve(server_home, keys) as started:
        yield started
