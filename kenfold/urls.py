from django.urls import path

from kenfold import views

urlpatterns = [
    path("healthz", views.healthz),
    path("readyz", views.readyz),
]
