"""access.reach: which scopes a credential's limit lets it read and write, and what a refusal says."""

import pytest

from access.caller import Caller
from access.reach import project_limit, require_memory, require_scope, scope_readable, scope_writable
from kenfold_common.errors import NotFound, PermissionDenied

SHOP = "project:github.com/acme/shop"
WORK = "project:github.com/acme/work"
LIMITED = Caller(agent="chatgpt", projects=frozenset({"github.com/acme/shop"}))
HIDDEN = Caller(agent="chatgpt", projects=frozenset({"github.com/acme/shop"}), user_memories=False)
NO_USER = Caller(agent="codex", user_memories=False)
FULL = Caller(agent="codex")


@pytest.mark.parametrize(
    ("caller", "scope", "readable", "writable"),
    [
        (FULL, "user", True, True),
        (FULL, WORK, True, True),
        (LIMITED, SHOP, True, True),
        (LIMITED, WORK, False, False),
        (LIMITED, "repo:1234", False, False),
        (LIMITED, "user", True, False),
        (HIDDEN, "user", False, False),
        (NO_USER, "user", False, False),
        (NO_USER, WORK, True, True),
    ],
)
def test_what_a_limit_lets_a_caller_read_and_write(
    caller: Caller, scope: str, readable: bool, writable: bool
) -> None:
    assert (scope_readable(caller, scope), scope_writable(caller, scope)) == (readable, writable)


def test_project_limits_are_normalized_and_nothing_means_every_project() -> None:
    assert project_limit(["git@github.com:Acme/Shop.git", "https://github.com/acme/shop", " "]) == [
        "github.com/acme/shop"
    ]
    assert project_limit([]) is None and project_limit(None) is None


def test_a_refusal_names_the_callers_projects_and_never_the_one_asked_for() -> None:
    with pytest.raises(PermissionDenied) as refused:
        require_scope(caller=LIMITED, scope=WORK, write=False)
    assert "github.com/acme/shop" in refused.value.message and "work" not in refused.value.message
    with pytest.raises(PermissionDenied, match="cannot write user-wide memories"):
        require_scope(caller=LIMITED, scope="user", write=True)


def test_a_memory_out_of_reach_raises_the_unknown_ids_error_itself() -> None:
    unknown = NotFound("memory x does not exist")
    for scope in (WORK, None):
        with pytest.raises(NotFound) as raised:
            require_memory(caller=LIMITED, scope=scope, not_found=unknown, write=True)
        assert raised.value is unknown
    with pytest.raises(PermissionDenied):
        require_memory(caller=LIMITED, scope="user", not_found=unknown, write=True)
    require_memory(caller=LIMITED, scope="user", not_found=unknown, write=False)
