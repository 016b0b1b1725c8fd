"""The authorization server's HTTP endpoints (spec §1.16), mounted by oauth.urls only when
KENFOLD_PUBLIC_URL is set, one module per flow:

- `discovery`: the RFC 8414 (also at the OpenID path) and RFC 9728 documents, written out field by field,
  and /oauth/register, DOT's RFC 7591 view behind Kenfold's stricter metadata rules (public clients only);
- `consent`: /oauth/authorize, the consent page the owner answers;
- `token`: /oauth/token and /oauth/revoke, DOT's views, refusing client secrets up front.
"""

from django.http import HttpRequest

from oauth.resource import READ_SCOPE, WRITE_SCOPE

SCOPES = (READ_SCOPE, WRITE_SCOPE)
MAX_BODY = 64 * 1024


def remote(request: HttpRequest) -> str:
    """The peer address, as the security log names it."""
    return request.META.get("REMOTE_ADDR", "") or "?"
