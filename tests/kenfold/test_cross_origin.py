"""The one cross-origin rule (kenfold.net) on each surface that refuses web pages of other origins: the API
(every request), the dashboard's forms and the OAuth consent form (their POSTs). The same table runs on all
three, so a surface that drifts from the others fails here."""

import re

import httpx
import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from access.password import password_set
from edge.asgi import application
from kenfold.net import CROSS_SITE, ORIGIN_ELSEWHERE, ORIGIN_NOT_ALLOWED, cross_origin_refusal
from tests.oauth.support import REDIRECT, authorize_url, consent_form, pkce

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
HOST = "localhost:7077"
OWN = "http://" + HOST

# (the browser's headers, refused?). Agents send neither header; Kenfold's own pages send the first rows.
CASES: list[tuple[dict[str, str], bool]] = [
    ({}, False),
    ({"Sec-Fetch-Site": "same-origin", "Origin": OWN}, False),
    ({"Sec-Fetch-Site": "none"}, False),
    ({"Origin": OWN}, False),
    ({"Sec-Fetch-Site": "cross-site"}, True),
    ({"Sec-Fetch-Site": "same-site"}, True),  # another port or subdomain is another program
    ({"Sec-Fetch-Site": "something-new"}, True),
    ({"Sec-Fetch-Site": "same-origin", "Origin": "https://evil.example"}, True),
    ({"Origin": "https://evil.example"}, True),
    ({"Origin": "null"}, True),  # a sandboxed frame or a file: page
    ({"Origin": "http://localhost:7078"}, True),  # an allowed host, but another origin
    ({"Origin": "ftp://" + HOST}, True),
]
IDS = [" ".join(f"{k}={v}" for k, v in headers.items()) or "no headers" for headers, _ in CASES]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("headers", "refused"), CASES, ids=IDS)
@pytest.mark.anyio
async def test_the_api(settings: Settings, headers: dict[str, str], refused: bool) -> None:
    settings.AUTH_MODE = "none"  # the rule comes before the key: no key is needed to see it
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=application), base_url=OWN) as api:
        response = await api.get("/api/v1/openapi.json", headers=headers)
    assert response.status_code == (403 if refused else 200)
    if refused:
        assert response.json()["error"].startswith("forbidden: ")
        assert "evil.example" not in response.text  # the refused value is never repeated


@pytest.mark.parametrize(("headers", "refused"), CASES, ids=IDS)
def test_the_dashboard_forms(headers: dict[str, str], refused: bool) -> None:
    password_set(password=PASSWORD)
    browser = Client(headers={"host": HOST})
    answer = browser.post("/dashboard/login", {"password": PASSWORD, "next": "/dashboard/"}, headers=headers)
    assert answer.status_code == (403 if refused else 303)
    assert ("kenfold_dashboard" in answer.cookies) is not refused


@pytest.mark.parametrize(("headers", "refused"), CASES, ids=IDS)
def test_the_oauth_consent_form(settings: Settings, headers: dict[str, str], refused: bool) -> None:
    settings.PUBLIC_URL = OWN
    settings.MCP_RESOURCE = OWN + "/mcp"
    settings.CSRF_TRUSTED_ORIGINS = [OWN]
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "OIDC_ISS_ENDPOINT": OWN, "DCR_ENABLED": True}
    settings.ROOT_URLCONF = "tests.oauth.urls"
    password_set(password=PASSWORD)
    browser = Client(headers={"host": HOST}, enforce_csrf_checks=True)
    registered = browser.post(
        "/oauth/register", {"redirect_uris": [REDIRECT]}, content_type="application/json"
    ).json()
    _verifier, challenge = pkce()
    url = authorize_url(
        "", client_id=registered["client_id"], challenge=challenge, state="st4te", resource=OWN + "/mcp"
    )
    form = consent_form(browser.get(url).content.decode())
    # Denying writes nothing, so the same form can be posted once per case.
    answer = browser.post("/oauth/authorize", form | {"decision": "deny"}, headers=headers)
    assert answer.status_code == (403 if refused else 302)
    if not refused:
        assert re.search(r"[?&]error=access_denied", answer["Location"])


def test_the_api_says_which_rule_refused() -> None:
    def refusal(**headers: str | None) -> str | None:
        return cross_origin_refusal(
            sec_fetch_site=headers.get("site"), origin=headers.get("origin"), host=HOST
        )

    assert refusal(site="cross-site") == CROSS_SITE
    assert refusal(origin="https://evil.example") == ORIGIN_NOT_ALLOWED
    assert refusal(origin="http://localhost:7078") == ORIGIN_ELSEWHERE
    assert "KENFOLD_ALLOWED_HOSTS" in ORIGIN_NOT_ALLOWED
