"""/oauth/authorize: the consent page (spec §1.16). GET checks the request with oauthlib (an unknown client
or an unregistered redirect URI gets a plain 400 page, never a redirect) and seals what it checked into
the form; POST trusts the seal and the owner's choices, nothing else. The seal is signed with
KENFOLD_SECRET_KEY, so any worker of any replica can take the POST.
"""

import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.core import signing
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from oauth2_provider.models import get_application_model
from oauth2_provider.oauth2_backends import _add_iss_to_redirect, get_oauthlib_core
from oauthlib.common import add_params_to_uri
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from access.password import password_check
from access.security import security_event
from kenfold.net import form_post_refusal, is_loopback_host
from kenfold_common.errors import KenfoldError
from kenfold_common.text import for_terminal
from oauth.resource import READ_SCOPE, WRITE_SCOPE
from oauth.services import (
    check_grant_agent,
    consent_projects,
    owner_user,
    suggest_agent,
)
from oauth.views import SCOPES, remote

SEAL_SALT = "kenfold.oauth.consent"
SEAL_MAX_AGE = 600
MAX_STATE = 1024
CHALLENGE_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")
CONSENT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action {form_action}; frame-ancestors 'none'; "
    "base-uri 'none'"
)
# CSP's host-source grammar: letters, digits and hyphens between dots (no IPv6 literal, no quote or ';').
CSP_HOST_RE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)*$")
CONSENT_HEADERS = {
    "Content-Security-Policy": CONSENT_CSP.format(form_action="'self'"),
    "X-Frame-Options": "DENY",
    # Not no-referrer: under it a browser posts the form with `Origin: null` (Fetch: a POST's Origin is
    # null when the policy is no-referrer), which the CSRF check refuses, so no owner could approve. Under
    # same-origin the POST carries our origin, and the client's redirect URI still gets no Referer (the
    # consent URL, with its state and challenge, stays with us).
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def _plain(status: int, text: str) -> HttpResponse:
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
    for name, value in CONSENT_HEADERS.items():
        response[name] = value
    return response


def _with_iss(uri: str) -> str:
    return _add_iss_to_redirect(uri, settings.PUBLIC_URL)


def _error_redirect(redirect_uri: str, error: str, description: str, state: str | None) -> HttpResponse:
    params = [("error", error), ("error_description", description)]
    if state:
        params.append(("state", state))
    return HttpResponseRedirect(_with_iss(add_params_to_uri(redirect_uri, params)))


def _normalized_scopes(raw: str | None) -> list[str]:
    """Known scopes in a fixed order; none known (or none asked) offers both."""
    asked = set((raw or "").split())
    known = [scope for scope in SCOPES if scope in asked]
    return known or list(SCOPES)


def canonical_resource(uri: str) -> str | None:
    parts = urlsplit(uri.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    if parts.fragment or parts.username or parts.password or parts.query:
        return None
    host = parts.hostname.lower()
    netloc = f"[{host}]" if ":" in host else host
    if parts.port is not None and parts.port != {"http": 80, "https": 443}[parts.scheme.lower()]:
        netloc += f":{parts.port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path.rstrip('/')}"


def _client_name(application: Any) -> str:
    return application.name or urlsplit(application.client_id).hostname or application.client_id


def _shown_client_name(name: str) -> str:
    """A client's self-chosen name as the owner must read it: bidi overrides, zero-width and control
    characters written out as escapes (\\u202e), so "Claude \\u202emoc.evil\\u202c" cannot show as
    "Claude live.com"."""
    return for_terminal(name)


def authorize(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _authorize_get(request)
    if request.method == "POST":
        return _authorize_post(request)
    response = _plain(405, "use GET (and the consent form's POST)")
    response["Allow"] = "GET, POST"
    return response


def _authorize_get(request: HttpRequest) -> HttpResponse:
    params = request.GET
    if not params.get("client_id"):
        return _plain(
            400, "This authorization request has no client_id. Start the connection again from the client."
        )
    scopes = _normalized_scopes(params.get("scope"))
    # prompt / approval_prompt are dropped: the owner always sees the page, and nobody logs in.
    query = [
        (k, v)
        for k, values in params.lists()
        for v in values
        if k not in ("scope", "prompt", "approval_prompt")
    ]
    query.append(("scope", " ".join(scopes)))
    uri = settings.PUBLIC_URL + "/oauth/authorize?" + urlencode(query)
    server = get_oauthlib_core().server
    try:
        _scopes, credentials = server.validate_authorization_request(uri, http_method="GET")
    except oauth_errors.FatalClientError as exc:
        security_event("authorize refused", reason=exc.error, remote=remote(request))
        return _plain(
            400,
            "This authorization request cannot be completed: the client is unknown, or its redirect URI is not "
            f"registered ({exc.error}). Nothing was sent back to the client.",
        )
    except oauth_errors.OAuth2Error as exc:
        return _error_redirect(exc.redirect_uri, exc.error, exc.description or exc.error, params.get("state"))
    redirect_uri = credentials["redirect_uri"]
    state = credentials.get("state")
    if state is not None and len(state) > MAX_STATE:
        return _error_redirect(
            redirect_uri, "invalid_request", f"state is longer than {MAX_STATE} characters", None
        )
    if not CHALLENGE_RE.fullmatch(credentials.get("code_challenge") or ""):
        return _error_redirect(
            redirect_uri,
            "invalid_request",
            "code_challenge must be 43 base64url characters (PKCE S256)",
            state,
        )
    resources = params.getlist("resource")
    if any(canonical_resource(r) != settings.MCP_RESOURCE for r in resources):
        return _error_redirect(
            redirect_uri,
            "invalid_target",
            f"this server issues tokens only for {settings.MCP_RESOURCE}",
            state,
        )
    application = credentials["request"].client
    seal = signing.dumps(
        {
            "client": application.client_id,
            "redirect": redirect_uri,
            "redirect_given": params.get("redirect_uri"),
            "state": state,
            "challenge": credentials["code_challenge"],
            "write": WRITE_SCOPE in scopes,
        },
        salt=SEAL_SALT,
    )
    return _consent_page(
        request,
        application=application,
        redirect_uri=redirect_uri,
        seal=seal,
        write_offered=WRITE_SCOPE in scopes,
    )


def redirect_source(redirect_uri: str) -> str | None:
    """The CSP source naming the client's redirect URI, for the consent page's form-action.

    Browsers check form-action on the redirects that follow a form's submission too: with 'self' alone,
    chromium stops the owner's answer at our own 302 to the client (net::ERR_ABORTED), approve or deny.
    An IPv6 literal ([::1]) cannot be written as a host-source, so its scheme alone is named.
    """
    parts = urlsplit(redirect_uri)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):  # registration accepts no other redirect URI
        return None
    host = (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        return None
    if not CSP_HOST_RE.fullmatch(host):
        return f"{scheme}:"
    return f"{scheme}://{host}" + (f":{port}" if port is not None else "")


def _consent_page(
    request: HttpRequest,
    *,
    application: Any,
    redirect_uri: str,
    seal: str,
    write_offered: bool,
    status: int = 200,
    problem: str = "",
    agent: str | None = None,
    access: str = "read",
    projects_choice: str = "all",
    projects: str = "",
    user_memories: bool = True,
) -> HttpResponse:
    host = urlsplit(redirect_uri).hostname or ""
    name = _client_name(application)
    context = {
        "client_name": _shown_client_name(name),
        "client_id": application.client_id,
        "redirect_host": host,
        "loopback_redirect": is_loopback_host(host),
        "write_offered": write_offered,
        "agent": agent if agent is not None else suggest_agent(client_name=name),
        "access": access if write_offered else "read",
        "seal": seal,
        "problem": problem,
        "projects_choice": projects_choice,
        "projects": projects,
        "user_memories": user_memories,
    }
    response = render(request, "oauth/consent.html", context, status=status)
    for header, value in CONSENT_HEADERS.items():
        response[header] = value
    sources = ["'self'", *filter(None, [redirect_source(redirect_uri)])]
    response["Content-Security-Policy"] = CONSENT_CSP.format(form_action=" ".join(sources))
    return response


def _authorize_post(request: HttpRequest) -> HttpResponse:
    # Django's CSRF check (token and Origin) runs before this view; the floor's rule adds Sec-Fetch-Site.
    if form_post_refusal(request) is not None:
        return _plain(403, "Forbidden: the consent form was posted from another site.")
    try:
        sealed = signing.loads(request.POST.get("seal", ""), salt=SEAL_SALT, max_age=SEAL_MAX_AGE)
    except signing.SignatureExpired:
        return _plain(
            400, "This consent form has expired (10 minutes). Start the connection again from the client."
        )
    except signing.BadSignature:
        return _plain(400, "This consent form is not valid. Start the connection again from the client.")
    application = get_application_model().objects.filter(client_id=sealed["client"]).first()
    if application is None:
        return _plain(400, "The client of this consent form no longer exists. Start the connection again.")
    redirect_uri = sealed["redirect"]
    state = sealed["state"]
    if request.POST.get("decision") != "approve":
        security_event("consent denied", client=application.client_id, remote=remote(request))
        return _error_redirect(redirect_uri, "access_denied", "the owner denied access", state)

    agent = (request.POST.get("agent") or "").strip()
    access = request.POST.get("access", "read")
    # Absent fields keep the defaults (every project, user-wide memories readable), so a form without
    # them (an older page still open) grants what it showed.
    projects_choice = request.POST.get("projects_choice", "all")
    projects_listed = request.POST.get("projects", "")
    user_memories = "no_user_memories" not in request.POST

    def again(status: int, problem: str) -> HttpResponse:
        return _consent_page(
            request,
            application=application,
            redirect_uri=redirect_uri,
            seal=request.POST["seal"],
            write_offered=sealed["write"],
            status=status,
            problem=problem,
            agent=agent,
            access=access,
            projects_choice=projects_choice,
            projects=projects_listed,
            user_memories=user_memories,
        )

    try:
        check_grant_agent(agent=agent)
        projects = consent_projects(choice=projects_choice, listed=projects_listed)
    except KenfoldError as exc:
        return again(exc.status_code, exc.message[:1].upper() + exc.message[1:])
    if access not in ("read", "write") or (access == "write" and not sealed["write"]):
        return again(400, "This client did not ask for write access; choose read.")
    try:
        password_check(password=request.POST.get("password", ""), remote=remote(request), page="consent")
    except KenfoldError as exc:
        return again(exc.status_code, exc.message[:1].upper() + exc.message[1:] + ".")

    scopes = [READ_SCOPE, WRITE_SCOPE] if access == "write" else [READ_SCOPE]
    query = [
        ("response_type", "code"),
        ("client_id", application.client_id),
        ("code_challenge", sealed["challenge"]),
        ("code_challenge_method", "S256"),
        ("scope", " ".join(scopes)),
    ]
    if sealed["redirect_given"]:
        query.append(("redirect_uri", sealed["redirect_given"]))
    if state is not None:
        query.append(("state", state))
    uri = settings.PUBLIC_URL + "/oauth/authorize?" + urlencode(query)
    server = get_oauthlib_core().server
    try:
        headers, _body, _status = server.create_authorization_response(
            uri,
            http_method="GET",
            scopes=scopes,
            credentials={
                "user": owner_user(),
                "kenfold_agent": agent,
                "kenfold_projects": projects,
                "kenfold_user_memories": user_memories,
            },
        )
    except oauth_errors.FatalClientError:
        return _plain(400, "The client's registration changed during consent. Start the connection again.")
    except oauth_errors.OAuth2Error as exc:
        return _error_redirect(redirect_uri, exc.error, exc.description or exc.error, state)
    security_event(
        "consent approved",
        client=application.client_id,
        agent=agent,
        access=access,
        projects=len(projects) if projects is not None else "all",
        remote=remote(request),
    )
    return HttpResponseRedirect(_with_iss(headers["Location"]))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return _plain(403, "Forbidden: the form's CSRF check failed. Reload the page and submit it again.")
