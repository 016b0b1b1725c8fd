"""In-process OAuth: the settings a server with KENFOLD_PUBLIC_URL=http://localhost has, and the steps of
the authorization-code flow through Django's test client."""

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from access.password import password_set
from tests.oauth.support import PASSWORD, REDIRECT, authorize_url, consent_form, pkce

BASE = "http://localhost"
RESOURCE = BASE + "/mcp"


@pytest.fixture
def oauth(settings: Settings, db: None) -> Settings:
    settings.PUBLIC_URL = BASE
    settings.MCP_RESOURCE = RESOURCE
    settings.CSRF_TRUSTED_ORIGINS = [BASE]
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "OIDC_ISS_ENDPOINT": BASE,
        "DCR_ENABLED": True,
        "CIMD_ENABLED": True,
    }
    settings.ROOT_URLCONF = "tests.oauth.urls"
    return settings


@pytest.fixture
def browser(oauth: Settings) -> Client:
    return Client(headers={"host": "localhost"})


@pytest.fixture
def owner_password(oauth: Settings) -> str:
    password_set(password=PASSWORD)
    return PASSWORD


def query_of(location: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def register(client: Client, **metadata: Any) -> Any:
    body = {"client_name": "Test Client", "redirect_uris": [REDIRECT]} | metadata
    return client.post("/oauth/register", body, content_type="application/json")


@pytest.fixture
def client_id(browser: Client) -> str:
    response = register(browser)
    assert response.status_code == 201, response.content
    return response.json()["client_id"]


@dataclass
class Flow:
    browser: Client
    client_id: str

    def authorize_url(self, challenge: str, **params: str) -> str:
        merged = {
            "client_id": self.client_id,
            "state": "st4te",
            "scope": "memory:read memory:write",
            "resource": RESOURCE,
        } | params
        client_id = merged.pop("client_id")
        return authorize_url("", client_id=client_id, challenge=challenge, **merged)

    def consent(
        self,
        url: str,
        *,
        decision: str = "approve",
        access: str = "read",
        agent: str = "remote-agent",
        password: str = PASSWORD,
        client: Client | None = None,
    ) -> Any:
        page = self.browser.get(url)
        assert page.status_code == 200, page.content
        form = consent_form(page.content.decode())
        return (client or self.browser).post(
            "/oauth/authorize",
            form | {"decision": decision, "access": access, "agent": agent, "password": password},
        )

    def code(self, *, access: str = "read", agent: str = "remote-agent", **params: str) -> tuple[str, str]:
        verifier, challenge = pkce()
        answer = self.consent(self.authorize_url(challenge, **params), access=access, agent=agent)
        assert answer.status_code == 302, answer.content
        return query_of(answer["Location"])["code"], verifier

    def redeem(self, code: str, verifier: str, **extra: str) -> Any:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "code_verifier": verifier,
            "redirect_uri": REDIRECT,
            "client_id": self.client_id,
            "resource": RESOURCE,
        } | extra
        return self.browser.post("/oauth/token", {k: v for k, v in data.items() if v is not None})

    def tokens(self, *, access: str = "read", agent: str = "remote-agent") -> dict[str, Any]:
        code, verifier = self.code(access=access, agent=agent)
        response = self.redeem(code, verifier)
        assert response.status_code == 200, response.content
        return response.json()

    def refresh(self, refresh_token: str, **extra: str) -> Any:
        data = {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": self.client_id,
        } | extra
        return self.browser.post("/oauth/token", data)


@pytest.fixture
def flow(browser: Client, client_id: str, owner_password: str) -> Flow:
    return Flow(browser=browser, client_id=client_id)
