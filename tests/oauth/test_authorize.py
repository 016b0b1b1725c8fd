"""The authorization endpoint and the consent page (spec §1.16 "Authorize GET", "Consent page", "Consent
POST"), in process: what is refused before the page, what the page shows, what the owner's POST may do."""

import logging

import pytest
from django.test import Client
from oauth2_provider.models import get_grant_model

from access.caller import Caller
from access.keys import api_key_create
from access.models import Owner
from memories.services.remember import memory_remember
from oauth.models import OAuthGrant
from oauth.views.consent import redirect_source
from tests.oauth.conftest import BASE, Flow, pkce, query_of
from tests.oauth.support import PASSWORD, consent_form

pytestmark = pytest.mark.django_db


def _no_grant_written() -> None:
    assert not OAuthGrant.objects.exists()
    assert not get_grant_model().objects.exists()


def test_unknown_client_or_unregistered_redirect_is_never_followed(flow: Flow) -> None:
    _verifier, challenge = pkce()
    for url in (
        flow.authorize_url(challenge, client_id="kfd_unknown"),
        flow.authorize_url(challenge, redirect_uri="https://attacker.example/cb"),
        "/oauth/authorize?response_type=code",
    ):
        response = flow.browser.get(url)
        assert response.status_code == 400
        assert "Location" not in response
        assert response["Content-Type"].startswith("text/plain")
        assert "attacker.example" not in response.content.decode()
    _no_grant_written()


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"code_challenge": None, "code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"resource": "https://other.example/mcp"}, "invalid_target"),
        ({"state": "s" * 1025}, "invalid_request"),
    ],
)
def test_bad_requests_redirect_with_an_error_and_iss_before_the_consent_page(
    flow: Flow, params: dict, error: str
) -> None:
    _verifier, challenge = pkce()
    response = flow.browser.get(flow.authorize_url(challenge, **params))
    assert response.status_code == 302
    assert response["Location"].startswith("http://127.0.0.1:33418/callback?")
    query = query_of(response["Location"])
    assert query["error"] == error
    assert query["iss"] == BASE
    _no_grant_written()


def test_resource_spellings_of_our_own_resource_are_accepted(flow: Flow) -> None:
    _verifier, challenge = pkce()
    for resource in ("http://LOCALHOST/mcp/", "http://localhost:80/mcp"):
        assert flow.browser.get(flow.authorize_url(challenge, resource=resource)).status_code == 200


def test_the_consent_page_shows_who_asks_and_offers_read_first(flow: Flow) -> None:
    _verifier, challenge = pkce()
    response = flow.browser.get(flow.authorize_url(challenge))
    page = response.content.decode()
    assert response.status_code == 200
    assert "Test Client" in page and flow.client_id in page and "127.0.0.1" in page
    assert 'value="read" checked' in page and 'value="write"' in page
    assert 'name="agent" value="test-client"' in page
    assert "returns to a program on the machine" in page  # loopback redirect warning
    # The form's answer is a redirect to the client: form-action names its origin, or browsers stop it.
    assert response["Content-Security-Policy"] == (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http://127.0.0.1:33418; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    assert response["X-Frame-Options"] == "DENY"
    # same-origin, not no-referrer: under no-referrer browsers post the form with `Origin: null` (issue 35).
    assert response["Referrer-Policy"] == "same-origin"
    assert "no-store" in response["Cache-Control"]
    assert "<script" not in page


@pytest.mark.parametrize(
    ("redirect_uri", "source"),
    [
        ("https://claude.ai/api/mcp/auth_callback", "https://claude.ai"),
        ("https://chatgpt.com:8443/connector/oauth", "https://chatgpt.com:8443"),
        ("http://localhost/callback", "http://localhost"),
        # No host-source can name an IPv6 literal, and nothing may be injected into the policy.
        ("http://[::1]:8000/callback", "http:"),
        ("https://evil.example;script-src *:1/x", "https:"),
        ("com.example.app:/callback", None),
    ],
)
def test_form_action_names_the_redirect_origin_and_nothing_else(
    redirect_uri: str, source: str | None
) -> None:
    assert redirect_source(redirect_uri) == source


def test_write_is_not_offered_when_the_client_asked_only_to_read(flow: Flow) -> None:
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge, scope="memory:read")
    assert 'value="write"' not in flow.browser.get(url).content.decode()
    answer = flow.consent(url, access="write")
    assert answer.status_code == 400
    _no_grant_written()


def test_unknown_scopes_are_dropped_and_none_known_offers_both(flow: Flow) -> None:
    _verifier, challenge = pkce()
    page = flow.browser.get(flow.authorize_url(challenge, scope="openid profile")).content.decode()
    assert 'value="write"' in page


