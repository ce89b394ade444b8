"""Retrying provider and backend calls: exponential backoff with jitter, Retry-After, deadline.

The loop itself is tenacity's; this module decides what is retried (a
:class:`~graphfuse.GraphFuseError` whose ``retryable`` is true), how long to wait (backoff,
at least the provider's Retry-After) and when to give up (attempts, the caller's deadline).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, wait_exponential_jitter

from .._core._deadline import remaining
from .._core._errors import DeadlineExceeded, GraphFuseError, InvalidInput, RateLimited, RequestTimedOut

__all__ = ["RetryCount", "RetryPolicy", "attempt_timeout", "call_with_retry", "counting_retries"]

T = TypeVar("T")

Sleep = Callable[[float], Awaitable[None]]

logger = logging.getLogger("graphfuse.retry")


def _number(value: object, name: str, *, minimum: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < minimum:
        raise InvalidInput(f"RetryPolicy.{name} must be a finite number >= {minimum}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry a call that failed with a retryable error.

    - ``attempts``: calls in all, the first included (``1`` disables retrying).
    - ``initial``: the wait after the first failure, in seconds; it doubles after each one.
    - ``maximum``: the longest single wait. A provider that asks (Retry-After) for a longer
      wait than this is not waited for: its :class:`~graphfuse.RateLimited` error is raised
      at once, carrying ``retry_after``.
    - ``jitter``: up to this many seconds of uniform random delay added to each backoff, so
      that clients that failed together do not retry together.

    The defaults are the source specification's (3 attempts, 1 s, doubling, at most 30 s), with
    up to 0.5 s of jitter. Invalid values raise :class:`~graphfuse.InvalidInput`.
    """

    attempts: int = 3
    initial: float = 1.0
    maximum: float = 30.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        if isinstance(self.attempts, bool) or not isinstance(self.attempts, int) or self.attempts < 1:
            raise InvalidInput(f"RetryPolicy.attempts must be an int >= 1, got {self.attempts!r}")
        _number(self.initial, "initial", minimum=0.0)
        _number(self.maximum, "maximum", minimum=0.0)
        _number(self.jitter, "jitter", minimum=0.0)
        if self.maximum < self.initial:
            raise InvalidInput(f"RetryPolicy.maximum ({self.maximum}) must be >= initial ({self.initial})")


@dataclass
class RetryCount:
    """The retries :func:`call_with_retry` made inside a :func:`counting_retries` block.

    ``retries`` counts every call sent again; ``timeouts`` those of them whose attempt had
    timed out (a :class:`~graphfuse.RequestTimedOut` or a ``TimeoutError``).
    """

    retries: int = 0
    timeouts: int = 0


_counting: contextvars.ContextVar[tuple[RetryCount, ...]] = contextvars.ContextVar("graphfuse_retry_counts", default=())


@contextlib.contextmanager
def counting_retries() -> Iterator[RetryCount]:
    """Count the retries made in this block (and in tasks it starts) into a fresh :class:`RetryCount`.

    Blocks nest: a retry counts in every enclosing block. The count is carried by a context
    variable, so concurrent asyncio tasks each count their own.
    """
    count = RetryCount()
    token = _counting.set((*_counting.get(), count))
    try:
        yield count
    finally:
        _counting.reset(token)


def attempt_timeout(limit: float | None) -> float | None:
    """The timeout for one attempt: ``limit`` (the provider timeout) capped by the deadline.

    Returns ``None`` when there is neither. Raises :class:`~graphfuse.DeadlineExceeded` when
    the caller's deadline (:func:`graphfuse.deadline`) has already passed.
    """
    left = remaining()
    if left is None:
        return limit
    if left <= 0:
        raise DeadlineExceeded("the deadline passed before the call could be made")
    return left if limit is None else min(limit, left)


def _retryable(error: BaseException) -> bool:
    return isinstance(error, GraphFuseError) and error.retryable


