"""The shapes of what the authorization server hands out (spec §1.16): a prefix that says what a string is,
then 32 random bytes in base64url. The prefixes let the HTTP guard tell an OAuth access token from an API
key (`kf_`) before any lookup, and let a leaked string be recognised by secret scanners."""

import base64
import hashlib
import secrets

from oauth2_provider.generators import BaseHashGenerator

ACCESS_PREFIX = "kfa_"
REFRESH_PREFIX = "kfr_"
CODE_PREFIX = "kfc_"
CLIENT_PREFIX = "kfd_"


def _random(prefix: str) -> str:
    return prefix + base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()


def checksum(value: str) -> str:
    """How tokens and codes are stored: SHA-256 hex, the same digest DOT keeps in `token_checksum`."""
    return hashlib.sha256(value.encode()).hexdigest()


def access_token(request: object) -> str:
    return _random(ACCESS_PREFIX)


def refresh_token(request: object) -> str:
    return _random(REFRESH_PREFIX)


def authorization_code() -> str:
    return _random(CODE_PREFIX)


class ClientIdGenerator(BaseHashGenerator):
    def hash(self) -> str:
        return _random(CLIENT_PREFIX)