@pytest.mark.parametrize(
    ("name", "agent"),
    [
        ("ChatGPT", "chatgpt"),
        ("OpenAI connector", "chatgpt"),
        ("Claude", "claude-ai"),
        ("Kenfold", "remote-client"),
    ],
)
def test_the_suggested_agent_name(browser: Client, owner_password: str, name: str, agent: str) -> None:
    from tests.oauth.conftest import register

    client_id = register(browser, client_name=name).json()["client_id"]
    _verifier, challenge = pkce()
    page = browser.get(Flow(browser, client_id).authorize_url(challenge)).content.decode()
    assert f'name="agent" value="{agent}"' in page


def test_the_suggested_agent_name_is_never_one_a_credential_writes_as(
    browser: Client, owner_password: str
) -> None:
    from tests.oauth.conftest import register

    api_key_create(agent="alice")
    api_key_create(agent="claude-ai")
    api_key_create(agent="claude-ai-2", read_only=True)
    _verifier, challenge = pkce()
    for name, agent in (("alice", "alice-2"), ("Claude (official)", "claude-ai-3")):
        client_id = register(browser, client_name=name).json()["client_id"]
        page = browser.get(Flow(browser, client_id).authorize_url(challenge)).content.decode()
        assert f'name="agent" value="{agent}"' in page


def test_a_client_name_with_bidi_or_invisible_characters_is_shown_escaped(
    browser: Client, owner_password: str
) -> None:
    from tests.oauth.conftest import register

    name = "Claude \u202emoc.evil\u202c (official)\u200b"
    client_id = register(browser, client_name=name).json()["client_id"]
    _verifier, challenge = pkce()
    page = browser.get(Flow(browser, client_id).authorize_url(challenge)).content.decode()
    assert "\u202e" not in page and "\u202c" not in page and "\u200b" not in page
    assert "Connect <q>Claude \\u202emoc.evil\\u202c (official)\\u200b</q>" in page


def test_approval_redirects_with_code_state_and_iss(flow: Flow) -> None:
    _verifier, challenge = pkce()
    answer = flow.consent(flow.authorize_url(challenge), access="write", agent="chatgpt")
    query = query_of(answer["Location"])
    assert answer.status_code == 302
    assert query["code"].startswith("kfc_")
    assert query["state"] == "st4te" and query["iss"] == BASE
    grant = OAuthGrant.objects.get()
    assert grant.agent == "chatgpt" and grant.scope == "memory:read memory:write"
    # Codes are stored as their SHA-256 only.
    assert not get_grant_model().objects.filter(code=query["code"]).exists()
    assert grant.code_checksum != query["code"]


def test_deny_redirects_access_denied_with_iss(flow: Flow, caplog: pytest.LogCaptureFixture) -> None:
    _verifier, challenge = pkce()
    with caplog.at_level(logging.WARNING, logger="kenfold.security"):
        answer = flow.consent(flow.authorize_url(challenge), decision="deny")
    query = query_of(answer["Location"])
    assert (query["error"], query["state"], query["iss"]) == ("access_denied", "st4te", BASE)
    assert any(getattr(r, "event", "") == "consent denied" for r in caplog.records)
    _no_grant_written()


def test_a_forged_or_tampered_seal_is_refused(flow: Flow) -> None:
    _verifier, challenge = pkce()
    page = flow.browser.get(flow.authorize_url(challenge)).content.decode()
    form = consent_form(page)
    head, _, signature = form["seal"].rpartition(":")
    for seal in ("", "x", head + ":" + signature[::-1]):
        answer = flow.browser.post(
            "/oauth/authorize",
            form
            | {"seal": seal, "decision": "approve", "access": "read", "agent": "a", "password": PASSWORD},
        )
        assert answer.status_code == 400
    _no_grant_written()


def test_csrf_and_cross_site_posts_are_refused_without_side_effects(flow: Flow) -> None:
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge)
    strict = Client(headers={"host": "localhost"}, enforce_csrf_checks=True)
    page = strict.get(url).content.decode()
    form = consent_form(page) | {"decision": "approve", "access": "read", "agent": "a", "password": PASSWORD}
    without_token = {k: v for k, v in form.items() if k != "csrfmiddlewaretoken"}
    assert strict.post("/oauth/authorize", without_token).status_code == 403
    assert (
        strict.post("/oauth/authorize", form, headers={"origin": "https://evil.example"}).status_code == 403
    )
    assert strict.post("/oauth/authorize", form, headers={"sec-fetch-site": "cross-site"}).status_code == 403
    # A sandboxed frame or a file: page posts with `Origin: null`; the page's own form never does.
    for headers in ({"origin": "null"}, {"origin": "null", "sec-fetch-site": "same-origin"}):
        assert strict.post("/oauth/authorize", form, headers=headers).status_code == 403
    _no_grant_written()
    assert strict.post("/oauth/authorize", form, headers={"origin": BASE}).status_code == 302


