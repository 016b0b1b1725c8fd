"""Client ID Metadata Documents (an https `client_id` that names the client's own metadata), fetched by
DOT's SSRF-hardened fetcher with Kenfold's rules on top (spec §1.16; notes/oauth.md §3.7).

DOT 3.4.1 refuses the documents Claude and ChatGPT publish: Claude's lists a JWT-bearer grant beside the
authorization code, ChatGPT's declares private_key_jwt while offering `none`. Kenfold registers both as
the public clients they also are. Client secrets stay refused.
"""

from typing import Any
from urllib.parse import urlsplit

from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

MAX_CLIENT_ID_CHARS = 2048
SUPPORTED_GRANTS = ("authorization_code", "refresh_token")


def check_client_id_url(client_id: str) -> None:
    """Kenfold's rules beyond DOT's own URL checks: bounded length, the default port, a real path."""
    if len(client_id) > MAX_CLIENT_ID_CHARS:
        raise CIMDError(f"client_id URL is longer than {MAX_CLIENT_ID_CHARS} characters")
    parts = urlsplit(client_id)
    try:
        port = parts.port
    except ValueError:
        raise CIMDError("client_id URL has an invalid port") from None
    if port not in (None, 443):
        raise CIMDError("client_id URL must use the default https port")
    if parts.path in ("", "/"):
        raise CIMDError("client_id URL must have a path")


def normalize_client_metadata(document: dict[str, Any]) -> dict[str, Any]:
    """The document as the public client it describes: `none` when the document offers it, and only the
    grants Kenfold knows (the others are dropped, as DCR drops them)."""
    document = dict(document)
    offered = document.get("token_endpoint_auth_methods_supported")
    method = document.get("token_endpoint_auth_method", "none")
    if method != "none" and isinstance(offered, list) and "none" in offered:
        document["token_endpoint_auth_method"] = "none"
        document.pop("jwks_uri", None)
        document.pop("jwks", None)
    grants = document.get("grant_types")
    if isinstance(grants, list):
        kept = [grant for grant in grants if grant in SUPPORTED_GRANTS]
        if "authorization_code" in kept:
            document["grant_types"] = kept
    return document


class KenfoldCimdFetcher(SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        check_client_id_url(client_id)
        document, max_age = super().fetch(client_id)
        return normalize_client_metadata(document), max_age
