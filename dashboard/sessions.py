"""Dashboard sessions (spec §1.17): 2 hours idle, 12 hours at most, 64 at once (the oldest go first),
ended by logout or a change of the owner password. Times come from kenfold.clock, so tests move them."""

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.db import transaction

from access.password import owner_stamp, password_check
from access.security import security_event
from dashboard.models import DashboardSession
from kenfold import clock

IDLE = timedelta(hours=2)
ABSOLUTE = timedelta(hours=12)
MAX_SESSIONS = 64
# Writing last_seen_at on every page would make every read a write; a minute is far below the idle limit.
TOUCH_RESOLUTION = timedelta(minutes=1)


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def session_login(*, password: str, remote: str) -> str:
    """Check the owner password (the dashboard's own count and lock) and open a session; returns the
    token for the cookie. Raises what access.password.password_check raises."""
    password_check(password=password, remote=remote, page="dashboard")
    security_event("dashboard login", remote=remote)
    token = secrets.token_urlsafe(32)
    now = clock.now()
    with transaction.atomic():
        DashboardSession.objects.create(
            token_hash=_hash(token),
            csrf_token=secrets.token_urlsafe(32),
            owner_stamp=owner_stamp(),
            created_at=now,
            last_seen_at=now,
        )
        _evict(now)
    return token


def _evict(now) -> None:
    DashboardSession.objects.filter(created_at__lte=now - ABSOLUTE).delete()
    DashboardSession.objects.filter(last_seen_at__lte=now - IDLE).delete()
    keep = DashboardSession.objects.order_by("-created_at").values_list("pk", flat=True)[:MAX_SESSIONS]
    DashboardSession.objects.exclude(pk__in=list(keep)).delete()


def session_resolve(*, token: str) -> DashboardSession | None:
    """The live session of a cookie token, or None (unknown, idle too long, too old, or the password
    changed since login; such a session is deleted)."""
    if not token:
        return None
    session = DashboardSession.objects.filter(token_hash=_hash(token)).first()
    if session is None:
        return None
    now = clock.now()
    if (
        now - session.created_at >= ABSOLUTE
        or now - session.last_seen_at >= IDLE
        or not hmac.compare_digest(session.owner_stamp, owner_stamp())
    ):
        session.delete()
        return None
    if now - session.last_seen_at >= TOUCH_RESOLUTION:
        DashboardSession.objects.filter(pk=session.pk).update(last_seen_at=now)
        session.last_seen_at = now
    return session


def session_end(*, session: DashboardSession) -> None:
    DashboardSession.objects.filter(pk=session.pk).delete()


def csrf_matches(*, session: DashboardSession, given: str) -> bool:
    return bool(given) and hmac.compare_digest(session.csrf_token.encode(), given.encode())


def flash_add(*, session: DashboardSession, level: str, text: str) -> None:
    with transaction.atomic():
        row = DashboardSession.objects.select_for_update().filter(pk=session.pk).first()
        if row is not None:
            row.flash = [*row.flash, [level, text]][-5:]
            row.save(update_fields=["flash"])


def flash_take(*, session: DashboardSession) -> list[tuple[str, str]]:
    if not session.flash:  # read with the session at the start of this request: most pages have none
        return []
    with transaction.atomic():
        row = DashboardSession.objects.select_for_update().filter(pk=session.pk).first()
        if row is None or not row.flash:
            return []
        messages = [(level, text) for level, text in row.flash]
        row.flash = []
        row.save(update_fields=["flash"])
    return messages
