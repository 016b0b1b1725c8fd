"""`as_of`: reading memory as it was served at a past time (recall and get_context).

What was served when is kept on each memory (active_from, ended_at, expires_at; migration 0017), so a
past answer is the same search restricted to the memories served then (models.served_sql `history`).
"""

from datetime import UTC, date, datetime, time

from kenfold_common.errors import InvalidInput

_FORMAT_ADVICE = (
    "as_of must be an ISO 8601 date (2026-11-30) or date and time (2026-11-30T14:00:00Z); "
    "a time without a zone is UTC"
)


def parse_as_of(value: str | None, *, now: datetime) -> datetime | None:
    """The moment `value` names: a date means its start (00:00 UTC), a time without a zone is UTC.

    A future moment is refused rather than read as "now": an agent that computed a wrong date must learn
    it, not get today's answer labelled with that date. The messages never repeat the value."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        raise InvalidInput(f"{_FORMAT_ADVICE}; omit as_of for what is served now")
    try:
        if len(text) == 10:
            moment = datetime.combine(date.fromisoformat(text), time.min, tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        raise InvalidInput(_FORMAT_ADVICE) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment > now:
        raise InvalidInput("as_of is in the future; omit as_of for what is served now, or pass a past time")
    return moment
