"""/dashboard/…: every view behind dashboard.guard (availability, headers, session, CSRF)."""

from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect
from django.urls import path, re_path

from dashboard import evals, views
from dashboard.guard import dashboard_page, plain


def _slash(request: HttpRequest) -> HttpResponse:
    return HttpResponsePermanentRedirect("/dashboard/")


def _get(view, **options):
    return dashboard_page(_only("GET", view), **options)


def _post(view, **options):
    return dashboard_page(_only("POST", view), **options)


def _only(method: str, view):
    def checked(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method != method and not (method == "GET" and request.method == "HEAD"):
            response = plain(405, f"This address takes {method} only.")
            response["Allow"] = method
            return response
        return view(request, *args, **kwargs)

    return checked


urlpatterns = [
    path("dashboard", dashboard_page(_slash, login_required=False)),
    path("dashboard/", _get(views.overview)),
    path("dashboard/login", dashboard_page(views.login, login_required=False)),
    path("dashboard/logout", _post(views.logout)),
    path("dashboard/review", _get(views.review)),
    path("dashboard/review/<str:memory_id>/approve", _post(views.review_approve)),
    path("dashboard/review/<str:memory_id>/reject", _post(views.review_reject)),
    path("dashboard/memories", _get(views.memories)),
    path("dashboard/memories/<str:memory_id>", _get(views.memory_detail)),
    path("dashboard/memories/<str:memory_id>/forget", _post(views.memory_forget)),
    path("dashboard/audit", _get(views.audit_page)),
    path("dashboard/usage", _get(views.usage_page)),
    path("dashboard/clients", _get(views.clients)),
    path("dashboard/clients/keys", _post(views.key_create)),
    path("dashboard/clients/keys/<uuid:key_id>/revoke", _post(views.key_revoke)),
    path("dashboard/clients/keys/<uuid:key_id>/projects", _post(views.key_projects)),
    path("dashboard/clients/grants/<uuid:grant_id>/revoke", _post(views.grant_revoke_view)),
    path("dashboard/proposals", _get(views.proposals)),
    path("dashboard/proposals/<str:proposal_id>/apply", _post(views.proposal_apply)),
    path("dashboard/proposals/<str:proposal_id>/reject", _post(views.proposal_reject)),
    path("dashboard/evals", _get(evals.evals)),
    path("dashboard/evals/questions", _post(evals.question_add)),
    path("dashboard/evals/questions/<str:question_id>/remove", _post(evals.question_remove)),
    path("dashboard/evals/run", _post(evals.run_now)),
    re_path(r"^dashboard/(?P<rest>.*)$", dashboard_page(views.not_a_page, login_required=False)),
]
