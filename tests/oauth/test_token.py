"""The token and revocation endpoints, and the resource check (spec §1.16 "Token endpoint", "Revocation",
"Verify", and the OAuth-security scenarios of §2), in process."""

import logging

import pytest
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from pytest_django.fixtures import Settings

from kenfold_common.errors import AuthenticationFailed
from oauth.models import OAuthGrant
from oauth.resource import verify_access_token
from tests.oauth.conftest import RESOURCE, Flow, pkce, query_of

pytestmark = pytest.mark.django_db


def _alive(token: str) -> bool:
    try:
        verify_access_token(token=token)
    except AuthenticationFailed:
        return False
    return True


def test_a_code_becomes_bound_tokens(flow: Flow) -> None:
    code, verifier = flow.code(access="write", agent="chatgpt")
    response = flow.redeem(code, verifier)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store" and response["Pragma"] == "no-cache"
    body = response.json()
    assert body["access_token"].startswith("kfa_") and body["refresh_token"].startswith("kfr_")
    assert (body["token_type"], body["expires_in"], body["scope"]) == (
        "Bearer",
        3600,
        "memory:read memory:write",
    )
    info = verify_access_token(token=body["access_token"])
    assert (info.agent, info.read_only) == ("chatgpt", False)
    access = get_access_token_model().objects.get(scope__startswith="memory")
    assert access.resource == [RESOURCE]
    # Stored as SHA-256 only.
    assert access.token == "" and get_refresh_token_model().objects.get(access_token=access).token == ""


def test_a_wrong_verifier_or_binding_neither_consumes_nor_revokes(flow: Flow) -> None:
    code, verifier = flow.code()
    other_verifier, _ = pkce()
    for extra in (
        {"code_verifier": other_verifier},
        {"code_verifier": None},
        {"redirect_uri": "http://127.0.0.1:33418/other"},
        {"client_id": "kfd_someone_else"},
    ):
        refused = flow.redeem(code, verifier, **extra)
        assert refused.status_code in (400, 401), extra
        assert refused.json()["error"] in ("invalid_grant", "invalid_client", "invalid_request"), (
            refused.json()
        )
    assert OAuthGrant.objects.get().revoked_at is None
    assert flow.redeem(code, verifier).status_code == 200


def test_a_replayed_code_revokes_the_grant_only_with_proof(
    flow: Flow, caplog: pytest.LogCaptureFixture
) -> None:
    code, verifier = flow.code()
    first = flow.redeem(code, verifier).json()
    # A stolen code without its verifier revokes nothing.
    wrong_verifier, _ = pkce()
    assert flow.redeem(code, wrong_verifier).json()["error"] == "invalid_grant"
    assert _alive(first["access_token"])
    with caplog.at_level(logging.WARNING, logger="kenfold.security"):
        replay = flow.redeem(code, verifier)
    assert replay.status_code == 400
    assert replay.json() == {
        "error": "invalid_grant",
        "error_description": "authorization code already used; the grant was revoked",
    }
    assert not _alive(first["access_token"])
    assert flow.refresh(first["refresh_token"]).status_code == 400
    assert OAuthGrant.objects.get().revoke_reason == "authorization code already used"
    assert any(getattr(r, "event", "") == "replay" for r in caplog.records)


def test_a_foreign_resource_at_the_token_endpoint_is_invalid_target(flow: Flow) -> None:
    code, verifier = flow.code()
    refused = flow.redeem(code, verifier, resource="https://other.example/mcp")
    assert refused.json()["error"] == "invalid_target"
    assert flow.redeem(code, verifier).status_code == 200


def test_other_grants_and_client_secrets_are_refused(flow: Flow) -> None:
    password_grant = flow.browser.post(
        "/oauth/token",
        {"grant_type": "password", "username": "u", "password": "p", "client_id": flow.client_id},
    )
    assert password_grant.json()["error"] == "unsupported_grant_type"
    basic = flow.browser.post(
        "/oauth/token",
        {"grant_type": "authorization_code", "code": "x"},
        headers={"authorization": "Basic dXNlcjpwYXNz"},
    )
    assert basic.status_code == 401
    assert basic.json()["error"] == "invalid_client"
    assert "client secrets" in basic.json()["error_description"]
    secret = flow.browser.post(
        "/oauth/token", {"grant_type": "refresh_token", "client_secret": "s", "client_id": "x"}
    )
    assert secret.status_code == 401


