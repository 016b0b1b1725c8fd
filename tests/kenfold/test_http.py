"""Health endpoints and the Host allowlist, in process."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_health_endpoints_answer_any_host() -> None:
    client = Client(headers={"host": "kenfold.internal"})
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ready"}


@pytest.mark.parametrize("host", ["evil.example", "localhost:80.evil.example", "127.0.0.1.nip.io", ""])
def test_foreign_hosts_are_refused(host: str) -> None:
    response = Client(headers={"host": host}).get("/anything")
    assert response.status_code == 403
    assert response.json() == {"error": "forbidden: host not allowed"}


@pytest.mark.parametrize("host", ["localhost", "localhost:7077", "127.0.0.1:7077", "[::1]:7077"])
def test_allowed_hosts_pass_the_guard(host: str) -> None:
    assert Client(headers={"host": host}).get("/no-such-page").status_code == 404


def test_health_rejects_writes() -> None:
    assert Client().post("/healthz").status_code == 405
