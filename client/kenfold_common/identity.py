"""Project identity, scopes, agent names and session ids (spec §1.2).

A project is identified by its normalized git remote, ``host/path`` in lower case, so the same repository is
the same project on every machine and for every agent whatever URL form each one passes
(``https://github.com/Org/Repo.git`` and ``git@github.com:org/repo`` are both ``github.com/org/repo``).
Local paths are refused because they differ per machine. The server and the agent-side client both use
these rules (the hook normalizes locally, so remote credentials never leave the machine).
"""

import re
from collections.abc import Mapping

from kenfold_common.errors import InvalidInput
from kenfold_common.secrets import reject_secrets
from kenfold_common.text import has_invisible

USER_SCOPE = "user"
PROJECT_SCOPE_PREFIX = "project:"
# Scopes keyed by a repository id rather than its remote (the original's form); stored, never produced here.
REPO_SCOPE_PREFIX = "repo:"
MAX_PROJECT_LENGTH = 256
MAX_SESSION_ID_LENGTH = 128
SESSION_ID_META_KEY = "kenfold/session_id"
UNKNOWN_AGENT = "unknown"

# The database constraint on API keys uses the same pattern. Checked with fullmatch: a bare "$" would also
# accept a name followed by a newline.
AGENT_NAME_PATTERN = r"^[a-z0-9][a-z0-9._-]{0,63}$"
AGENT_NAME_RE = re.compile(AGENT_NAME_PATTERN)
_AGENT_NAME_RULE = (
    "1-64 characters of lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
)
_AGENT_NAME_MAX_LENGTH = 64
_NOT_AGENT_NAME_CHAR_RE = re.compile(r"[^a-z0-9._-]")

# "." and "..", and their backslash forms, are local too: an agent passing its working directory means
# "this checkout", which is a different project on every machine.
# Matched after lowercasing, which also makes "FILE://" and "C:\\" local.
_LOCAL_PATH_RE = re.compile(r"^(?:[/~\\]|\.\.?(?:[/\\]|$)|file://|[a-z]:[/\\])")
_NUMERIC_PORT_RE = re.compile(r":[0-9]+$")
_HOW_TO_NAME_A_PROJECT = (
    "pass the repository's git remote URL (for example git@github.com:org/repo.git) or a short project name"
)


def _without_scheme(identity: str) -> str:
    _, _, rest = identity.partition("://")
    for marker in ("?", "#"):
        rest = rest.partition(marker)[0]
    return rest


def _scp_to_path(identity: str) -> str:
    """``[user@]host:path`` becomes ``host/path``; a colon after the first "/" belongs to the path."""
    host, colon, path = identity.partition(":")
    if not colon or "/" in host:
        return identity
    return f"{host}/{path}"


def _without_credentials(identity: str) -> str:
    authority, slash, path = identity.partition("/")
    # The last "@" ends the credentials: an unescaped "@" inside a password must not leak into the identity.
    return authority.rpartition("@")[2] + slash + path


def _without_port(identity: str) -> str:
    authority, slash, path = identity.partition("/")
    return _NUMERIC_PORT_RE.sub("", authority) + slash + path


def _normalize_once(identity: str) -> str:
    """One pass of the rules: scheme or scp form, credentials and port, trailing "/" and ".git"."""
    return _strip_decorations(identity.strip().lower())


def _strip_decorations(identity: str) -> str:
    if "://" in identity:
        identity = _without_port(_without_credentials(_without_scheme(identity)))
    else:
        # Credentials first: in "user:token@host:org/repo" the first ":" is not the scp separator.
        identity = _scp_to_path(_without_credentials(identity))
    return identity.rstrip("/").removesuffix(".git").rstrip("/").strip()


