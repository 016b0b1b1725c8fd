"""Kenfold's extension points into django-oauth-toolkit (notes/oauth.md §3.4): the oauthlib server class
and the request validator.

What they add to DOT 3.4.1:
- only the authorization-code and refresh-token grants, and PKCE S256 only, refused at the authorization
  request (before the consent page) rather than after the owner approved;
- codes (`kfc_…`) stored as their SHA-256, like tokens;
- every grant, code and token bound to the one resource, `<public URL>/mcp`;
- a replayed code revokes the grant, but only when its presenter passed every check (client, redirect
  URI, PKCE verifier): a code alone, intercepted, can neither be redeemed nor used to revoke;
- the redemption claim and the token issuance in one transaction, so an issuance failure leaves the code
  unused; a replayed refresh token marks the grant revoked, not only DOT's token family.
"""

import hmac
import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from oauth2_provider.models import get_grant_model, get_refresh_token_model
from oauth2_provider.oauth2_validators import OAuth2Validator
from oauthlib.oauth2.rfc6749 import errors
from oauthlib.oauth2.rfc6749.endpoints import (
    AuthorizationEndpoint,
    ResourceEndpoint,
    RevocationEndpoint,
    TokenEndpoint,
)
from oauthlib.oauth2.rfc6749.grant_types import AuthorizationCodeGrant, RefreshTokenGrant
from oauthlib.oauth2.rfc6749.grant_types.authorization_code import code_challenge_method_s256
from oauthlib.oauth2.rfc6749.tokens import BearerToken

from access.security import security_event
from kenfold import clock
from oauth import tokens
from oauth.models import OAuthGrant
from oauth.services import grant_end

log = logging.getLogger(__name__)


def audience_is_mcp_resource(request_uri: str, audiences: list[str] | None) -> bool:
    """DOT's resource validator: the token must name our resource. The request URI is ignored on purpose:
    behind a TLS proxy Django sees another scheme or host, which must not break the check."""
    return settings.MCP_RESOURCE in (audiences or [])


class KenfoldCodeGrant(AuthorizationCodeGrant):
    # oauthlib defaults a missing method to "plain"; with S256 the only entry, both are refused.
    _code_challenge_methods = {"S256": code_challenge_method_s256}

    def create_authorization_code(self, request: Any) -> dict[str, str]:
        grant = {"code": tokens.authorization_code()}
        if getattr(request, "state", None):
            grant["state"] = request.state
        return grant


