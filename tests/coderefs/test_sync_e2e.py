"""End to end: an agent remembers a fact about code, `kenfold refs sync` runs in a real git checkout
against a real server, and the memory goes stale when the code it names is deleted (issue: code refs).

The `kenfold` command here is the client distribution installed alone into a fresh venv (no Django), as
on an agent's machine.
"""

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from bench.support.processes import manage
from tests.client.support import Repo
from tests.mcp.support import KenfoldServer, call, mcp_client, serve

pytestmark = pytest.mark.anyio
PROJECT = "https://github.com/acme/shop.git"

BILLING_V1 = '''"""Billing."""


def charge_card(amount: int) -> str:
    """Charge once; the provider deduplicates by idempotency key."""
    return f"charged {amount}"
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def server(module_home: Path) -> Iterator[KenfoldServer]:
    keys = {"claude-code": manage(module_home, "key", "create", "claude-code").stdout.strip()}
    with serve(module_home, keys, KENFOLD_EMBED="off") as started:
        yield started


@pytest.fixture
def kenfold(standalone_client: Path) -> str:
    return str(standalone_client / "kenfold")


def sync(kenfold: str, server: KenfoldServer, directory: Path) -> str:
    result = subprocess.run(
        [kenfold, "refs", "sync", "--dir", str(directory), "--url", server.url, "--key-env", "SHOP_KEY"],
        env={**os.environ, "SHOP_KEY": server.keys["claude-code"]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def states(server: KenfoldServer) -> dict[tuple[str, str], str]:
    """Each reference's state, read back through the owner's command."""
    out = server.manage(
        "shell",
        "-c",
        (
            "from coderefs.models import CodeRef\n"
            "for r in CodeRef.objects.order_by('path', 'symbol'): print(f'{r.path}|{r.symbol}|{r.state}')"
        ),
    ).stdout
    return {(p, s): state for p, s, state in (line.split("|") for line in out.splitlines() if "|" in line)}


async def test_memories_about_code_follow_the_code(
    server: KenfoldServer, kenfold: str, tmp_path: Path
) -> None:
    repo = Repo(tmp_path / "shop")
    repo.git("remote", "add", "origin", "git@github.com:acme/shop.git")
    repo.write("app/billing.py", BILLING_V1)
    repo.write("README.md", "shop\n")
    repo.commit("billing")
    older = repo.git("rev-parse", "HEAD")
    repo.write("app/extra.py", "VALUE = 1\n")
    repo.commit("extra")

    key = server.keys["claude-code"]
    async with mcp_client(server.url, key=key) as agent:
        fact = await call(
            agent,
            "remember",
            content="`charge_card` in app/billing.py charges once per order.",
            project=PROJECT,
        )
        other = await call(
            agent, "remember", content="Orders are charged once, at checkout, never twice.", project=PROJECT
        )
    assert states(server) == {("app/billing.py", ""): "pending", ("app/billing.py", "charge_card"): "pending"}

    # From a subdirectory: the client finds the checkout and the project from its remote.
    assert "2 current" in sync(kenfold, server, repo.path / "app")
    assert set(states(server).values()) == {"current"}

    # An unrelated edit to the file, committed: the file changed, the function did not.
    repo.write("app/billing.py", BILLING_V1 + "\n\ndef refund(amount: int) -> str:\n    return 'refunded'\n")
    repo.commit("refunds")
    summary = sync(kenfold, server, repo.path)
    assert "1 current, 1 changed" in summary
    async with mcp_client(server.url, key=key) as agent:
        found = (await call(agent, "recall", query="charge_card charges once per order", project=PROJECT))[
            "memories"
        ]
    view = next(m for m in found if m["id"] == fact["id"])
    assert view.get("stale") is False
    assert {(r.get("symbol"), r["state"]) for r in view["code_refs"]} == {
        (None, "changed"),
        ("charge_card", "current"),
    }

    # An uncommitted change is never anchored: a new memory about a file being edited stays pending.
    repo.write("app/extra.py", "VALUE = 2\n")
    async with mcp_client(server.url, key=key) as agent:
        await call(agent, "remember", content="`VALUE` in app/extra.py is the retry budget.", project=PROJECT)
    sync(kenfold, server, repo.path)
    assert states(server)[("app/extra.py", "VALUE")] == "pending"
    repo.git("checkout", "--", "app/extra.py")

    # The function is deleted and committed: the memory is stale and ranks below a fresh one.
    repo.write(
        "app/billing.py", '"""Billing."""\n\n\ndef refund(amount: int) -> str:\n    return "refunded"\n'
    )
    repo.commit("drop charge_card")
    assert "missing" in sync(kenfold, server, repo.path)
    async with mcp_client(server.url, key=key) as agent:
        found = (await call(agent, "recall", query="charge once per order", project=PROJECT))["memories"]
    ids = [m["id"] for m in found]
    assert ids.index(other["id"]) < ids.index(fact["id"]), "the stale memory ranks lower"
    assert next(m for m in found if m["id"] == fact["id"])["stale"] is True
    assert f"{fact['id']}  charge_card in app/billing.py missing" in server.manage("refs", "status").stdout
    assert fact["id"] in server.manage("memory", "list", "--stale").stdout

    # An older checkout, whose HEAD lacks the anchor commit, says nothing about anchored references.
    before = states(server)
    old = Repo(tmp_path / "old")
    old.git("remote", "add", "origin", "git@github.com:acme/shop.git")
    old.git("fetch", "--quiet", str(repo.path), older)
    old.git("checkout", "--quiet", "FETCH_HEAD")
    sync(kenfold, server, old.path)
    assert states(server) == before


async def test_rest_refuses_what_it_must(server: KenfoldServer) -> None:
    key = server.keys["claude-code"]
    with httpx.Client(base_url=server.base, timeout=10) as http:
        assert http.get("/api/v1/refs", params={"project": PROJECT}).status_code == 401
        bad = http.get("/api/v1/refs", params={"project": PROJECT}, headers={"Authorization": "Bearer kf_x"})
        assert bad.status_code == 401 and bad.json()["error"]
        foreign = http.get("/api/v1/refs", params={"project": PROJECT}, headers={"Host": "evil.example"})
        assert foreign.status_code == 403
        auth = {"Authorization": f"Bearer {key}"}
        assert http.get("/api/v1/refs", headers=auth).status_code == 400
        assert http.get("/api/v1/refs", params={"project": "~/shop"}, headers=auth).status_code == 400
        malformed = http.post("/api/v1/refs/check", content=b"{", headers=auth)
        assert malformed.status_code == 400 and "JSON" in malformed.json()["error"]
        assert http.get("/api/v1/nope", headers=auth).status_code == 404
        reader = server.create_key("reader", "--read-only")
        refused = http.post(
            "/api/v1/refs/check",
            json={"project": PROJECT, "commit": "a" * 40, "results": []},
            headers={"Authorization": f"Bearer {reader}"},
        )
        assert refused.status_code == 403
