"""Who is calling: resolved once per request (API key, OAuth grant, stdio agent) and passed to services.

Agent identity never comes from tool arguments or client-reported names when a credential exists.
"""

from dataclasses import dataclass

from kenfold_common.errors import PermissionDenied


@dataclass(frozen=True)
class Caller:
    agent: str
    read_only: bool = False
    # Set for OAuth callers: a read-only grant asking to write gets HTTP 403 insufficient_scope, which
    # makes an MCP client ask the owner for more (step-up), instead of a tool error.
    oauth_grant: str | None = None
    # The credential that authenticated the call, `key:<api key id>` or `grant:<oauth grant id>`; None for
    # stdio, KENFOLD_AUTH=none and the owner's own commands. Limits, quotas and the audit trail hang on it.
    credential: str | None = None
    # The projects (normalized identities) the credential may read and write, None for every project, and
    # whether it reads user-wide memories. access.reach is the one place that applies them.
    projects: frozenset[str] | None = None
    user_memories: bool = True

    def require_write(self, tool: str) -> None:
        if self.read_only:
            raise PermissionDenied(
                f"{tool} is not allowed: this client was granted read-only access, so it can use get_context "
                "and recall but cannot change memory (the owner can connect it again with write access)"
            )
