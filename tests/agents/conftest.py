"""Fixtures of the real agents' tests: one Kenfold server per module, a scripted model per test."""

from collections.abc import Iterator

import pytest

from bench.support.processes import manage, stop_cluster
from tests.agents.scripted_models import ScriptedModel, scripted_model
from tests.mcp.support import KenfoldServer, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KenfoldServer]:
    """A live server without keys: each test creates them with the docs' own commands."""
    home = tmp_path_factory.mktemp("kenfold-agents") / "home"
    try:
        manage(home, "migrate", "--verbosity", "0")
        with serve(home, {}, KENFOLD_EMBED="off") as started:
            yield started
    finally:
        stop_cluster(home)


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with scripted_model([]) as started:
        yield started
