"""The authorization server's routes, mounted by edge.urls only when KENFOLD_PUBLIC_URL is set.

DOT reverses `oauth2_provider:…` names (the DCR management URI), so the OAuth endpoints sit under that
namespace; the well-known documents are at the site root, where RFC 8414 and RFC 9728 put them.
"""

from django.urls import include, path

from oauth.views import consent, discovery, token

oauth_patterns = (
    [
        path("authorize", consent.authorize, name="authorize"),
        path("token", token.token, name="token"),
        path("revoke", token.revoke, name="revoke-token"),
        path("register", discovery.register, name="dcr-register"),
        path("register/<str:client_id>", discovery.register_management, name="dcr-register-management"),
    ],
    "oauth2_provider",
)

urlpatterns = [
    path(".well-known/oauth-authorization-server", discovery.authorization_server_metadata),
    path(".well-known/openid-configuration", discovery.authorization_server_metadata),
    path(".well-known/oauth-protected-resource", discovery.protected_resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", discovery.protected_resource_metadata),
    path("oauth/", include(oauth_patterns)),
]
