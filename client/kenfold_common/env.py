"""Typed readers for KENFOLD_* environment variables that fail loudly on bad values.

Kept free of Django imports so that the client package and scripts can use the same rules.
A bad value stops the process with a message naming the variable, the value's problem and an example
of a good one: a server that silently falls back to a default is much harder to debug.
"""

import difflib
import os
import re
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit


class ConfigError(ValueError):
    """A KENFOLD_* variable has a value we cannot use."""


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None:
        return None
    value = value.strip()
    return value or None


def env_str(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ConfigError(f"{name}={value!r} is not a boolean; use true or false")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a whole number") from None
    _check_range(name, number, minimum, maximum)
    return number


def env_float(
    name: str, default: float, *, minimum: float | None = None, maximum: float | None = None
) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise ConfigError(f"{name}={value!r} must be a finite number")
    _check_range(name, number, minimum, maximum)
    return number


def _check_range(name: str, number: float, minimum: float | None, maximum: float | None) -> None:
    if minimum is not None and number < minimum:
        raise ConfigError(f"{name}={number} is below the minimum {minimum}")
    if maximum is not None and number > maximum:
        raise ConfigError(f"{name}={number} is above the maximum {maximum}")


def env_choice(name: str, default: str, choices: Iterable[str]) -> str:
    options = tuple(choices)
    value = _raw(name)
    if value is None:
        return default
    lowered = value.lower()
    if lowered not in options:
        raise ConfigError(f"{name}={value!r} is not one of: {', '.join(options)}")
    return lowered


def env_list(name: str, default: Iterable[str]) -> list[str]:
    """A comma-separated list; an explicitly empty list is an error (it would lock everyone out)."""
    if name not in os.environ:
        return list(default)
    items = [item.strip() for item in os.environ[name].split(",") if item.strip()]
    if not items:
        raise ConfigError(f"{name} is set but empty; give at least one value, comma-separated")
    return items


def env_url(name: str, default: str = "", *, schemes: Iterable[str] = ("http", "https")) -> str:
    value = _raw(name)
    if value is None:
        return default
    allowed = tuple(schemes)
    parts = urlsplit(value)
    if parts.scheme.lower() not in allowed or not parts.netloc:
        # Not echoed: a URL may carry credentials (user:password@ or a key in its query).
        raise ConfigError(f"{name} is not a valid URL; it must start with {' or '.join(allowed)}://")
    return value


def env_addr(name: str, default: str) -> tuple[str, int]:
    """host:port, with IPv6 hosts in brackets ([::1]:7077)."""
    value = _raw(name) or default
    host, sep, port_text = value.rpartition(":")
    if not sep or not host:
        raise ConfigError(f"{name}={value!r} must be host:port, for example 127.0.0.1:7077")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(
            f"{name}={value!r} has no valid port; use host:port, for example 127.0.0.1:7077"
        ) from None
    if not 1 <= port <= 65535:
        raise ConfigError(f"{name}={value!r}: the port must be between 1 and 65535")
    return host, port


def documented_variables(example: Path) -> frozenset[str]:
    """The KENFOLD_* variables an .env.example lists (a line that sets one, commented out or not). A test
    keeps it listing every variable the server and the client read, so it is the one list of them."""
    try:
        text = example.read_text()
    except OSError:
        return frozenset()
    return frozenset(re.findall(r"^#?\s*(KENFOLD_[A-Z0-9_]+)=", text, re.M))


def unknown_variable_warnings(known: Collection[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """One line for each KENFOLD_* variable set in the environment that Kenfold does not read, naming the
    closest real one: a misspelt setting is otherwise ignored without a word. Never the value, which may
    be a key. Nothing when `known` is empty (no list to compare with)."""
    if not known:
        return []
    given = os.environ if environ is None else environ
    lines = []
    # Compared without the shared prefix, which would make any two names look alike.
    suffixes = {name.removeprefix("KENFOLD_"): name for name in known}
    for name in sorted(n for n in given if n.startswith("KENFOLD_") and n not in known):
        closest = difflib.get_close_matches(name.removeprefix("KENFOLD_"), list(suffixes), n=1, cutoff=0.6)
        hint = f"; did you mean {suffixes[closest[0]]}?" if closest else ""
        lines.append(
            f"{name} is not a Kenfold setting and is ignored{hint} (.env.example lists every setting)"
        )
    return lines
