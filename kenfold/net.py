"""Host and origin rules every HTTP surface shares (spec §1.15): which hosts are loopback, which Host headers
are allowed, and when a request comes from a web page on another site.

They live on the floor, not in the HTTP edge, because the dashboard and the OAuth pages apply them too, and
apps never import the edge.
"""

import ipaddress
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest
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


# What the refusals say on the API (the dashboard and the consent page answer with a page of their own).
CROSS_SITE = (
    "forbidden: cross-site request (Sec-Fetch-Site: cross-site); Kenfold accepts no requests from web pages"
)
NOT_SAME_ORIGIN = (
    "forbidden: request from a page of another origin (Sec-Fetch-Site is not same-origin); "
    "Kenfold accepts no requests from web pages"
)
# The value is not repeated: a header is the caller's to read already, and a log line or a proxy's error
# page must not carry what a page chose to send.
ORIGIN_NOT_ALLOWED = (
    "forbidden: the Origin header names a host that is not allowed "
    "(list its host in KENFOLD_ALLOWED_HOSTS if it is yours)"
)
ORIGIN_ELSEWHERE = (
    "forbidden: the Origin header names another origin than the host this request was sent to; "
    "Kenfold accepts no requests from web pages"
)


def cross_origin_refusal(*, sec_fetch_site: str | None, origin: str | None, host: str) -> str | None:
    """Why a request looks like it comes from a web page of another origin, or None if it does not.

    The one rule for the API, the dashboard's forms and the OAuth consent form; each surface decides which
    requests it applies to (every API request, but only a page's POSTs: a GET may be a link followed from
    anywhere). `host` is the Host header the request was sent to.

    Agents and sync clients send neither header; a browser sends at least one, and a page of Kenfold's own
    sends `Sec-Fetch-Site: same-origin` and its own origin. So a malicious page cannot make a visitor's
    browser talk to a Kenfold it can reach (such as localhost). `same-site` is refused too: another port
    or subdomain of the same host is another program.
    """
    site = (sec_fetch_site or "").strip().lower()
    if site == "cross-site":
        return CROSS_SITE
    if site not in ("", "same-origin", "none"):  # "none": the user typed the URL or used a bookmark
        return NOT_SAME_ORIGIN
    if origin is None:
        return None
    parts = urlsplit(origin.strip())
    # `Origin: null` (sandboxed pages, file: URLs) has no host and is refused like any foreign origin.
    if not host_allowed(parts.netloc):
        return ORIGIN_NOT_ALLOWED
    if parts.scheme.lower() not in ("http", "https") or parts.netloc.lower() != host.strip().lower():
        return ORIGIN_ELSEWHERE
    return None


def form_post_refusal(request: HttpRequest) -> str | None:
    """The rule for a Django page's form POST (the dashboard's forms, the OAuth consent form)."""
    return cross_origin_refusal(
        sec_fetch_site=request.headers.get("Sec-Fetch-Site"),
        origin=request.headers.get("Origin"),
        host=request.get_host(),
    )
