"""Host allowlist (DNS-rebinding defence) shared by every HTTP surface.

Django's own ALLOWED_HOSTS check cannot be used: /mcp is served by the MCP SDK and never passes through
Django's middleware, and /healthz and /readyz must answer whatever Host a container health check sends.
So the rule lives here, once, and both the Django middleware below and the ASGI router call it.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.request import split_domain_port, validate_host

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
HOST_FORBIDDEN = "forbidden: host not allowed"


def host_allowed(host_header: str) -> bool:
    """Whether a Host header names an allowed host. The port is ignored; `a.b:80.evil` is refused."""
    domain, _port = split_domain_port(host_header.lower())
    if domain.startswith("[") and domain.endswith("]"):  # an IPv6 literal is listed without brackets
        domain = domain[1:-1]
    return bool(domain) and validate_host(domain, settings.KENFOLD_ALLOWED_HOSTS)


class HostAllowlistMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path not in OPEN_PATHS and not host_allowed(request.META.get("HTTP_HOST", "")):
            return JsonResponse({"error": HOST_FORBIDDEN}, status=403)
        return self.get_response(request)
