"""/oauth/token and /oauth/revoke (spec §1.16): DOT's views, refusing client secrets up front."""

import json
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_access_token_model, get_refresh_token_model
from oauth2_provider.views import RevokeTokenView, TokenView

from access.security import security_event
from oauth import tokens
from oauth.models import OAuthGrant
from oauth.services import grant_end
from oauth.views import MAX_BODY, remote

NO_SECRETS = (
    "Kenfold does not use client secrets: register a public client "
    "(token_endpoint_auth_method none) and send client_id with PKCE"
)


def _refuse_client_secrets(request: HttpRequest) -> HttpResponse | None:
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY:
        return JsonResponse(
            {"error": "invalid_request", "error_description": "the body is larger than 64 KiB"}, status=400
        )
    basic = (request.headers.get("Authorization") or "").lower().startswith("basic ")
    if basic or "client_secret" in request.POST or "client_assertion" in request.POST:
        security_event(
            "client auth failure", client=request.POST.get("client_id", "")[:200], remote=remote(request)
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


token = csrf_exempt(KenfoldTokenView.as_view())
revoke = csrf_exempt(KenfoldRevokeView.as_view())
