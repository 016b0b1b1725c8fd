from django.conf import settings
from django.urls import include, path, re_path

from edge import views
from edge.api import api, not_found

urlpatterns = [
    path("", views.index),
    path("healthz", views.healthz),
    path("readyz", views.readyz),
    path("api/v1/", api.urls),
    # A handful of small files (API docs, later the dashboard's CSS): served by Django itself, so a
    # single `make run` needs no separate web server.
    re_path(r"^static/(?P<path>.*)$", views.static_file),
    # Anything else under /api/ answers in the API's own error shape, not with an HTML page.
    re_path(r"^api/(?P<rest>.*)$", not_found),
]
# The owner's dashboard, unless KENFOLD_DASHBOARD=off (then /dashboard/ is an unknown path like any other).
if settings.DASHBOARD != "off":
    urlpatterns.append(path("", include("dashboard.urls")))
# OAuth for remote clients exists only with a public URL: without one nothing of it is reachable.
if settings.PUBLIC_URL:
    urlpatterns.append(path("", include("oauth.urls")))
