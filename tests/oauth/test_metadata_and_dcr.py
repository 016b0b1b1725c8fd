"""Discovery documents (RFC 8414, RFC 9728) and dynamic client registration (RFC 7591), in process."""

import json

import pytest
from django.test import Client
from oauth2_provider.models import get_application_model
from pytest_django.fixtures import Settings

from tests.oauth.conftest import BASE, RESOURCE, register
from tests.oauth.support import REDIRECT

pytestmark = pytest.mark.django_db


def test_nothing_of_oauth_is_mounted_without_a_public_url() -> None:
    client = Client(headers={"host": "localhost"})
    for path in (
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
        "/.well-known/oauth-protected-resource/mcp",
        "/oauth/authorize",
        "/oauth/token",
        "/oauth/register",
    ):
        assert client.get(path).status_code == 404, path


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"]
)
def test_authorization_server_metadata(browser: Client, path: str) -> None:
    response = browser.get(path)
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response.json() == {
        "issuer": BASE,
        "authorization_endpoint": BASE + "/oauth/authorize",
        "token_endpoint": BASE + "/oauth/token",
        "revocation_endpoint": BASE + "/oauth/revoke",
        "registration_endpoint": BASE + "/oauth/register",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["memory:read", "memory:write"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
    }
    assert browser.head(path).status_code == 200
    assert browser.post(path).status_code == 405


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
def test_protected_resource_metadata(browser: Client, path: str) -> None:
    response = browser.get(path)
    assert response.status_code == 200
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [BASE],
        "scopes_supported": ["memory:read", "memory:write"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Kenfold",
    }


def test_dcr_off_leaves_no_registration(oauth: Settings, browser: Client) -> None:
    oauth.OAUTH2_PROVIDER = {**oauth.OAUTH2_PROVIDER, "DCR_ENABLED": False}
    assert "registration_endpoint" not in browser.get("/.well-known/oauth-authorization-server").json()
    assert register(browser).status_code == 404
    assert not get_application_model().objects.exists()


def test_a_client_asking_for_a_secret_gets_a_public_client(browser: Client) -> None:
    # What claude.ai sends: it reads the method from the answer.
    response = register(
        browser,
        token_endpoint_auth_method="client_secret_post",
        grant_types=["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:jwt-bearer"],
        jwks_uri="https://client.example/jwks.json",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["client_id"].startswith("kfd_") and len(body["client_id"]) == 47
    assert body["token_endpoint_auth_method"] == "none"
    assert "client_secret" not in body
    assert body["grant_types"] == ["authorization_code", "refresh_token"]
    assert body["response_types"] == ["code"]
    assert body["redirect_uris"] == [REDIRECT]
    assert body["client_name"] == "Test Client"
    assert isinstance(body["client_id_issued_at"], int)
    assert body["registration_client_uri"].startswith(BASE + "/oauth/register/")
    app = get_application_model().objects.get(client_id=body["client_id"])
    assert app.client_type == "public"


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://client.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["com.example.app:/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://client.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://user:pw@client.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://client.example/" + "a" * 2000]}, "invalid_redirect_uri"),
        ({"redirect_uris": [f"https://client.example/{n}" for n in range(21)]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"response_types": ["token"]}, "invalid_client_metadata"),
        ({"client_name": 7}, "invalid_client_metadata"),
    ],
)
def test_registration_refuses_bad_metadata(browser: Client, metadata: dict, error: str) -> None:
    response = register(browser, **metadata)
    assert response.status_code == 400
    assert response.json()["error"] == error
    assert not get_application_model().objects.exists()


def test_registration_accepts_loopback_http_and_refuses_a_body_that_is_not_an_object(browser: Client) -> None:
    for uri in ("http://localhost:9999/cb", "http://127.0.0.5/cb", "http://[::1]:8080/cb"):
        assert register(browser, redirect_uris=[uri]).status_code == 201, uri
    for body in ("[]", "not json", json.dumps({"x": "y" * 70_000})):
        response = browser.post("/oauth/register", body, content_type="application/json")
        assert response.status_code == 400
        assert response.json()["error"] == "invalid_client_metadata"


def test_registration_cannot_be_updated_to_other_redirect_uris(browser: Client) -> None:
    body = register(browser).json()
    token = body["registration_access_token"]
    path = body["registration_client_uri"].removeprefix(BASE)
    update = browser.put(
        path,
        json.dumps({"client_id": body["client_id"], "redirect_uris": ["http://evil.example/cb"]}),
        content_type="application/json",
        headers={"authorization": f"Bearer {token}"},
    )
    assert update.status_code == 405
    app = get_application_model().objects.get(client_id=body["client_id"])
    assert app.redirect_uris == REDIRECT
