"""What a caller may reach: the one check every entry point makes (issue 38, "projects per key and grant").

A key or OAuth grant can be limited to projects (`Caller.projects`) and kept from user-wide memories
(`Caller.user_memories`). To such a caller a memory outside its reach does not exist: loading, superseding
or forgetting it answers exactly as for an id nobody ever stored, and a project outside its list is refused
with one message whether or not Kenfold holds that project, so nothing about other projects leaks.
User-wide memories are the owner's preferences: a project-limited caller may read them (unless the owner
said otherwise) but never writes them.
"""

from collections.abc import Iterable, Sequence

from access.caller import Caller
from kenfold_common.errors import NotFound, PermissionDenied
from kenfold_common.identity import PROJECT_SCOPE_PREFIX, USER_SCOPE, normalize_project

# How many of its own projects a refusal names: enough to pick from, short enough for a tool answer.
PROJECTS_NAMED = 10


def project_limit(projects: Iterable[str] | None) -> list[str] | None:
    """The normalized, sorted, de-duplicated identities of `projects`; None (every project) for None or
    nothing given."""
    if projects is None:
        return None
    cleaned = sorted({normalize_project(project) for project in projects if project and project.strip()})
    return cleaned or None


def scope_readable(caller: Caller, scope: str) -> bool:
    if scope == USER_SCOPE:
        return caller.user_memories
    if caller.projects is None:
        return True
    return (
        scope.startswith(PROJECT_SCOPE_PREFIX) and scope.removeprefix(PROJECT_SCOPE_PREFIX) in caller.projects
    )


def scope_writable(caller: Caller, scope: str) -> bool:
    if scope == USER_SCOPE:
        return caller.projects is None and caller.user_memories
    return scope_readable(caller, scope)


def readable_scopes(caller: Caller, scopes: Sequence[str]) -> list[str]:
    return [scope for scope in scopes if scope_readable(caller, scope)]


def _own_projects(caller: Caller) -> str:
    names = sorted(caller.projects or ())
    shown = ", ".join(names[:PROJECTS_NAMED]) + (
        f" and {len(names) - PROJECTS_NAMED} more" if len(names) > PROJECTS_NAMED else ""
    )
    return shown


def require_scope(*, caller: Caller, scope: str, write: bool) -> None:
    """Refuse a project (or the user-wide scope) the caller may not read, or write with `write`.

    The message never names the project asked for and is the same whether Kenfold holds it or not.
    """
    if (scope_writable if write else scope_readable)(caller, scope):
        return
    if scope == USER_SCOPE:
        if caller.projects is not None:
            raise PermissionDenied(
                "this credential is limited to projects and cannot "
                f"{'write' if write else 'read'} user-wide memories; pass one of its projects as project "
                f"({_own_projects(caller)})"
            )
        raise PermissionDenied(
            "this credential cannot read or write user-wide memories; pass a project "
            "(the owner chose this when creating the key or approving the client)"
        )
    raise PermissionDenied(
        "this credential is limited to other projects; pass one of its projects as project "
        f"({_own_projects(caller)}), or ask the owner to add the project to it"
    )


def require_memory(*, caller: Caller, scope: str | None, not_found: NotFound, write: bool) -> None:
    """A memory the caller may not read raises `not_found`, the very error an unknown id gets; a readable
    one it may not change (a user-wide memory for a project-limited caller) is refused as such."""
    if scope is None or not scope_readable(caller, scope):
        raise not_found
    if write and not scope_writable(caller, scope):
        require_scope(caller=caller, scope=scope, write=True)


def project_scopes_visible(caller: Caller) -> list[str] | None:
    """The project scopes a caller may see, for listings; None when it sees every project."""
    if caller.projects is None:
        return None
    return sorted(PROJECT_SCOPE_PREFIX + project for project in caller.projects)


def projects_column(projects: list[str] | None, user_memories: bool) -> str:
    """What a credential reaches, as listings show it: `all`, or its projects; `-user` when user-wide
    memories are kept from it."""
    reach = "all" if projects is None else ",".join(projects)
    return reach if user_memories else f"{reach} -user"


def limit_summary(projects: list[str] | None, user_memories: bool) -> str:
    """The same in words, for messages and the dashboard."""
    reach = "every project" if projects is None else "only " + ", ".join(projects)
    return f"{reach}{'' if user_memories else ', no user-wide memories'}"
