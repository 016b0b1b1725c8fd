"""What a client reads before it asks anything (spec §1.16): the authorization server's and the protected
resource's metadata documents, and dynamic client registration (RFC 7591, public clients only)."""

import json
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_application_model
from oauth2_provider.views.dynamic_client_registration import (
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
    _error_response,
)

from access.security import security_event
from kenfold.net import is_loopback_host
from oauth.views import MAX_BODY, SCOPES, remote

MAX_REDIRECT_URIS = 20
MAX_REDIRECT_URI_CHARS = 2000
MAX_CLIENT_NAME_BYTES = 200


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
        security_event("client registered", client=application.client_id, remote=remote(request))
        return JsonResponse(body, status=201, headers={"Cache-Control": "no-store"})


class KenfoldRegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 read and delete only: an update would bypass the redirect URI rules above."""

    http_method_names = ["get", "delete"]


register = csrf_exempt(KenfoldRegistrationView.as_view())
register_management = csrf_exempt(KenfoldRegistrationManagementView.as_view())
