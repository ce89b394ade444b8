"""The one timestamp parser of GraphFuse: the forms hosts store times in, read by one strict rule.

The rule is written out in ``docs/records.md`` (section "Timestamps").
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from ._errors import InvalidInput

__all__ = ["parse_timestamp"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_timestamp(value: object, what: str = "timestamp") -> datetime | None:
    """A UTC ``datetime`` from a ``datetime``, an ISO 8601 string or POSIX seconds; ``None`` stays ``None``.

    - A naive ``datetime`` or ISO string without an offset is UTC; an aware one is converted to UTC.
    - ISO strings may end in ``Z`` or ``z`` (RFC 3339 allows both) for UTC.
    - POSIX seconds must be a finite number from 0 up to the year 9999: a negative number
      (``-1`` is a common "no time" sentinel), ``NaN``, infinities and values such as ``1e20``
      (or milliseconds where seconds are meant, past the year 9999) raise
      :class:`~graphfuse.InvalidInput`; so do booleans and every other type.

    Every error names ``what``.
    """
    if value is None:
        return None
    if isinstance(value, str):
        parsed = _parse_iso_cached(value) if len(value) <= 64 else _parse_iso(value)
        if parsed is None:
            raise InvalidInput(f"{what} is not an ISO 8601 timestamp: {value!r}")
        return parsed
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
        if not math.isfinite(seconds) or seconds < 0:
            raise InvalidInput(f"{what} must be POSIX seconds from 0 (1970-01-01 UTC), got {value!r}")
        try:
            return _EPOCH + timedelta(seconds=seconds)
        except OverflowError:
            raise InvalidInput(
                f"{what} is past the year 9999 as POSIX seconds: {value!r} (milliseconds given as seconds?)"
            ) from None
    raise InvalidInput(f"{what} must be a datetime, an ISO 8601 string or POSIX seconds, got {value!r}")


def _as_utc(stamp: datetime) -> datetime:
    return stamp.replace(tzinfo=timezone.utc) if stamp.tzinfo is None else stamp.astimezone(timezone.utc)


def _parse_iso(value: str) -> datetime | None:
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"  # Python 3.10's fromisoformat reads neither
    try:
        return _as_utc(datetime.fromisoformat(text))
    except ValueError:
        return None


# Only short strings are cached, so odd metadata cannot make the cache hold large values.
_parse_iso_cached = lru_cache(maxsize=4096)(_parse_iso)
