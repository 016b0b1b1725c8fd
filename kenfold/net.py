"""Host and origin rules every HTTP surface shares (spec §1.15): which hosts are loopback, which Host headers
are allowed, and when a request comes from a web page on another site.

They live on the floor, not in the HTTP edge, because the dashboard and the OAuth pages apply them too, and
apps never import the edge.
"""

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host


def is_loopback_host(host: str) -> bool:
    """`localhost` or a loopback IP literal (127.0.0.0/8, ::1), as a Host or a URL names it."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_allowed(host_header: str) -> bool:
    """Whether a Host header names an allowed host. The port is ignored; `a.b:80.evil` is refused."""
    domain, _port = split_domain_port(host_header.lower())
    if domain.startswith("[") and domain.endswith("]"):  # an IPv6 literal is listed without brackets
        domain = domain[1:-1]
    return bool(domain) and validate_host(domain, settings.KENFOLD_ALLOWED_HOSTS)


def cross_origin_refusal(*, sec_fetch_site: str | None, origin: str | None) -> str | None:
    """Why a request looks like it comes from a web page on another site, or None if it does not.

    Agents and sync clients send neither header (or a same-origin one); browsers send at least one, so a
    malicious page cannot make a visitor's browser talk to a Kenfold it can reach (such as localhost).
    """
    if sec_fetch_site is not None and sec_fetch_site.strip().lower() == "cross-site":
        return "forbidden: cross-site request (Sec-Fetch-Site: cross-site); Kenfold accepts no requests from web pages"
    # `Origin: null` (sandboxed pages, file: URLs) has no host and is refused like any foreign origin.
    if origin is not None and not host_allowed(urlsplit(origin.strip()).netloc):
        # The value is not repeated: a header is the caller's to read already, and a log line or a proxy's
        # error page must not carry what a page chose to send.
        return (
            "forbidden: the Origin header names a host that is not allowed "
            "(list its host in KENFOLD_ALLOWED_HOSTS if it is yours)"
        )
    return None