def normalize_project(project: str) -> str:
    """The lowercase ``host/path`` identity of ``project``, a fixed point: normalizing it again gives it back.

    Raises ``InvalidInput`` for local paths and for values that are empty, too long or contain control
    characters once normalized.
    """
    # The messages below never echo the value: a remote URL may carry a token in its credentials.
    if _LOCAL_PATH_RE.match(project.strip().lower()):
        raise InvalidInput(
            f"project is a local path; {_HOW_TO_NAME_A_PROJECT}, so every machine maps it to the same project"
        )
    # One pass can leave a form the next pass changes: "repo.git.git" loses one ".git", and
    # "https://host:org/repo" leaves the scp form "host:org/repo". Stored scopes must be the fixed point,
    # or one repository becomes two projects. Every pass that changes the value makes it shorter or turns
    # one ":" into "/" (lowercasing changes nothing after the first), so the loop ends.
    identity = _normalize_once(project)
    while (again := _normalize_once(identity)) != identity:
        identity = again
    if not identity:
        raise InvalidInput(
            "project is empty once the scheme, credentials, port and trailing .git are removed; "
            f"{_HOW_TO_NAME_A_PROJECT}, or omit project for user-wide memories"
        )
    # What is left must not read as a local path either ("https://~/x" leaves "~/x"): normalizing the
    # result again would refuse it.
    if _LOCAL_PATH_RE.match(identity) or not any(char.isalnum() for char in identity):
        raise InvalidInput(
            "project has no host or name left once the scheme, credentials, port and trailing .git are "
            f"removed; {_HOW_TO_NAME_A_PROJECT}"
        )
    if len(identity) > MAX_PROJECT_LENGTH:
        raise InvalidInput(
            f"project is {len(identity)} characters after normalization, more than the "
            f"{MAX_PROJECT_LENGTH} allowed; {_HOW_TO_NAME_A_PROJECT}"
        )
    # Invisible or reordering characters would make two identities that look the same two projects.
    if has_invisible(identity):
        raise InvalidInput(
            "project contains control or invisible characters (such as a newline, a tab, a zero-width space "
            f"or a right-to-left override); remove them and {_HOW_TO_NAME_A_PROJECT}"
        )
    # The scope keeps what is left, so that is scanned, as typed as well as lowercased: lowercasing hides
    # the shape of a token ("ghp_" then mixed case). Credentials and a query are scanned in neither: they
    # are dropped, never stored, so a remote URL with a token in it stays a valid project.
    for text in (_strip_decorations(project.strip()), identity):
        reject_secrets(field="project", text=text, named=True)
    return identity


def scope_for_project(project: str | None) -> str:
    """``user`` when no project is given, else ``project:<normalized identity>``."""
    if project is None or not project.strip():
        return USER_SCOPE
    return PROJECT_SCOPE_PREFIX + normalize_project(project)


def is_project_scope(scope: str) -> bool:
    """Whether a stored scope belongs to a repository (only those have code references)."""
    return scope.startswith((PROJECT_SCOPE_PREFIX, REPO_SCOPE_PREFIX))


def scope_from_owner(value: str) -> str:
    """The stored scope an owner names on the command line or in the dashboard: a scope as listed
    (``user``, ``project:github.com/o/r``) or a project as agents pass it (``git@github.com:o/r.git``)."""
    value = value.strip()
    if value == USER_SCOPE or is_project_scope(value):
        return value
    return scope_for_project(value)


def is_valid_agent_name(name: str) -> bool:
    return AGENT_NAME_RE.fullmatch(name) is not None


def is_reserved_agent_name(name: str) -> bool:
    """Names Kenfold itself writes as (`kenfold`, `kenfold-dashboard`, …) or uses for "nobody knows"
    (`unknown`): a credential the owner hands out may not claim them."""
    return name in (UNKNOWN_AGENT, "kenfold") or name.startswith("kenfold-")


def check_credential_agent(agent: str, *, what: str = "the agent name") -> None:
    """The one rule for the agent a credential (an API key, an OAuth grant) writes as: a valid name that
    Kenfold does not keep for itself. Raises InvalidInput that never repeats the name."""
    if not is_valid_agent_name(agent):
        raise InvalidInput(invalid_agent_name_message(what, example="claude-code"))
    if is_reserved_agent_name(agent):
        raise InvalidInput(
            f"{what} is one Kenfold keeps for itself (unknown, kenfold, kenfold-…): a credential may not write "
            "as Kenfold; choose the agent's own name, such as claude-code"
        )


def invalid_agent_name_message(what: str, *, example: str) -> str:
    """Why a name was refused, without the name itself (it may be anything a caller typed)."""
    return f"{what} is not a valid agent name: use {_AGENT_NAME_RULE} (for example {example})"


def sanitize_agent_name(name: str | None) -> str:
    """A valid agent name from a client's own name (``Claude Code`` -> ``claude-code``), else ``unknown``."""
    if name is None:
        return UNKNOWN_AGENT
    # Surrounding whitespace is trimmed first so "Codex " does not become "codex-".
    candidate = _NOT_AGENT_NAME_CHAR_RE.sub("-", name.strip().lower())
    candidate = candidate.lstrip("._-")[:_AGENT_NAME_MAX_LENGTH]
    return candidate if is_valid_agent_name(candidate) else UNKNOWN_AGENT


def parse_session_id(meta: Mapping[str, object] | None) -> str | None:
    """The trimmed ``kenfold/session_id`` from a request's ``_meta``; None when absent or unusable."""
    if meta is None:
        return None
    value = meta.get(SESSION_ID_META_KEY)
    if not isinstance(value, str):
        return None
    session_id = value.strip()
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH or has_invisible(session_id):
        return None
    return session_id
