"""Management commands report a domain error as a CommandError carrying the service's own message."""

import io
from collections.abc import Callable

import pytest
from django.core.management import CommandError, call_command

from access import keys
from access.caller import Caller
from coderefs.schemas import CheckInput, CheckResult
from coderefs.services import refs_check
from kenfold_common.errors import KenfoldError
from kenfold_common.text import for_terminal
from memories.services.remember import memory_remember
from memories.services.review import CLI_AGENT, memory_forget

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("argv", "service_call"),
    [
        (["key", "revoke", "kf_zzzzzzzz"], lambda: keys.api_key_revoke(ident="kf_zzzzzzzz")),
        (
            ["memory", "forget", "not-an-id"],
            lambda: memory_forget(caller=Caller(agent=CLI_AGENT), memory_id="not-an-id"),
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


HOSTILE = (
    "Deploys \x1b[2J\x1b[31mfreeze\x1b[0m on \u202efridays\u202c\u200b; see `ship_release` in app/ship.py\x07"
)


def _run(*argv: str) -> str:
    out = io.StringIO()
    call_command(*argv, stdout=out)
    return out.getvalue()


def test_agent_written_text_cannot_drive_the_terminal() -> None:
    project = "github.com/kenfold/kenfold"
    memory_id = memory_remember(caller=Caller(agent="codex"), content=HOSTILE, project=project).id
    refs_check(
        caller=Caller(agent="refs-sync"),
        check=CheckInput(
            project=project,
            commit="a" * 40,
            results=[CheckResult(path="app/ship.py", symbol="ship_release", found=True, hash="sym:1")],
        ),
    )
    refs_check(
        caller=Caller(agent="refs-sync"),
        check=CheckInput(
            project=project,
            commit="b" * 40,
            results=[
                CheckResult(path="app/ship.py", symbol="ship_release", anchor_commit="a" * 40, found=False)
            ],
        ),
    )
    for output in (_run("memory", "list"), _run("refs", "status"), _run("memory", "list", "--stale")):
        assert memory_id in output
        assert not [char for char in output if char not in "\n" and not char.isprintable()], output
        assert "\\x1b[2J\\x1b[31mfreeze\\x1b[0m on \\u202efridays\\u202c\\u200b" in output


def test_terminal_escaping_keeps_ordinary_text_as_it_is() -> None:
    text = "결제는 멱등 키로 중복을 막는다 — `charge()` in app/pay.py, 100 %\n\tnext line"
    assert for_terminal(text) == text
