"""The authorization server's HTTP endpoints (spec §1.16), mounted only when KENFOLD_PUBLIC_URL is set.

- metadata: RFC 8414 (also at the OpenID path) and RFC 9728 documents, written out field by field;
- /oauth/authorize: the consent page. GET checks the request with oauthlib (an unknown client or an
  unregistered redirect URI gets a plain 400 page, never a redirect) and seals what it checked into the
  form; POST trusts the seal and the owner's choices, nothing else. The seal is signed with
  KENFOLD_SECRET_KEY, so any worker of any replica can take the POST;
- /oauth/token, /oauth/revoke: DOT's views, refusing client secrets up front;
- /oauth/register: DOT's RFC 7591 view behind Kenfold's stricter metadata rules (public clients only).
"""

import json
import logging
import re
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_access_token_model, get_application_model, get_refresh_token_model
from oauth2_provider.oauth2_backends import _add_iss_to_redirect, get_oauthlib_core
from oauth2_provider.views import RevokeTokenView, TokenView
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
    _error_response,
)
from oauthlib.common import add_params_to_uri
from oauthlib.oauth2.rfc6749 import errors as oauth_errors

from kenfold.net import form_post_refusal, is_loopback_host
from kenfold_common.errors import KenfoldError
from kenfold_common.text import for_terminal
from oauth import tokens
from oauth.models import OAuthGrant
from oauth.resource import READ_SCOPE, WRITE_SCOPE
from oauth.security import security_event
from oauth.services import (
    check_grant_agent,
    consent_projects,
    grant_end,
    owner_user,
    password_check,
    suggest_agent,
)

log = logging.getLogger(__name__)

SCOPES = (READ_SCOPE, WRITE_SCOPE)
SEAL_SALT = "kenfold.oauth.consent"
SEAL_MAX_AGE = 600
MAX_BODY = 64 * 1024
MAX_STATE = 1024
CHALLENGE_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")
MAX_REDIRECT_URIS = 20
MAX_REDIRECT_URI_CHARS = 2000
MAX_CLIENT_NAME_BYTES = 200
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
NO_SECRETS = (
    "Kenfold does not use client secrets: register a public client "
    "(token_endpoint_auth_method none) and send client_id with PKCE"
)


