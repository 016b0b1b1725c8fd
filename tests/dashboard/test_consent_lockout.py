"""One lockout for the owner password: wrong guesses at the dashboard and at the OAuth consent page count
together, and the lock holds on both (spec §1.16-1.17)."""

from django.test import Client

from dashboard.models import DashboardSession
from oauth.models import Owner
from tests.dashboard.conftest import HOST, log_in
from tests.oauth.conftest import Flow, browser, client_id, flow, oauth, owner_password  # noqa: F401 (fixtures)
from tests.oauth.support import pkce


def test_wrong_passwords_at_the_dashboard_and_the_consent_page_count_together(flow: Flow) -> None:  # noqa: F811
    dashboard = Client(headers={"host": HOST})
    _verifier, challenge = pkce()
    url = flow.authorize_url(challenge)
    assert [log_in(dashboard, f"wrong guess {n}").status_code for n in range(3)] == [401] * 3
    assert [flow.consent(url, password=f"consent guess {n}").status_code for n in range(2)] == [401] * 2
    assert Owner.objects.get().locked_until is not None
    # Locked for both, even with the right password.
    locked = flow.consent(url)
    assert locked.status_code == 429 and "Try again in 15 minutes" in locked.content.decode()
    assert log_in(dashboard).status_code == 429
    assert not DashboardSession.objects.exists()