def _asked_wait(state: RetryCallState) -> float | None:
    error = state.outcome.exception() if state.outcome is not None else None
    return error.retry_after if isinstance(error, RateLimited) else None


async def _attempt(fn: Callable[[], Awaitable[T]], describe: str) -> T:
    left = remaining()
    if left is None:
        return await fn()
    if left <= 0:
        raise DeadlineExceeded(f"{describe}: the deadline passed before the call could be made")
    try:
        return await asyncio.wait_for(fn(), left)
    except asyncio.TimeoutError as error:
        # DeadlineExceeded is itself a TimeoutError: let one raised inside fn pass unchanged.
        if isinstance(error, GraphFuseError):
            raise
        after = remaining()
        if after is None or after > 0:
            raise
        raise DeadlineExceeded(f"{describe}: the deadline passed while waiting for a response") from error


async def call_with_retry(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    describe: str,
    sleep: Sleep | None = None,
) -> T:
    """Await ``fn()``; on a retryable GraphFuse error, wait and call it again.

    Only errors whose ``retryable`` is true are retried (:class:`~graphfuse.ConnectionFailed`,
    :class:`~graphfuse.RateLimited`); anything else propagates at once. Waits grow
    exponentially with jitter (see :class:`RetryPolicy`) and are never shorter than a
    :class:`~graphfuse.RateLimited` error's ``retry_after``. Within the caller's deadline
    (:func:`graphfuse.deadline`) each attempt is cut off when the deadline passes, and no wait
    is started that would end after it: :class:`~graphfuse.DeadlineExceeded` is raised instead,
    chained from the last error. After the last attempt the last error is raised.

    ``describe`` names the call in log records and errors (e.g. ``"cohere embed"``); ``sleep``
    replaces :func:`asyncio.sleep` (tests inject a recorder). Each retry is logged on the
    ``graphfuse.retry`` logger at WARNING with the extra fields ``graphfuse_call``,
    ``graphfuse_attempt`` and ``graphfuse_wait`` (seconds), and counted in every enclosing
    :func:`counting_retries` block.
    """
    backoff = wait_exponential_jitter(multiplier=policy.initial, max=policy.maximum, jitter=policy.jitter)
    deadline_stopped = False

    def wait(state: RetryCallState) -> float:
        asked = _asked_wait(state)
        chosen = backoff(state)
        return chosen if asked is None else max(chosen, asked)

    def stop(state: RetryCallState) -> bool:
        nonlocal deadline_stopped
        if state.attempt_number >= policy.attempts:
            return True
        asked = _asked_wait(state)
        if asked is not None and asked > policy.maximum:
            return True
        left = remaining()
        if left is not None and state.upcoming_sleep >= left:
            deadline_stopped = True
            return True
        return False

    def before_sleep(state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome is not None else None
        for count in _counting.get():
            count.retries += 1
            count.timeouts += isinstance(error, (RequestTimedOut, TimeoutError))
        logger.warning(
            "%s failed (attempt %d of %d: %s); retrying in %.3fs",
            describe,
            state.attempt_number,
            policy.attempts,
            error,
            state.upcoming_sleep,
            extra={
                "graphfuse_call": describe,
                "graphfuse_attempt": state.attempt_number,
                "graphfuse_wait": state.upcoming_sleep,
            },
        )

    retrying = AsyncRetrying(
        sleep=sleep or asyncio.sleep,
        stop=stop,
        wait=wait,
        retry=retry_if_exception(_retryable),
        before_sleep=before_sleep,
        reraise=True,
    )
    try:
        async for attempt in retrying:
            with attempt:
                result = await _attempt(fn, describe)
    except GraphFuseError as error:
        if deadline_stopped:
            attempts = retrying.statistics.get("attempt_number", 1)
            raise DeadlineExceeded(
                f"{describe}: the deadline does not leave time for another attempt after {attempts}: {error}"
            ) from error
        raise
    return result
