"""The caller's deadline, carried in a context variable to every stage and provider call."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager

from ._errors import InvalidInput

__all__ = ["deadline", "remaining"]

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("graphfuse_deadline", default=None)


def remaining() -> float | None:
    """Seconds left before the current deadline (may be negative), or ``None`` without one."""
    d = _DEADLINE.get()
    return None if d is None else d - time.monotonic()


@contextmanager
def deadline(timeout: float | None) -> Iterator[None]:
    """Set a deadline ``timeout`` seconds from now; an outer, earlier deadline still wins."""
    if timeout is None:
        yield
        return
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
    new = time.monotonic() + float(timeout)
    outer = _DEADLINE.get()
    token = _DEADLINE.set(new if outer is None else min(outer, new))
    try:
        yield
    finally:
        _DEADLINE.reset(token)
