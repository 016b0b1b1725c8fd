"""Management commands report a domain error as a CommandError carrying the service's own message."""

from collections.abc import Callable

import pytest
from django.core.management import CommandError, call_command

from kenfold.caller import Caller
from kenfold_common.errors import KenfoldError
from memories import keys, services

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("argv", "service_call"),
    [
        (["key", "revoke", "kf_zzzzzzzz"], lambda: keys.api_key_revoke(ident="kf_zzzzzzzz")),
        (
            ["memory", "forget", "not-an-id"],
            lambda: services.memory_forget(caller=Caller(agent=services.CLI_AGENT), memory_id="not-an-id"),
        ),
    ],
    ids=["key revoke", "memory forget"],
)
def test_a_domain_error_becomes_a_command_error_with_its_message(
    argv: list[str], service_call: Callable[[], object]
) -> None:
    with pytest.raises(KenfoldError) as raised_by_service:
        service_call()
    with pytest.raises(CommandError) as raised_by_command:
        call_command(*argv)
    assert str(raised_by_command.value) == raised_by_service.value.message
