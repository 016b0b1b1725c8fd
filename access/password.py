"""The owner's password and its lockout (spec §1.16): the consent page's and the dashboard's.

The lockout is a counter in the owner's row, updated in a row-locked transaction, so that five wrong
passwords lock the page they were typed on for every worker and replica at once; the count is committed
even when the attempt fails. The consent page and the dashboard count apart: the consent page is public,
and whoever guesses there must not lock the owner out of the local dashboard.
"""

import hashlib
import threading
from datetime import timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from django.db import transaction

from access.models import Owner
from access.security import security_event
from kenfold import clock
from kenfold_common.errors import AuthenticationFailed, InvalidInput, PermissionDenied, TooManyAttempts

MIN_PASSWORD_CHARS = 12
MAX_PASSWORD_BYTES = 1024
MAX_FAILURES = 5
LOCK_DURATION = timedelta(minutes=15)
# Argon2id as the spec fixes it: 64 MiB, 3 passes, 2 lanes, 32-byte hash, 16-byte salt.
_HASHER = PasswordHasher(time_cost=3, memory_cost=64 * 1024, parallelism=2, hash_len=32, salt_len=16)
# Each check holds 64 MiB for a moment; two at a time bounds what a flood of consent POSTs can take.
_CHECKS = threading.BoundedSemaphore(2)


def password_set(*, password: str) -> None:
    """Set (or change) the owner's password and clear any lockout."""
    if len(password) < MIN_PASSWORD_CHARS:
        raise InvalidInput(f"the password needs at least {MIN_PASSWORD_CHARS} characters")
    if len(password.encode()) > MAX_PASSWORD_BYTES:
        raise InvalidInput(f"the password is longer than {MAX_PASSWORD_BYTES} bytes")
    hashed = _HASHER.hash(password)
    with transaction.atomic():
        owner, _ = Owner.objects.select_for_update().get_or_create(id=1)
        owner.password_hash = hashed
        owner.password_changed_at = clock.now()
        owner.failures = owner.dashboard_failures = 0
        owner.locked_until = owner.dashboard_locked_until = None
        owner.save()
    security_event("password changed")


# Each page's counter and lock in the owner's row.
_LOCKOUT_FIELDS = {
    "consent": ("failures", "locked_until"),
    "dashboard": ("dashboard_failures", "dashboard_locked_until"),
}


def password_check(*, password: str, remote: str, page: str) -> None:
    """Pass, or raise PermissionDenied (no password set), TooManyAttempts (locked) or AuthenticationFailed
    (wrong; the failure is counted). `page` is where the password was typed, `consent` or `dashboard`:
    each has its own count and lock."""
    failures_field, locked_field = _LOCKOUT_FIELDS[page]
    with transaction.atomic():
        owner = Owner.objects.select_for_update().filter(id=1).first()
        if owner is None or not owner.password_hash:
            raise PermissionDenied("no owner password is set; the owner runs: python manage.py password")
        now = clock.now()
        failures, locked_until = getattr(owner, failures_field), getattr(owner, locked_field)
        if locked_until is not None and locked_until > now:
            security_event(f"{page} locked", remote=remote)
            raise TooManyAttempts("too many wrong passwords. Try again in 15 minutes")
        if (
            not password
            or len(password.encode()) > MAX_PASSWORD_BYTES
            or not _verify(owner.password_hash, password)
        ):
            failures += 1
            locked = failures >= MAX_FAILURES
            if locked:
                locked_until, failures = now + LOCK_DURATION, 0
            setattr(owner, failures_field, failures)
            setattr(owner, locked_field, locked_until)
            owner.save(update_fields=[failures_field, locked_field])
            security_event("wrong password", page=page, remote=remote, locked=locked)
            if locked:
                security_event(
                    "lockout", page=page, remote=remote, minutes=int(LOCK_DURATION.total_seconds() // 60)
                )
            # Leave the transaction normally, so that the count is committed; the caller is told after.
            failed = True
        else:
            if failures or locked_until:
                setattr(owner, failures_field, 0)
                setattr(owner, locked_field, None)
                owner.save(update_fields=[failures_field, locked_field])
            failed = False
    if failed:
        raise AuthenticationFailed("wrong password")


def owner_stamp() -> str:
    """A short fingerprint of the current password hash (spec §1.16 OwnerStamp): a dashboard session
    records it at login and ends when it differs, so a password change ends every session."""
    hashed = Owner.objects.filter(id=1).values_list("password_hash", flat=True).first() or ""
    return hashlib.sha256(hashed.encode()).digest()[:8].hex()


def _verify(hashed: str, password: str) -> bool:
    with _CHECKS:
        try:
            return _HASHER.verify(hashed, password)
        except (VerificationError, InvalidHashError):
            return False
