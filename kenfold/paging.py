"""How a list is cut into pages, written once for every surface: an agent's `limit` (MCP and REST), a
selector's window of rows (commands, the dashboard), the dashboard's `?page=`.

The maxima differ by surface on purpose, as the spec states them: an agent's recall answers with at most 50
memories (§1.5), because every one of them costs the agent's context; a listing for the owner or a command
reads at most 500 rows a call (§1.9 `refs status`); the dashboard counts at most 1000 pages (§1.17), so a crafted `?page=` cannot make
PostgreSQL skip millions of rows.
"""

from kenfold_common.errors import InvalidInput

AGENT_LIMIT_MAX = 50
LIST_LIMIT_MAX = 500
PAGE_MAX = 1000


def _out_of_range(name: str, maximum: int) -> InvalidInput:
    return InvalidInput(f"{name} must be between 1 and {maximum}")


def agent_limit(limit: int | None, *, default: int, maximum: int = AGENT_LIMIT_MAX) -> int:
    """An agent's `limit`: absent or 0 is the default, more than the maximum is the maximum (an agent that
    asks for many gets all it may have), below 0 is refused."""
    if not limit:
        return default
    if limit < 0:
        raise _out_of_range("limit", maximum)
    return min(limit, maximum)


def window(*, limit: int, offset: int = 0, maximum: int = LIST_LIMIT_MAX) -> slice:
    """The rows a selector reads from its ordered query: at least 1 and at most `maximum`, from `offset`
    (never before the first row). A bound on the work, not a check of input: adapters check theirs."""
    start = max(0, offset)
    return slice(start, start + max(1, min(limit, maximum)))


def page_number(raw: str | None, *, maximum: int = PAGE_MAX) -> int:
    """A page number as a query string gives it: 1 when absent, else a whole number from 1 to `maximum`."""
    text = raw or "1"
    # isdigit alone passes "²", which int() cannot read.
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= maximum:
        raise _out_of_range("page", maximum)
    return int(text)
