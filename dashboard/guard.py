"""Who may reach the dashboard, and the headers and checks every page gets (spec §1.17).

Local mode answers only a loopback Host from a loopback peer and refuses any request a proxy forwarded: a
tunnel or a public reverse proxy in front of Kenfold must not expose the owner's pages. The peer address
is checked as well as the Host: a server bound to 0.0.0.0, or a proxy that passes `Host` on unchanged,
would otherwise let anyone who sends `Host: localhost` reach the login page. Remote mode (KENFOLD_DASHBOARD=remote,
with an https KENFOLD_PUBLIC_URL) also answers the public host, and then expects the proxy's headers.
A refused request gets 404, so the dashboard's existence is not revealed.
"""

import ipaddress
from collections.abc import Callable
from functools import wraps
from urllib.parse import quote, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.http.request import split_domain_port
from django.views.decorators.csrf import csrf_exempt

from dashboard import sessions
from kenfold.net import form_post_refusal, is_loopback_host

PREFIX = "/dashboard/"
COOKIE = "kenfold_dashboard"
MAX_BODY = 64 * 1024
FORWARDING_HEADERS = (
    "X-Forwarded-For",
    "X-Forwarded-Host",
    "Forwarded",
    "X-Real-Ip",
    "Cf-Connecting-Ip",
    "True-Client-Ip",
)
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

View = Callable[..., HttpResponse]


def _host(request: HttpRequest) -> str:
    domain, _port = split_domain_port(request.META.get("HTTP_HOST", "").lower())
    return domain[1:-1] if domain.startswith("[") and domain.endswith("]") else domain


def public_host(request: HttpRequest) -> bool:
    """Whether the request came through the public URL (remote mode only)."""
    return settings.DASHBOARD == "remote" and _host(request) == (urlsplit(settings.PUBLIC_URL).hostname or "")


def _loopback_peer(request: HttpRequest) -> bool:
    """Whether the connection comes from this machine (the ASGI client address, as REMOTE_ADDR)."""
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR") or "")
    except ValueError:
        return False
    # A dual-stack socket reports an IPv4 peer as ::ffff:127.0.0.1, which Python 3.12 does not call loopback.
    if isinstance(peer, ipaddress.IPv6Address) and peer.ipv4_mapped is not None:
        peer = peer.ipv4_mapped
    return peer.is_loopback


def reachable(request: HttpRequest) -> bool:
    if public_host(request):
        return True
    if not is_loopback_host(_host(request)) or not _loopback_peer(request):
        return False
    if settings.DASHBOARD == "remote":
        return True
    return not any(request.headers.get(name) is not None for name in FORWARDING_HEADERS)


def not_found() -> HttpResponse:
    return plain(404, "Not Found")


def plain(status: int, text: str) -> HttpResponse:
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
    for name, value in PAGE_HEADERS.items():
        response[name] = value
    return response


def safe_next(value: str | None) -> str:
    """A dashboard-relative path to go back to, or the overview: never another site (open redirect)."""
    text = value or ""
    if (
        not text.startswith(PREFIX)
        or "//" in text
        or "/../" in text
        or text.endswith("/..")
        or "\\" in text
        or "\r" in text
        or "\n" in text
        or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)
    ):
        return PREFIX
    return text


def set_cookie(request: HttpRequest, response: HttpResponse, token: str) -> None:
    response.set_cookie(
        COOKIE,
        token,
        max_age=int(sessions.ABSOLUTE.total_seconds()),
        path=PREFIX,
        secure=request.is_secure() or public_host(request),
        httponly=True,
        samesite="Strict",
    )


def clear_cookie(response: HttpResponse) -> None:
    response.delete_cookie(COOKIE, path=PREFIX, samesite="Strict")


def dashboard_page(view: View, *, login_required: bool = True) -> View:
    """Wrap a dashboard view: availability (404), security headers, the body bound, and for pages behind
    the login the session (GET → 303 to the login page; POST → 403) and its CSRF token on every POST.

    Django's own CSRF middleware is not used here: the token lives in the dashboard session (a form
    posted without a session, or with another session's token, is refused the same way). The login form,
    which has no session yet, is protected by the cross-origin check and the SameSite=Strict cookies.
    """

    @wraps(view)
    def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        response = _guarded(request, *args, **kwargs)
        for name, value in PAGE_HEADERS.items():
            response[name] = value
        return response

    def _guarded(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if not reachable(request):
            return not_found()
        if request.method == "POST":
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = MAX_BODY + 1
            if length > MAX_BODY:
                return plain(413, "Request too large: a dashboard form is at most 64 KiB.")
            if form_post_refusal(request) is not None:
                return plain(403, "Forbidden: this form was posted from another site. Nothing was changed.")
        elif request.method not in ("GET", "HEAD"):
            response = plain(405, "Use GET, or the page's forms (POST).")
            response["Allow"] = "GET, HEAD, POST"
            return response
        session = sessions.session_resolve(token=request.COOKIES.get(COOKIE, ""))
        request.dashboard_session = session
        if login_required:
            if session is None:
                if request.method == "POST":
                    response = plain(403, "Forbidden: your dashboard session ended. Log in again.")
                    clear_cookie(response)
                    return response
                return HttpResponseRedirect(
                    "/dashboard/login?next=" + quote(request.get_full_path(), safe="/"), status=303
                )
            if request.method == "POST" and not sessions.csrf_matches(
                session=session, given=request.POST.get("csrf", "")
            ):
                return plain(403, "Forbidden: the form's CSRF token is missing or wrong. Reload the page.")
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapped)