class KenfoldServer(AuthorizationEndpoint, TokenEndpoint, ResourceEndpoint, RevocationEndpoint):
    """oauthlib's all-in-one server, narrowed to what Kenfold offers: no implicit, password, client
    credentials or device grants (they answer unsupported_grant_type / unsupported_response_type)."""

    def __init__(
        self,
        request_validator: Any,
        token_expires_in: Any = None,
        token_generator: Any = None,
        refresh_token_generator: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        self.auth_grant = KenfoldCodeGrant(request_validator)
        self.refresh_grant = RefreshTokenGrant(request_validator)
        self.bearer = BearerToken(
            request_validator, token_generator, token_expires_in, refresh_token_generator
        )
        AuthorizationEndpoint.__init__(
            self,
            default_response_type="code",
            response_types={"code": self.auth_grant},
            default_token_type=self.bearer,
        )
        TokenEndpoint.__init__(
            self,
            default_grant_type="authorization_code",
            grant_types={"authorization_code": self.auth_grant, "refresh_token": self.refresh_grant},
            default_token_type=self.bearer,
        )
        ResourceEndpoint.__init__(self, default_token="Bearer", token_types={"Bearer": self.bearer})
        RevocationEndpoint.__init__(self, request_validator)


def _pkce_ok(grant: OAuthGrant, verifier: str | None) -> bool:
    return bool(verifier) and code_challenge_method_s256(verifier, grant.code_challenge)


class KenfoldValidator(OAuth2Validator):
    # --- resources ------------------------------------------------------------------------------------
    def _validate_resource_uris(self, request: Any, resources: list[str]) -> None:
        super()._validate_resource_uris(request, resources)
        for resource in resources:
            if resource != settings.MCP_RESOURCE:
                raise errors.CustomOAuth2Error(
                    error="invalid_target",
                    description=f"this server issues tokens only for {settings.MCP_RESOURCE}",
                    request=request,
                )

    def _create_access_token(
        self, expires: Any, request: Any, token: Any, source_refresh_token: Any = None
    ) -> Any:
        request.resource = [settings.MCP_RESOURCE]
        return super()._create_access_token(expires, request, token, source_refresh_token)

    # --- authorization codes --------------------------------------------------------------------------
    def _create_authorization_code(self, request: Any, code: dict[str, str], expires: Any = None) -> Any:
        request.resource = [settings.MCP_RESOURCE]
        digest = tokens.checksum(code["code"])
        grant = super()._create_authorization_code(request, {**code, "code": digest}, expires)
        OAuthGrant.objects.create(
            application=grant.application,
            agent=request.kenfold_agent,
            projects=request.kenfold_projects,
            user_memories=request.kenfold_user_memories,
            scope=grant.scope,
            resource=settings.MCP_RESOURCE,
            code_checksum=digest,
            code_challenge=grant.code_challenge,
            redirect_uri=grant.redirect_uri or "",
        )
        return grant

    def validate_code(
        self, client_id: str, code: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        digest = tokens.checksum(code)
        # One read of DOT's Grant for the whole request: DOT re-reads it in get_code_challenge and
        # confirm_redirect_uri, which fails with DoesNotExist (HTTP 500) when a concurrent redemption
        # deleted it in between.
        request.kenfold_code = get_grant_model().objects.filter(code=digest, application=client).first()
        if request.kenfold_code is not None:
            if request.kenfold_code.is_expired():
                return False
            request.scopes = request.kenfold_code.scope.split(" ")
            request.user = request.kenfold_code.user
            return True
        # DOT deletes its Grant when the code is redeemed: this code is unknown, expired, or used once.
        grant = OAuthGrant.objects.filter(code_checksum=digest, application=client).first()
        if (
            grant is not None
            and grant.code_redeemed_at is not None
            and self._same_redirect(grant, request.redirect_uri)
            and _pkce_ok(grant, getattr(request, "code_verifier", None))
        ):
            self._revoke(grant, "authorization code already used")
            raise errors.InvalidGrantError(
                description="authorization code already used; the grant was revoked", request=request
            )
        return False

    @staticmethod
    def _same_redirect(grant: OAuthGrant, redirect_uri: str | None) -> bool:
        return hmac.compare_digest(grant.redirect_uri or "", redirect_uri or "")

    def get_code_challenge(self, code: str, request: Any) -> str | None:
        grant = getattr(request, "kenfold_code", None)
        return (grant.code_challenge or None) if grant else None

    def get_code_challenge_method(self, code: str, request: Any) -> str | None:
        grant = getattr(request, "kenfold_code", None)
        return (grant.code_challenge_method or None) if grant else None

    def confirm_redirect_uri(
        self, client_id: str, code: str, redirect_uri: str, client: Any, *args: Any, **kwargs: Any
    ) -> bool:
        request = kwargs.get("request") or (args[0] if args else None)
        grant = getattr(request, "kenfold_code", None)
        if grant is None:
            return False
        if not grant.redirect_uri:
            return not redirect_uri
        return redirect_uri == grant.redirect_uri

    def get_authorization_code_scopes(
        self, client_id: str, code: str, redirect_uri: str, request: Any
    ) -> list[str]:
        grant = getattr(request, "kenfold_code", None)
        return grant.scope.split(" ") if grant else []

    def invalidate_authorization_code(
        self, client_id: str, code: str, request: Any, *args: Any, **kwargs: Any
    ) -> None:
        # Already done inside save_bearer_token's transaction.
        return None

    def save_bearer_token(self, token: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        if request.grant_type != "authorization_code":
            return super().save_bearer_token(token, request, *args, **kwargs)
        digest = tokens.checksum(request.code)
        lost_race = None
        with transaction.atomic():
            # The claim and the issuance commit together: a failure below leaves the code unused.
            claimed = OAuthGrant.objects.filter(
                code_checksum=digest, code_redeemed_at__isnull=True, revoked_at__isnull=True
            ).update(code_redeemed_at=clock.now())
            if claimed:
                get_grant_model().objects.filter(code=digest).delete()
                result = super().save_bearer_token(token, request, *args, **kwargs)
            else:
                lost_race = OAuthGrant.objects.filter(code_checksum=digest).first()
        if lost_race is not None:
            # Two redemptions of one code raced and this one lost: the code was used twice.
            self._revoke(lost_race, "authorization code redeemed twice")
        if not claimed:
            raise errors.InvalidGrantError(
                description="authorization code already used; the grant was revoked", request=request
            )
        self._retire_older_grants(digest)
        return result

    def _retire_older_grants(self, digest: str) -> None:
        """A new consent for a client replaces its older ones (the SDK's step-up leaves the read-only
        grant alive otherwise)."""
        grant = OAuthGrant.objects.get(code_checksum=digest)
        older = OAuthGrant.objects.filter(
            application_id=grant.application_id, created_at__lt=grant.created_at, revoked_at__isnull=True
        )
        for old in older:
            grant_end(grant=old, reason="replaced by a newer consent")

    def _create_refresh_token(
        self, request: Any, refresh_token_code: str, access_token: Any, previous_refresh_token: Any
    ) -> Any:
        request.resource = [settings.MCP_RESOURCE]
        rt = super()._create_refresh_token(request, refresh_token_code, access_token, previous_refresh_token)
        if request.grant_type == "authorization_code":
            OAuthGrant.objects.filter(code_checksum=tokens.checksum(request.code)).update(
                token_family=rt.token_family
            )
        return rt

    # --- refresh tokens -------------------------------------------------------------------------------
    def validate_refresh_token(
        self, refresh_token: str, client: Any, request: Any, *args: Any, **kwargs: Any
    ) -> bool:
        ok = super().validate_refresh_token(refresh_token, client, request, *args, **kwargs)
        rt = getattr(request, "refresh_token_instance", None)
        if rt is None:
            rt = (
                get_refresh_token_model()
                .objects.filter(token_checksum=tokens.checksum(refresh_token))
                .first()
            )
        if rt is None or rt.token_family is None:
            return ok
        grant = OAuthGrant.objects.filter(token_family=rt.token_family).first()
        if grant is None:
            return ok
        if not ok and rt.revoked is not None and grant.revoked_at is None:
            # A rotated (or revoked) refresh token came back: DOT revoked its family; end the grant too.
            self._revoke(grant, "refresh token reused")
            raise errors.InvalidGrantError(
                description="refresh token already used; the grant was revoked, authorize again",
                request=request,
            )
        if grant.revoked_at is not None:
            return False
        return ok

    def _revoke(self, grant: OAuthGrant, reason: str) -> None:
        security_event("replay", grant=str(grant.pk), client=grant.application.client_id, reason=reason)
        grant_end(grant=grant, reason=reason)
