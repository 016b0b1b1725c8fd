"""The authorization server's routes, mounted by edge.urls only when KENFOLD_PUBLIC_URL is set.

DOT reverses `oauth2_provider:…` names (the DCR management URI), so the OAuth endpoints sit under that
namespace; the well-known documents are at the site root, where RFC 8414 and RFC 9728 put them.
"""

from django.urls import include, path

from oauth import views

oauth_patterns = (
    [
        path("authorize", views.authorize, name="authorize"),
        path("token", views.token, name="token"),
        path("revoke", views.revoke, name="revoke-token"),
        path("register", views.register, name="dcr-register"),
        path("register/<str:client_id>", views.register_management, name="dcr-register-management"),
    ],
    "oauth2_provider",
)

urlpatterns = [
    path(".well-known/oauth-authorization-server", views.authorization_server_metadata),
    path(".well-known/openid-configuration", views.authorization_server_metadata),
    path(".well-known/oauth-protected-resource", views.protected_resource_metadata),
    path(".well-known/oauth-protected-resource/mcp", views.protected_resource_metadata),
    path("oauth/", include(oauth_patterns)),
]