def test_refresh_rotates_and_a_replayed_refresh_token_ends_the_grant(flow: Flow) -> None:
    first = flow.tokens(access="write")
    second = flow.refresh(first["refresh_token"])
    assert second.status_code == 200
    second = second.json()
    assert second["refresh_token"] != first["refresh_token"] and second["scope"] == "memory:read memory:write"
    assert not _alive(first["access_token"]) and _alive(second["access_token"])
    replay = flow.refresh(first["refresh_token"])
    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    assert "authorize again" in replay.json()["error_description"]
    assert not _alive(second["access_token"])
    assert flow.refresh(second["refresh_token"]).status_code == 400
    assert OAuthGrant.objects.get().revoke_reason == "refresh token reused"


def test_refresh_may_narrow_the_scope_and_the_narrowing_sticks(flow: Flow) -> None:
    first = flow.tokens(access="write")
    too_wide = flow.refresh(first["refresh_token"], scope="memory:read memory:admin")
    assert too_wide.json()["error"] == "invalid_scope"
    narrowed = flow.refresh(first["refresh_token"], scope="memory:read").json()
    assert narrowed["scope"] == "memory:read"
    assert verify_access_token(token=narrowed["access_token"]).read_only
    again = flow.refresh(narrowed["refresh_token"]).json()
    assert again["scope"] == "memory:read"


def test_refresh_by_another_client_is_refused(flow: Flow) -> None:
    from tests.oauth.conftest import register

    tokens = flow.tokens()
    other = register(flow.browser).json()["client_id"]
    refused = flow.refresh(tokens["refresh_token"], client_id=other)
    assert refused.status_code in (400, 401)
    assert flow.refresh(tokens["refresh_token"]).status_code == 200


def test_revoking_an_access_token_or_a_refresh_token(flow: Flow) -> None:
    tokens = flow.tokens()
    answer = flow.browser.post(
        "/oauth/revoke", {"token": tokens["access_token"], "client_id": flow.client_id}
    )
    assert answer.status_code == 200
    assert not _alive(tokens["access_token"])
    assert (
        flow.browser.post("/oauth/revoke", {"token": "kfa_unknown", "client_id": flow.client_id}).status_code
        == 200
    )

    tokens = flow.tokens()
    answer = flow.browser.post(
        "/oauth/revoke", {"token": tokens["refresh_token"], "client_id": flow.client_id}
    )
    assert answer.status_code == 200
    assert not _alive(tokens["access_token"])
    assert flow.refresh(tokens["refresh_token"]).status_code == 400


def test_changing_the_public_url_invalidates_every_token(flow: Flow, oauth: Settings) -> None:
    tokens = flow.tokens()
    assert _alive(tokens["access_token"])
    oauth.MCP_RESOURCE = "https://memory.example.org/mcp"
    assert not _alive(tokens["access_token"])


def test_a_new_consent_replaces_the_clients_older_grant(flow: Flow) -> None:
    read = flow.tokens(access="read")
    write = flow.tokens(access="write")
    assert not _alive(read["access_token"]) and _alive(write["access_token"])
    assert OAuthGrant.objects.filter(revoked_at__isnull=True).count() == 1


def test_an_expired_code_is_refused(flow: Flow) -> None:
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import get_grant_model

    code, verifier = flow.code()
    get_grant_model().objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert flow.redeem(code, verifier).json()["error"] == "invalid_grant"


def test_the_state_round_trips_unchanged(flow: Flow) -> None:
    _verifier, challenge = pkce()
    answer = flow.consent(flow.authorize_url(challenge, state="ä ö & = ?"))
    assert query_of(answer["Location"])["state"] == "ä ö & = ?"


@pytest.mark.django_db(transaction=True)
def test_an_issuance_failure_leaves_the_code_unused(flow: Flow) -> None:
    """The redemption claim and the token rows commit together: when the database refuses the token row,
    the code can still be redeemed afterwards (a trigger stands in for the failing write)."""
    from django.db import connection

    code, verifier = flow.code()
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION refuse_tokens() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'token storage unavailable'; END $$"
        )
        cursor.execute(
            "CREATE TRIGGER refuse_tokens BEFORE INSERT ON oauth2_provider_accesstoken "
            "FOR EACH ROW EXECUTE FUNCTION refuse_tokens()"
        )
    try:
        flow.browser.raise_request_exception = False
        failed = flow.redeem(code, verifier)
        assert failed.status_code == 500
    finally:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_tokens ON oauth2_provider_accesstoken")
            cursor.execute("DROP FUNCTION refuse_tokens()")
    grant = OAuthGrant.objects.get()
    assert grant.code_redeemed_at is None and grant.revoked_at is None
    assert flow.redeem(code, verifier).status_code == 200
