"""The references REST API through the real ASGI stack: guard, routing, validation, error shapes."""

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from access.caller import Caller
from access.keys import api_key_create
from edge.asgi import application
from edge.http_guard import HOST_FORBIDDEN
from memories.services.remember import memory_remember

# The guard looks keys up on its own connection, so test data must be committed.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.anyio]

REPO = "github.com/kenfold/kenfold"
COMMIT = "c" * 40
_TOKEN = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _setup() -> dict[str, str]:
    try:
        _, writer = api_key_create(agent="refs-sync")
        _, reader = api_key_create(agent="search-only", read_only=True)
        memory_remember(
            caller=Caller(agent="claude-code"),
            content="`RequireAPIKey` in internal/auth/middleware.go.",
            project=REPO,
        )
        return {"writer": writer, "reader": reader}
    finally:
        connection.close()  # this worker thread's connection would otherwise outlive the test database


@pytest.fixture
async def keys() -> dict[str, str]:
    return await sync_to_async(_setup)()


@pytest.fixture
async def client(keys: dict[str, str]) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application),
        base_url="http://localhost:7077",
        headers={"Authorization": f"Bearer {keys['writer']}"},
    ) as http:
        yield http


async def test_targets_and_check_round_trip(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/refs", params={"project": "https://github.com/Kenfold/Kenfold.git"})
    assert response.status_code == 200
    body = response.json()
    assert body["scope"] == f"project:{REPO}"
    assert {(t["path"], t["symbol"], t["anchor_commit"]) for t in body["targets"]} == {
        ("internal/auth/middleware.go", "", None),
        ("internal/auth/middleware.go", "RequireAPIKey", None),
    }
    results = [
        {"path": t["path"], "symbol": t["symbol"], "found": True, "hash": "h" + t["symbol"]}
        for t in body["targets"]
    ]
    response = await client.post(
        "/api/v1/refs/check", json={"project": REPO, "commit": COMMIT, "results": results}
    )
    assert response.status_code == 200
    assert response.json() == {
        "updated": 2,
        "anchored": 2,
        "unmatched": 0,
        "states": {"pending": 0, "current": 2, "changed": 0, "missing": 0, "unresolved": 0},
    }
    head = await client.head("/api/v1/refs", params={"project": REPO})
    assert head.status_code == 200


async def test_authentication_is_required(client: httpx.AsyncClient) -> None:
    for headers in (
        {"Authorization": ""},
        {"Authorization": "Bearer kf_nope"},
        {"Authorization": "Bearer kf_" + "A" * 43},
    ):
        response = await client.get("/api/v1/refs", params={"project": REPO}, headers=headers)
        assert response.status_code == 401
        assert response.json()["error"]
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


async def test_host_and_cross_origin_protection(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/refs", params={"project": REPO}, headers={"Host": "evil.example"})
    assert (response.status_code, response.json()) == (403, {"error": HOST_FORBIDDEN})
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
        response = await client.post("/api/v1/refs/check", content=b"{}", headers=headers)
        assert response.status_code == 403 and "forbidden" in response.json()["error"]


async def test_read_only_key_cannot_report(client: httpx.AsyncClient, keys: dict[str, str]) -> None:
    headers = {"Authorization": f"Bearer {keys['reader']}"}
    assert (await client.get("/api/v1/refs", params={"project": REPO}, headers=headers)).status_code == 200
    response = await client.post(
        "/api/v1/refs/check", json={"project": REPO, "commit": COMMIT, "results": []}, headers=headers
    )
    assert response.status_code == 403 and "read-only" in response.json()["error"]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({}, "project is required"),
        ({"project": "/home/me/repo"}, "local path"),
        ({"project": ""}, "project is required"),
    ],
)
async def test_targets_need_a_real_project(client: httpx.AsyncClient, params: dict, message: str) -> None:
    response = await client.get("/api/v1/refs", params=params)
    assert response.status_code == 400 and message in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "not one JSON object"),
        (b'{"project": "x", "commit": "abcdef1", "results": []} {}', "Extra data"),
        (b"[1, 2]", "must be a JSON object"),
        (
            json.dumps({"project": REPO, "commit": COMMIT, "results": [], "extra": 1}).encode(),
            "extra: Extra inputs",
        ),
        (json.dumps({"project": REPO, "results": []}).encode(), "commit: Field required"),
        (json.dumps({"project": REPO, "commit": "nothex!", "results": []}).encode(), "commit must be"),
        (
            json.dumps(
                {"project": REPO, "commit": COMMIT, "results": [{"path": "a.go", "found": True}] * 1001}
            ).encode(),
            "at most 1000",
        ),
        (
            json.dumps(
                {"project": REPO, "commit": COMMIT, "results": [{"path": "a.go", "found": "yes"}]}
            ).encode(),
            "results.0.found",
        ),
        # PostgreSQL cannot store a NUL: refused as input, never a 500 (schemathesis found it).
        (
            json.dumps(
                {
                    "project": REPO,
                    "commit": COMMIT,
                    "results": [{"path": "a.go", "found": True, "hash": "ab\x00c"}],
                }
            ).encode(),
            "results[0].hash contains a control character",
        ),
    ],
)
async def test_malformed_reports_get_a_clear_400(
    client: httpx.AsyncClient, body: bytes, message: str
) -> None:
    response = await client.post(
        "/api/v1/refs/check", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert message in response.json()["error"]


async def test_oversized_body_is_refused(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/v1/refs/check", content=b" " * (1024 * 1024 + 1))
    assert response.status_code == 413 and "1 MiB" in response.json()["error"]


async def test_unknown_paths_and_wrong_methods(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/nowhere")
    assert response.status_code == 404 and "no such endpoint" in response.json()["error"]
    response = await client.delete("/api/v1/refs", params={"project": REPO})
    assert response.status_code == 405
    assert set(response.headers["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}
    assert "not allowed" in response.json()["error"]


async def test_openapi_document_and_docs_page(
    client: httpx.AsyncClient, recwarn: pytest.WarningsRecorder
) -> None:
    spec = (await client.get("/api/v1/openapi.json")).json()
    assert {"/api/v1/refs", "/api/v1/refs/check"} <= set(spec["paths"])
    # A generated client needs these to call the API at all: the bearer scheme, the required project,
    # the body of a check, and the error statuses with their shape (tests/kenfold/test_openapi.py
    # checks the server keeps to all of it).
    (scheme,) = spec["components"]["securitySchemes"].values()
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")
    targets, report = spec["paths"]["/api/v1/refs"]["get"], spec["paths"]["/api/v1/refs/check"]["post"]
    assert [(p["name"], p["required"]) for p in targets["parameters"]] == [("project", True)]
    body = report["requestBody"]["content"]["application/json"]["schema"]
    assert report["requestBody"]["required"] and body["required"] == ["project", "commit", "results"]
    assert body["properties"]["results"]["items"]["required"] == ["found"]
    assert set(targets["responses"]) == {"200", "400", "401", "403", "503"}
    assert set(report["responses"]) == {"200", "400", "401", "403", "408", "413", "429", "503"}
    assert report["responses"]["503"]["headers"]["Retry-After"]["required"]
    # A refs check is a write: over the credential's quota it gets 429 with the time to the reset.
    assert report["responses"]["429"]["headers"]["Retry-After"]["required"]
    assert spec["components"]["schemas"]["ErrorOutput"]["required"] == ["error"]
    docs = await client.get("/api/v1/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    css = await client.get("/static/ninja/swagger-ui.css")
    assert css.status_code == 200 and "max-age=3600" in css.headers["Cache-Control"]
    assert css.headers["Content-Type"].startswith("text/css")
    assert int(css.headers["Content-Length"]) == len(css.content) > 0
    again = await client.get(
        "/static/ninja/swagger-ui.css", headers={"If-Modified-Since": css.headers["Last-Modified"]}
    )
    assert again.status_code == 304
    assert (await client.get("/static/ninja/no-such-file.css")).status_code == 404
    # Read whole by the view: Django's ASGI handler has no file iterator to warn about.
    assert not [w for w in recwarn if "StreamingHttpResponse" in str(w.message)]


async def test_errors_name_the_field_never_the_value(client: httpx.AsyncClient) -> None:
    token = "ghp_" + "Zq8Xk2Lm4Np6Rs1Tv3Wx5Yz7Ab9Cd0Ef2Gh4"
    response = await client.get("/api/v1/refs", params={"project": f"/home/me/{token}/repo"})
    assert response.status_code == 400
    assert "project is a local path" in response.text and token[4:12] not in response.text

    bad_results = [
        {"path": f"/etc/{token}", "found": False},
        {"symbol": f"not an identifier {token}", "found": False},
    ]
    for index, result in enumerate(bad_results):
        response = await client.post(
            "/api/v1/refs/check", json={"project": REPO, "commit": COMMIT, "results": [result]}
        )
        assert response.status_code == 400
        assert f"results[0].{['path', 'symbol'][index]} is not" in response.text
        assert token[4:12] not in response.text


@pytest.mark.parametrize(
    ("result", "field"),
    [
        ({"path": f"src/{_TOKEN}.go", "found": False}, "path"),
        ({"symbol": _TOKEN, "found": False}, "symbol"),
        (
            {
                "path": "internal/auth/middleware.go",
                "found": True,
                "hash": "h",
                "resolved_path": f"{_TOKEN}.go",
            },
            "resolved_path",
        ),
        ({"path": "internal/auth/middleware.go", "found": True, "hash": _TOKEN}, "hash"),
    ],
)
async def test_reports_holding_a_credential_are_refused(
    client: httpx.AsyncClient, result: dict, field: str
) -> None:
    """A report's resolved path and hash are stored on the references (and exported), its path and symbol
    pick them: each is scanned (issue 37, item 2), and nothing of the report is applied."""
    response = await client.post(
        "/api/v1/refs/check", json={"project": REPO, "commit": COMMIT, "results": [result]}
    )
    assert response.status_code == 400
    assert response.json()["error"].startswith(
        f"results[0].{field} appears to contain a GitHub token. Credentials must never be stored"
    )
    assert _TOKEN[4:14] not in response.text
    targets = (await client.get("/api/v1/refs", params={"project": REPO})).json()["targets"]
    assert all(target["anchor_commit"] is None for target in targets)
