"""The owner password's lockouts: wrong guesses at the public OAuth consent page and at the dashboard are
counted apart, so that whoever guesses at the consent page cannot lock the owner out of the local dashboard
(issue 37; spec §1.16-1.17)."""

from django.test import Client

from access.models import Owner
from dashboard.models import DashboardSession
from tests.dashboard.conftest import HOST, log_in
from tests.oauth.conftest import Flow, browser, client_id, flow, oauth, owner_password  # noqa: F401 (fixtures)
from tests.oauth.support import pkce


def test_wrong_passwords_at_the_consent_page_do_not_lock_the_dashboard(flow: Flow) -> None:  # noqa: F811
    dashboard = Client(headers={"host": HOST})
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge)
    assert [flow.consent(url, password=f"consent guess {n}").status_code for n in range(5)] == [401] * 5
    locked = flow.consent(url)
    assert locked.status_code == 429 and "Try again in 15 minutes" in locked.content.decode()
    assert log_in(dashboard).status_code == 303, "the owner still logs in to the dashboard"
    assert DashboardSession.objects.count() == 1


def test_wrong_passwords_at_the_dashboard_do_not_lock_the_consent_page(flow: Flow) -> None:  # noqa: F811
    dashboard = Client(headers={"host": HOST})
    assert [log_in(dashboard, f"wrong guess {n}").status_code for n in range(5)] == [401] * 5
    assert log_in(dashboard).status_code == 429
    owner = Owner.objects.get()
    assert owner.dashboard_locked_until is not None and owner.locked_until is None
    _verifier, challenge = pkce()
    assert flow.consent(flow.authorize_url(challenge)).status_code == 302