# --- metadata ----------------------------------------------------------------------------------------
def _metadata(document: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(document)
    response["Access-Control-Allow-Origin"] = "*"
    response["Cache-Control"] = "max-age=300"
    return response


def _get_or_head(request: HttpRequest) -> HttpResponse | None:
    if request.method not in ("GET", "HEAD"):
        response = JsonResponse({"error": "use GET"}, status=405)
        response["Allow"] = "GET, HEAD"
        return response
    return None


def authorization_server_metadata(request: HttpRequest) -> HttpResponse:
    if (refused := _get_or_head(request)) is not None:
        return refused
    base = settings.PUBLIC_URL
    document: dict[str, Any] = {
        "issuer": base,
        "authorization_endpoint": base + "/oauth/authorize",
        "token_endpoint": base + "/oauth/token",
        "revocation_endpoint": base + "/oauth/revoke",
    }
    if settings.OAUTH2_PROVIDER["DCR_ENABLED"]:
        document["registration_endpoint"] = base + "/oauth/register"
    document |= {
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        # Public clients only; private_key_jwt is not offered (neither Claude nor ChatGPT needs it).
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": list(SCOPES),
        "client_id_metadata_document_supported": bool(settings.OAUTH2_PROVIDER["CIMD_ENABLED"]),
        "authorization_response_iss_parameter_supported": True,
    }
    return _metadata(document)


def protected_resource_metadata(request: HttpRequest) -> HttpResponse:
    if (refused := _get_or_head(request)) is not None:
        return refused
    return _metadata(
        {
            "resource": settings.MCP_RESOURCE,
            "authorization_servers": [settings.PUBLIC_URL],
            "scopes_supported": list(SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "Kenfold",
        }
    )


# --- the consent page -----------------------------------------------------------------------------------
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


def _remote(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR", "") or "?"


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
        security_event("authorize refused", reason=exc.error, remote=_remote(request))
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
        security_event("consent denied", client=application.client_id, remote=_remote(request))
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
        password_check(password=request.POST.get("password", ""), remote=_remote(request), page="consent")
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
        remote=_remote(request),
    )
    return HttpResponseRedirect(_with_iss(headers["Location"]))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    return _plain(403, "Forbidden: the form's CSRF check failed. Reload the page and submit it again.")


# --- token, revocation ----------------------------------------------------------------------------------
def _refuse_client_secrets(request: HttpRequest) -> HttpResponse | None:
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY:
        return JsonResponse(
            {"error": "invalid_request", "error_description": "the body is larger than 64 KiB"}, status=400
        )
    basic = (request.headers.get("Authorization") or "").lower().startswith("basic ")
    if basic or "client_secret" in request.POST or "client_assertion" in request.POST:
        security_event(
            "client auth failure", client=request.POST.get("client_id", "")[:200], remote=_remote(request)
        )
        response = JsonResponse({"error": "invalid_client", "error_description": NO_SECRETS}, status=401)
        response["WWW-Authenticate"] = 'Basic realm="kenfold"' if basic else "Bearer"
        response["Cache-Control"] = "no-store"
        return response
    return None


class KenfoldTokenView(TokenView):
    def authorization_flow_token_response(
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        # DOT re-reads the new access token here for its app_authorized signal, which fails with
        # DoesNotExist (HTTP 500) when a concurrent redemption of the same code has just revoked the grant.
        # Kenfold sends no signal; a token revoked before it was even answered is answered as refused.
        _url, headers, body, status = self.create_token_response(request)
        if status == 200:
            issued = json.loads(body).get("access_token")
            if (
                issued
                and not get_access_token_model()
                .objects.filter(token_checksum=tokens.checksum(issued))
                .exists()
            ):
                headers, status = {}, 400
                body = json.dumps(
                    {
                        "error": "invalid_grant",
                        "error_description": "authorization code already used; the grant was revoked",
                    }
                )
        response = HttpResponse(content=body, status=status)
        for name, value in headers.items():
            response[name] = value
        return response

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if (refused := _refuse_client_secrets(request)) is not None:
            return refused
        response = super().post(request, *args, **kwargs)
        # Every answer is JSON (RFC 6749 §5); DOT leaves some errors (invalid_target) as text/html.
        response["Content-Type"] = "application/json"
        response["Cache-Control"] = "no-store"
        response["Pragma"] = "no-cache"
        return response


class KenfoldRevokeView(RevokeTokenView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if (refused := _refuse_client_secrets(request)) is not None:
            return refused
        token = request.POST.get("token", "")
        response = super().post(request, *args, **kwargs)
        if response.status_code == 200 and token.startswith(tokens.REFRESH_PREFIX):
            # Revoking a refresh token ends the whole grant (spec §1.16), not only its newest pair.
            rt = (
                get_refresh_token_model()
                .objects.filter(
                    token_checksum=tokens.checksum(token),
                    application__client_id=request.POST.get("client_id"),
                )
                .first()
            )
            grant = (
                OAuthGrant.objects.filter(token_family=rt.token_family).first()
                if rt and rt.token_family
                else None
            )
            if grant is not None:
                grant_end(grant=grant, reason="refresh token revoked by the client")
        return response


# --- dynamic client registration --------------------------------------------------------------------------
def _redirect_uri_problem(uri: object) -> str | None:
    if not isinstance(uri, str) or not uri or len(uri) > MAX_REDIRECT_URI_CHARS:
        return f"each redirect URI must be a string of at most {MAX_REDIRECT_URI_CHARS} characters"
    parts = urlsplit(uri)
    if parts.fragment or parts.username or parts.password:
        return "redirect URIs must not carry a fragment or credentials"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname and is_loopback_host(parts.hostname):
        return None
    return "redirect URIs must be https, or http on a loopback address (localhost, 127.x, ::1)"


class KenfoldRegistrationView(DynamicClientRegistrationView):
    """RFC 7591 for public clients only. A client asking for a secret-based method (claude.ai asks for
    client_secret_post) is registered as the public client it can also be, and told so in the response
    (RFC 7591 §3.2.1 lets the server replace requested metadata)."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if len(request.body) > MAX_BODY:
            return _error_response("invalid_client_metadata", "the registration body is larger than 64 KiB")
        try:
            data = json.loads(request.body)
        except ValueError:
            return _error_response("invalid_client_metadata", "the body must be a JSON object")
        if not isinstance(data, dict):
            return _error_response("invalid_client_metadata", "the body must be a JSON object")
        uris = data.get("redirect_uris")
        if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
            return _error_response(
                "invalid_redirect_uri", f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs"
            )
        for uri in uris:
            if (problem := _redirect_uri_problem(uri)) is not None:
                return _error_response("invalid_redirect_uri", problem)
        grants = data.get("grant_types", ["authorization_code", "refresh_token"])
        if not isinstance(grants, list) or "authorization_code" not in grants:
            return _error_response("invalid_client_metadata", "grant_types must include authorization_code")
        responses = data.get("response_types", ["code"])
        if not isinstance(responses, list) or "code" not in responses:
            return _error_response("invalid_client_metadata", "response_types must include code")
        name = data.get("client_name", "")
        if not isinstance(name, str):
            return _error_response("invalid_client_metadata", "client_name must be a string")
        name = name.strip().encode()[:MAX_CLIENT_NAME_BYTES].decode(errors="ignore")
        metadata = {
            key: value
            for key, value in data.items()
            if key not in ("jwks", "jwks_uri", "token_endpoint_auth_signing_alg", "client_secret")
        }
        metadata |= {
            "redirect_uris": uris,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "client_name": name,
        }
        request._body = json.dumps(metadata).encode()
        request.user = AnonymousUser()  # no session middleware: registration is anonymous
        response = super().post(request, *args, **kwargs)
        if response.status_code != 201:
            return response
        body = json.loads(response.content)
        application = get_application_model().objects.get(client_id=body["client_id"])
        # DOT builds the management URI from the request, which behind a TLS proxy is http://.
        management = urlsplit(body["registration_client_uri"]).path
        body |= {
            "client_id_issued_at": int(application.created.timestamp()),
            "client_name": application.name,
            "response_types": ["code"],
            "registration_client_uri": settings.PUBLIC_URL + management,
        }
        security_event("client registered", client=application.client_id, remote=_remote(request))
        return JsonResponse(body, status=201, headers={"Cache-Control": "no-store"})


class KenfoldRegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 read and delete only: an update would bypass the redirect URI rules above."""

    http_method_names = ["get", "delete"]


token = csrf_exempt(KenfoldTokenView.as_view())
revoke = csrf_exempt(KenfoldRevokeView.as_view())
register = csrf_exempt(KenfoldRegistrationView.as_view())
register_management = csrf_exempt(KenfoldRegistrationManagementView.as_view())
