"""The one place services read the time, so tests can move it without sleeping or patching."""

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.utils import timezone

_frozen_at: datetime | None = None


def now() -> datetime:
    return _frozen_at if _frozen_at is not None else timezone.now()


@contextmanager
def frozen(at: datetime) -> Iterator[None]:
    """Make now() return `at` inside the block (tests only)."""
    global _frozen_at
    previous, _frozen_at = _frozen_at, at
    try:
        yield
    finally:
        _frozen_at = previous
