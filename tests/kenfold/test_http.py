"""Health endpoints and the Host allowlist, in process."""

import pytest
from django.conf import settings
from django.test import Client

from edge.http_guard import HOST_FORBIDDEN

pytestmark = pytest.mark.django_db


def test_health_endpoints_answer_any_host() -> None:
    client = Client(headers={"host": "kenfold.internal"})
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


@pytest.mark.parametrize("host", ["evil.example", "localhost:80.evil.example", "127.0.0.1.nip.io", ""])
def test_foreign_hosts_are_refused(host: str) -> None:
    response = Client(headers={"host": host}).get("/anything")
    assert response.status_code == 403
    assert response.json() == {"error": HOST_FORBIDDEN}
    assert "KENFOLD_ALLOWED_HOSTS" in HOST_FORBIDDEN


@pytest.mark.parametrize("host", ["localhost", "localhost:7077", "127.0.0.1:7077", "[::1]:7077"])
def test_allowed_hosts_pass_the_guard(host: str) -> None:
    assert Client(headers={"host": host}).get("/no-such-page").status_code == 404


def test_health_rejects_writes() -> None:
    assert Client().post("/healthz").status_code == 405


def test_the_front_page_says_where_everything_is_without_auth_or_secrets() -> None:
    response = Client(headers={"host": "localhost:7077"}).get("/")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    for where in ("http://localhost:7077/mcp", 'href="/dashboard/"', "/api/v1/docs", "Authorization: Bearer"):
        assert where in page
    assert "kf_" not in page and settings.SECRET_KEY not in page


def test_the_front_page_is_behind_the_host_allowlist_like_everything_else() -> None:
    response = Client(headers={"host": "evil.example"}).get("/")
    assert (response.status_code, response.json()) == (403, {"error": HOST_FORBIDDEN})
