"""`{{ text|shown }}`: agent-written text as a person should read it in the dashboard.

The template engine escapes HTML; this also writes out the characters that are invisible or reorder
what follows (bidi overrides, zero-width characters, controls) as escapes, the same rule as terminal
output (kenfold_common.text), so that a page never shows something other than what is stored.
"""

from django import template

from access.reach import limit_summary
from kenfold_common.text import for_terminal

register = template.Library()


@register.filter
def shown(value: object) -> str:
    return for_terminal(str(value)) if value is not None else ""


@register.filter
def reach(credential: object) -> str:
    """What a key or grant may reach: `every project`, or `only <its projects>`."""
    return limit_summary(getattr(credential, "projects", None), getattr(credential, "user_memories", True))


@register.filter
def lines(values: list[str] | None) -> str:
    return "\n".join(values or ())
