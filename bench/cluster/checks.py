"""What must hold whichever server answers (issue 40, item 2), checked through HAProxy, which sends each
request to the next server in turn: identical remembers deduplicated across servers, the OAuth flow's
steps, a dashboard session, the password lockout and delta-context state spread over every server."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections import Counter
from contextlib import AsyncExitStack
from typing import Any

import httpx

from bench.cluster.cluster import Cluster
from bench.support.mcp import call, mcp_client
from bench.support.oauth import REDIRECT, authorize_url, consent_form, owner_decides, pkce

PROJECT = "github.com/bench/cluster-checks"


async def identical_remembers(cluster: Cluster, key: str, clients: int = 64) -> dict[str, Any]:
    """`clients` sessions send the same remember at once: one row, every answer names it."""
    content = f"Cluster check {secrets.token_hex(4)}: releases are tagged from main after CI passes"
    async with AsyncExitStack() as stack:
        opened = [
            await stack.enter_async_context(
                mcp_client(cluster.url + "/mcp", key=key, client_name=f"check-{n}")
            )
            for n in range(clients)
        ]
        answers = await asyncio.gather(
            *(call(client, "remember", content=content, project=PROJECT) for client in opened)
        )
    with cluster.superuser() as conn:
        rows = conn.execute("SELECT count(*) FROM memory WHERE content = %s", [content]).fetchone()[0]
    ids = Counter(answer["id"] for answer in answers)
    return {"calls": clients, "rows": rows, "distinct_ids": len(ids), "ok": rows == 1 and len(ids) == 1}


def oauth_flow(cluster: Cluster) -> dict[str, Any]:
    """Register, authorize (page and the owner's answer), redeem, call a tool, then replay the code: each
    request goes to the next server, so no step meets the server of the step before."""
    with httpx.Client(timeout=60) as http:
        client_id = http.post(
            cluster.url + "/oauth/register",
            json={"client_name": "Cluster client", "redirect_uris": [REDIRECT]},
        ).json()["client_id"]
        verifier, challenge = pkce()
        url = authorize_url(
            cluster.url, client_id=client_id, challenge=challenge, scope="memory:read memory:write", state="s"
        )
        answer = owner_decides(url, access="write", agent="cluster-agent", password=cluster.owner_password)
        if answer.status != 302:
            return {"ok": False, "consent_status": answer.status}
        redeem = {
            "grant_type": "authorization_code",
            "code": answer.query["code"][0],
            "code_verifier": verifier,
            "redirect_uri": REDIRECT,
            "client_id": client_id,
        }
        tokens = http.post(cluster.url + "/oauth/token", data=redeem)
        if tokens.status_code != 200:
            return {"ok": False, "token_status": tokens.status_code}
        headers = {
            "authorization": f"Bearer {tokens.json()['access_token']}",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": "2025-11-25",
        }
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "recall", "arguments": {"query": "releases", "project": PROJECT}},
        }
        calls = [http.post(cluster.url + "/mcp", json=body, headers=headers).status_code for _ in range(3)]
        # The replayed code revokes the grant on every server.
        replay = http.post(cluster.url + "/oauth/token", data=redeem).json().get("error")
        after = [http.post(cluster.url + "/mcp", json=body, headers=headers).status_code for _ in range(3)]
    ok = calls == [200] * 3 and replay == "invalid_grant" and after == [401] * 3
    return {"ok": ok, "tool_calls": calls, "replay": replay, "after_replay": after}


def _dashboard_login(browser: httpx.Client, base: str, password: str) -> httpx.Response:
    page = browser.get(base + "/dashboard/login")
    form = consent_form(page.text)
    return browser.post(
        base + "/dashboard/login",
        data=form | {"password": password, "next": "/dashboard/"},
        headers={"Origin": base, "Referer": base + "/dashboard/login"},
    )


def dashboard_session(cluster: Cluster) -> dict[str, Any]:
    """Log in once, then open the dashboard six times: two visits to each server, all signed in."""
    with httpx.Client(timeout=60) as browser:
        login = _dashboard_login(browser, cluster.url, cluster.owner_password)
        pages = [browser.get(cluster.url + "/dashboard/memories").status_code for _ in range(6)]
    return {"ok": login.status_code == 303 and pages == [200] * 6, "login": login.status_code, "pages": pages}


def lockout(cluster: Cluster) -> dict[str, Any]:
    """Wrong passwords sent to the servers in turn lock the dashboard on all of them; then the owner's
    `manage.py password` clears it (wherever it runs)."""
    statuses = []
    with httpx.Client(timeout=60) as browser:
        for _ in range(5):
            statuses.append(_dashboard_login(browser, cluster.url, "not the password").status_code)
        locked = [
            _dashboard_login(browser, cluster.url, cluster.owner_password).status_code for _ in range(3)
        ]
    cluster.manage("password", "--stdin", stdin=cluster.owner_password + "\n")
    with httpx.Client(timeout=60) as browser:
        cleared = _dashboard_login(browser, cluster.url, cluster.owner_password).status_code
    ok = all(s in (401, 403) for s in statuses[:4]) and locked == [429] * 3 and cleared == 303
    return {"ok": ok, "wrong": statuses, "right_while_locked": locked, "after_reset": cleared}


async def delta_context(cluster: Cluster, key: str) -> dict[str, Any]:
    """A get_context state made by one server is understood by the others: later calls send references."""
    async with mcp_client(cluster.url + "/mcp", key=key, client_name="check-delta") as client:
        await call(
            client, "remember", content="Cluster delta: the API is versioned by URL path", project=PROJECT
        )
        first = await call(client, "get_context", task="versioning the API", project=PROJECT)
        state, removed = first.get("state"), []
        for _ in range(3):
            later = await call(client, "get_context", task="versioning the API", project=PROJECT, state=state)
            removed.append(later.get("removed"))
            state = later.get("state")
    return {"ok": bool(first.get("state")) and removed == [[]] * 3, "removed": removed}


def servers_answering(log: str, since_line: int) -> Counter:
    """Requests per web server in HAProxy's log after line `since_line` (log-format "%ST %s %HM %HU ...")."""
    counts: Counter = Counter()
    for line in log.splitlines()[since_line:]:
        match = re.match(r"^(\d{3}) (web/)?(web-\d+)", line)
        if match:
            counts[match.group(3)] += 1
    return counts


def run_checks(cluster: Cluster) -> dict[str, Any]:
    key = cluster.keys[-1]
    log = cluster.supervisor.services["haproxy"]
    start = len(log.output().splitlines())
    results = {"identical_remembers": asyncio.run(identical_remembers(cluster, key))}
    results["identical_remembers"]["servers"] = dict(servers_answering(log.output(), start))
    results["oauth"] = oauth_flow(cluster)
    results["dashboard_session"] = dashboard_session(cluster)
    results["lockout"] = lockout(cluster)
    results["delta_context"] = asyncio.run(delta_context(cluster, key))
    results["servers_answering"] = dict(servers_answering(log.output(), start))
    results["ok"] = all(
        value["ok"] for value in results.values() if isinstance(value, dict) and "ok" in value
    )
    return results
