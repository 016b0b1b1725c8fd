"""`manage.py password`, `manage.py oauth clients|revoke`, and the hourly prune, in process."""

import io
import json
import sys
import uuid
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model, get_grant_model

from access.models import Owner
from access.password import password_check, password_set
from oauth.models import OAuthGrant
from oauth.tasks import prune_expired
from tests.oauth.conftest import Flow

pytestmark = pytest.mark.django_db


def _password_command(monkeypatch: pytest.MonkeyPatch, text: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text + "\n"))
    err = io.StringIO()
    call_command("password", "--stdin", stderr=err)
    return err.getvalue()


def test_password_is_stored_as_argon2id_and_clears_a_lockout(monkeypatch: pytest.MonkeyPatch) -> None:
    password_set(password="first password 1")
    later = timezone.now() + timedelta(minutes=15)
    Owner.objects.update(locked_until=later, failures=3, dashboard_locked_until=later, dashboard_failures=2)
    assert "lockout is cleared" in _password_command(monkeypatch, "second password 2")
    owner = Owner.objects.get()
    assert owner.password_hash.startswith("$argon2id$v=19$m=65536,t=3,p=2$")
    assert "second password 2" not in owner.password_hash
    assert owner.locked_until is None and owner.failures == 0
    assert owner.dashboard_locked_until is None and owner.dashboard_failures == 0
    password_check(password="second password 2", remote="test", page="consent")
    password_check(password="second password 2", remote="test", page="dashboard")


def test_a_short_password_is_refused_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    password_set(password="first password 1")
    before = Owner.objects.get().password_hash
    with pytest.raises(CommandError, match="at least 12 characters"):
        _password_command(monkeypatch, "short")
    assert Owner.objects.get().password_hash == before


def test_password_without_a_terminal_says_to_use_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    with pytest.raises(CommandError, match="--stdin"):
        call_command("password")


def test_oauth_clients_lists_and_revoke_ends_a_grant(flow: Flow) -> None:
    flow.tokens(access="write", agent="chatgpt")
    out = io.StringIO()
    call_command("oauth", "clients", stdout=out)
    row = next(line for line in out.getvalue().splitlines() if "chatgpt" in line)
    assert "Test Client" in row and "read+write" in row and "active" in row
    out = io.StringIO()
    call_command("oauth", "clients", "--json", stdout=out)
    listed = json.loads(out.getvalue().splitlines()[0])
    assert (
        listed["agent"] == "chatgpt" and listed["access"] == "read+write" and listed["last_used_at"] is None
    )
    out = io.StringIO()
    call_command("oauth", "revoke", listed["grant"][:8], stdout=out)
    assert "Revoked grant" in out.getvalue()
    grant = OAuthGrant.objects.get()
    assert grant.revoked_at is not None and grant.revoke_reason == "revoked by the owner"
    assert not get_access_token_model().objects.filter(scope__startswith="memory").exists()


def test_an_ambiguous_or_unknown_prefix_is_refused(flow: Flow) -> None:
    application = get_application_model().objects.get(client_id=flow.client_id)
    for n in range(2):
        OAuthGrant.objects.create(
            id=uuid.UUID(f"abcd0000-0000-4000-8000-00000000000{n}"),
            application=application,
            agent="a",
            scope="memory:read",
            resource="http://localhost/mcp",
            code_checksum=str(n) * 64,
            code_challenge="c",
            code_redeemed_at=timezone.now(),
        )
    with pytest.raises(CommandError, match="2 grants start with abcd"):
        call_command("oauth", "revoke", "abcd")
    with pytest.raises(CommandError, match="no grant id starts with"):
        call_command("oauth", "revoke", "ffff")
    with pytest.raises(CommandError, match="at least its first 4"):
        call_command("oauth", "revoke", "ab")
    assert not OAuthGrant.objects.filter(revoked_at__isnull=False).exists()


def test_prune_removes_what_expired_a_day_ago_and_keeps_the_rest(flow: Flow) -> None:
    live = flow.tokens()
    flow.code()  # an unredeemed code, still fresh
    assert prune_expired() == {
        "codes": 0,
        "access_tokens": 0,
        "refresh_tokens": 0,
        "clients": 0,
        "unredeemed_grants": 0,
    }
    two_days_ago = timezone.now() - timedelta(days=2)
    get_grant_model().objects.update(expires=two_days_ago)
    OAuthGrant.objects.filter(code_redeemed_at__isnull=True).update(created_at=two_days_ago)
    abandoned = get_application_model().objects.create(
        name="never finished", client_type="public", authorization_grant_type="authorization-code"
    )
    get_application_model().objects.filter(pk=abandoned.pk).update(created=two_days_ago)
    counts = prune_expired()
    assert counts["codes"] == 1 and counts["unredeemed_grants"] == 1 and counts["clients"] >= 1
    assert not get_application_model().objects.filter(pk=abandoned.pk).exists()
    from oauth.resource import verify_access_token

    assert verify_access_token(token=live["access_token"]).agent == "remote-agent"


def test_prune_keeps_rotated_refresh_tokens_so_a_late_replay_still_ends_the_grant(flow: Flow) -> None:
    from oauth2_provider.models import get_refresh_token_model

    first = flow.tokens()
    second = flow.refresh(first["refresh_token"]).json()
    get_refresh_token_model().objects.filter(revoked__isnull=False).update(
        revoked=timezone.now() - timedelta(days=2)
    )
    assert prune_expired()["refresh_tokens"] == 0
    assert flow.refresh(first["refresh_token"]).status_code == 400
    assert flow.refresh(second["refresh_token"]).status_code == 400
    assert OAuthGrant.objects.get().revoke_reason == "refresh token reused"