def test_bad_agent_names_rerender_the_page(flow: Flow) -> None:
    _verifier, challenge = pkce()
    for agent in ("", "Has Spaces", "unknown", "kenfold", "kenfold-dashboard", "a" * 65):
        answer = flow.consent(flow.authorize_url(challenge), agent=agent)
        assert answer.status_code == 400, agent
        assert "agent name" in answer.content.decode()
    _no_grant_written()


def _approve(flow: Flow, **fields: str) -> tuple[str, object]:
    """Open the consent page, then approve with `fields` added to what the owner types."""
    _verifier, challenge = pkce()
    page = flow.browser.get(flow.authorize_url(challenge)).content.decode()
    form = consent_form(page) | {"decision": "approve", "access": "write", "password": PASSWORD}
    return page, flow.browser.post("/oauth/authorize", form | fields)


def test_the_owner_limits_a_client_to_projects_on_the_consent_page(flow: Flow) -> None:
    memory_remember(
        caller=Caller(agent="codex"),
        content="A rule of the secret project",
        project="github.com/acme/secret-plan",
    )
    page, answer = _approve(
        flow,
        agent="limited",
        projects_choice="some",
        projects="git@github.com:Acme/Shop.git\r\nhttps://github.com/acme/shop\n  github.com/acme/docs  \n",
        no_user_memories="on",
    )
    # All projects and user-wide memories are the defaults; the page is public, so it names no project.
    assert 'name="projects_choice" value="all" checked' in page and "secret-plan" not in page
    assert 'name="no_user_memories">' in page
    assert answer.status_code == 302, answer.content
    grant = OAuthGrant.objects.get(agent="limited")
    assert grant.projects == ["github.com/acme/docs", "github.com/acme/shop"] and not grant.user_memories


def test_without_a_project_choice_a_grant_reaches_every_project(flow: Flow) -> None:
    flow.tokens(access="write", agent="everywhere")
    grant = OAuthGrant.objects.get(agent="everywhere")
    assert grant.projects is None and grant.user_memories


def test_a_project_choice_without_a_usable_project_rerenders_the_page(flow: Flow) -> None:
    for listed, problem in (
        ("  \n ", "List at least one project"),
        ("/home/me/shop", "Project is a local path"),
    ):
        _page, answer = _approve(flow, agent="limited", projects_choice="some", projects=listed)
        assert answer.status_code == 400
        text = answer.content.decode()
        assert problem in text and 'name="projects_choice" value="some" checked' in text
    _no_grant_written()


def test_no_password_set_tells_the_owner_what_to_run(browser: Client, client_id: str) -> None:
    flow = Flow(browser, client_id)
    _verifier, challenge = pkce()
    answer = flow.consent(flow.authorize_url(challenge))
    assert answer.status_code == 403
    assert "python manage.py password" in answer.content.decode()


def test_five_wrong_passwords_lock_consent_even_for_the_right_one(
    flow: Flow, caplog: pytest.LogCaptureFixture
) -> None:
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge)
    with caplog.at_level(logging.WARNING, logger="kenfold.security"):
        statuses = [flow.consent(url, password=f"wrong password {n}").status_code for n in range(5)]
        locked = flow.consent(url, password=PASSWORD)
    assert statuses == [401] * 5
    assert locked.status_code == 429
    assert "Try again in 15 minutes" in locked.content.decode()
    assert Owner.objects.get().locked_until is not None
    _no_grant_written()
    events = [getattr(r, "event", "") for r in caplog.records]
    assert events.count("wrong password") == 5 and "lockout" in events and "consent locked" in events
    logged = "\n".join(str(vars(r)) for r in caplog.records)
    assert "wrong password 0" not in logged and PASSWORD not in logged


def test_a_right_password_resets_the_count(flow: Flow) -> None:
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge)
    for n in range(4):
        flow.consent(url, password=f"wrong password {n}")
    assert flow.consent(url).status_code == 302
    assert Owner.objects.get().failures == 0


def test_a_hostile_client_name_is_shown_escaped(browser: Client, owner_password: str) -> None:
    from tests.oauth.conftest import register

    client_id = register(browser, client_name='<script>alert(1)</script>"><img src=x>').json()["client_id"]
    _verifier, challenge = pkce()
    page = browser.get(Flow(browser, client_id).authorize_url(challenge)).content.decode()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
