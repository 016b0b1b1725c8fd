"""edge.urls as a server with KENFOLD_PUBLIC_URL set mounts it (edge.urls decides at import)."""

from django.urls import include, path

from edge.urls import urlpatterns as kenfold_patterns

urlpatterns = [*kenfold_patterns, path("", include("oauth.urls"))]
