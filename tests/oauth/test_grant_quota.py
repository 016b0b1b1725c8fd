"""`manage.py oauth quota`: an OAuth grant's own write quotas, and the answer a grant gets over them."""

import io
import uuid
from collections.abc import Callable

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from oauth2_provider.models import get_application_model

from access.caller import Caller
from kenfold_common.errors import QuotaExceeded
from memories.models import Memory
from memories.services.remember import memory_remember
from oauth.models import OAuthGrant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_embeddings(provider_env: Callable[..., None]) -> None:
    provider_env(KENFOLD_EMBED="off")


def test_the_owner_limits_one_grant_and_the_grant_is_told_which_limit_and_who_can_raise_it() -> None:
    application = get_application_model().objects.create(
        client_id="chatgpt",
        client_type="public",
        authorization_grant_type="authorization-code",
        name="ChatGPT",
    )
    grant = OAuthGrant.objects.create(
        id=uuid.UUID("abcd0000-0000-4000-8000-000000000001"),
        application=application,
        agent="chatgpt",
        scope="memory:read memory:write",
        resource="http://localhost/mcp",
        code_checksum="1" * 64,
        code_challenge="c",
        code_redeemed_at=timezone.now(),
    )
    out = io.StringIO()
    call_command("oauth", "quota", "abcd", "--memories-per-day", "1", stdout=out)
    assert out.getvalue().strip() == (
        f"Grant {grant.id} (agent chatgpt): 120 writes per minute (the default), 1 memories per day (its own)."
    )
    caller = Caller(agent="chatgpt", oauth_grant=str(grant.id), credential=f"grant:{grant.id}")
    memory_remember(caller=caller, content="The user likes short answers.")
    with pytest.raises(QuotaExceeded) as refused:
        memory_remember(caller=caller, content="The user writes Python.")
    message = refused.value.message
    assert f"this OAuth grant ({grant.id}) created 1 memories today (UTC)" in message
    assert "its limit is 1 memories per day (the grant's own limit)" in message
    assert f"`manage.py oauth quota {grant.id} --memories-per-day N` (0 = no limit)" in message
    assert Memory.objects.count() == 1
    with pytest.raises(CommandError, match="no grant id starts with"):
        call_command("oauth", "quota", "ffff", "--reset")
