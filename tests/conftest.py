"""Shared fixtures. The suite runs against a throwaway embedded cluster set up by scripts/test.sh."""

import os
from pathlib import Path

import pytest
from django.conf import settings


def pytest_configure(config: pytest.Config) -> None:
    # Refuse to run against the owner's own data: `make test` points KENFOLD_HOME at a temporary folder.
    if getattr(settings, "EMBEDDED_CLUSTER", None) is not None:
        home = Path(settings.KENFOLD_HOME)
        default = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "kenfold"
        if home == default.absolute():
            raise pytest.UsageError(
                f"the tests would use your Kenfold home {home}; run them with `make test` "
                "(or set KENFOLD_HOME to a temporary folder)"
            )


@pytest.fixture(scope="session")
def standalone_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a fresh venv holding only the client distribution (tests/client/standalone.py)."""
    from tests.client.standalone import build_standalone_client

    return build_standalone_client(tmp_path_factory.mktemp("standalone-client"))
