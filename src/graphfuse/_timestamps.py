"""Timestamps from the forms host frameworks store them in (datetime, ISO 8601 text, POSIX seconds)."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from functools import lru_cache

from ._errors import InvalidInput

__all__ = ["parse_timestamp"]


def parse_timestamp(value: object, what: str = "timestamp") -> datetime | None:
    """A UTC ``datetime`` from a datetime, an ISO 8601 string (``Z`` accepted) or a POSIX timestamp.

    Naive values are taken as UTC; ``None`` stays ``None``; anything else raises
    :class:`~graphfuse.InvalidInput` naming ``what``. ISO strings are memoised (integrations read
    the same metadata strings once per postprocessor of a chain).
    """
    if value is None:
        return None
    if type(value) is str:
        parsed = _parse_iso_cached(value) if len(value) <= 64 else _parse_iso(value)
        if parsed is None:
            raise InvalidInput(f"{what} is not an ISO 8601 timestamp: {value!r}")
        return parsed
    if isinstance(value, str):
        return parse_timestamp(str(value), what)
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(float(value), tz=timezone.utc)
    raise InvalidInput(f"{what} must be a datetime, an ISO 8601 string or a POSIX timestamp, got {value!r}")


def _as_utc(stamp: datetime) -> datetime:
    return stamp.replace(tzinfo=timezone.utc) if stamp.tzinfo is None else stamp.astimezone(timezone.utc)


def _parse_iso(value: str) -> datetime | None:
    try:
        return _as_utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


# Only short strings are cached, so odd metadata cannot make the cache hold large values.
_parse_iso_cached = lru_cache(maxsize=4096)(_parse_iso)
