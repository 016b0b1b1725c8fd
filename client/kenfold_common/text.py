"""Characters that are invisible or take control when text reaches a person.

Agents write memories; the owner reads them in a terminal. A control character (ESC starts sequences that
clear the screen, move the cursor or recolour text), a bidi override or isolate (reorders what follows),
a zero-width or byte-order mark, or a line/paragraph separator can make text show something other than
what is stored. The same set is refused in project identities (identity.py) and escaped in every
terminal output (`for_terminal`).
"""

import unicodedata

# Controls (C0 and C1), format characters (bidi, zero-width, byte-order mark), surrogates, private use,
# unassigned code points, and the line and paragraph separators.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# Line structure and tabs of our own output stay as they are; the server never prints a tab or newline
# from agent text without choosing to (listings fold agent whitespace to single spaces).
_KEPT = frozenset("\n\t")


def is_invisible(char: str) -> bool:
    return unicodedata.category(char) in INVISIBLE_CATEGORIES


def has_invisible(text: str) -> bool:
    return any(is_invisible(char) for char in text)


def for_terminal(text: str) -> str:
    r"""`text` with every invisible or controlling character but newline and tab written as its Python
    escape (\x1b, \u202e), so that what a person reads is what is stored."""
    if text.isprintable():
        return text
    return "".join(
        char if char in _KEPT or not is_invisible(char) else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
