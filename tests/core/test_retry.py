"""graphfuse.retry: what is retried, the waits chosen, Retry-After, the deadline."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest

import graphfuse
from graphfuse import (
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    GraphFuseError,
    InvalidInput,
    RateLimited,
)
from graphfuse.retry import RetryPolicy, attempt_timeout, call_with_retry, error_for_status, retry_after

NO_JITTER = RetryPolicy(attempts=5, initial=0.5, maximum=20.0, jitter=0.0)


class Sleeps:
    """An injected sleep that records the waits chosen and does not wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def failing(*errors: BaseException, result: str = "ok") -> tuple[Callable[[], Awaitable[str]], list[int]]:
    """A call that raises ``errors`` one per attempt, then returns ``result``; counts calls."""
    calls: list[int] = []

    async def fn() -> str:
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return fn, calls


# -- policy -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"attempts": 0},
        {"attempts": True},
        {"attempts": 2.0},
        {"initial": -1},
        {"initial": float("nan")},
        {"maximum": float("inf")},
        {"jitter": -0.1},
        {"initial": 5, "maximum": 1},
        {"initial": "1"},
    ],
)
def test_policy_rejects_bad_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(InvalidInput, match="RetryPolicy"):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


def test_policy_defaults_and_frozen() -> None:
    policy = RetryPolicy()
    assert (policy.attempts, policy.initial, policy.maximum, policy.jitter) == (3, 1.0, 30.0, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.attempts = 3  # type: ignore[misc]


# -- what is retried ----------------------------------------------------------------------------


async def test_success_needs_no_wait() -> None:
    sleeps = Sleeps()
    fn, calls = failing()
    assert await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps) == "ok"
    assert (len(calls), sleeps.waits) == (1, [])


async def test_connection_failures_back_off_exponentially() -> None:
    sleeps = Sleeps()
    fn, calls = failing(ConnectionFailed("a"), ConnectionFailed("b"), ConnectionFailed("c"))
    assert await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps) == "ok"
    assert len(calls) == 4
    assert sleeps.waits == [0.5, 1.0, 2.0]


async def test_backoff_is_capped_and_last_error_raised() -> None:
    sleeps = Sleeps()
    errors = [ConnectionFailed(f"fail {i}") for i in range(6)]
    fn, calls = failing(*errors)
    policy = RetryPolicy(attempts=6, initial=1.0, maximum=3.0, jitter=0.0)
    with pytest.raises(ConnectionFailed) as raised:
        await call_with_retry(fn, policy, describe="t", sleep=sleeps)
    assert raised.value is errors[5]
    assert len(calls) == 6
    assert sleeps.waits == [1.0, 2.0, 3.0, 3.0, 3.0]


async def test_jitter_adds_at_most_its_amount() -> None:
    sleeps = Sleeps()
    fn, _ = failing(*[ConnectionFailed("x") for _ in range(9)])
    policy = RetryPolicy(attempts=10, initial=0.1, maximum=100.0, jitter=0.25)
    await call_with_retry(fn, policy, describe="t", sleep=sleeps)
    bases = [0.1 * 2**i for i in range(9)]
    assert all(base <= wait <= base + 0.25 for base, wait in zip(bases, sleeps.waits, strict=False)), sleeps.waits
    assert any(wait > base for base, wait in zip(bases, sleeps.waits, strict=False)), "jitter never added anything"


@pytest.mark.parametrize(
    "error", [AuthenticationFailed("no"), InvalidInput("bad"), GraphFuseError("plain"), ValueError("not ours")]
)
async def test_non_retryable_errors_raise_at_once(error: Exception) -> None:
    sleeps = Sleeps()
    fn, calls = failing(error)
    with pytest.raises(type(error)) as raised:
        await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert raised.value is error
    assert (len(calls), sleeps.waits) == (1, [])


async def test_single_attempt_policy_does_not_retry() -> None:
    sleeps = Sleeps()
    fn, calls = failing(ConnectionFailed("down"))
    with pytest.raises(ConnectionFailed):
        await call_with_retry(fn, RetryPolicy(attempts=1), describe="t", sleep=sleeps)
    assert (len(calls), sleeps.waits) == (1, [])


# -- Retry-After --------------------------------------------------------------------------------


async def test_retry_after_longer_than_backoff_is_waited() -> None:
    sleeps = Sleeps()
    fn, calls = failing(RateLimited("slow down", retry_after=7.0))
    assert await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps) == "ok"
    assert len(calls) == 2
    assert sleeps.waits == [7.0]


async def test_retry_after_shorter_than_backoff_keeps_backoff() -> None:
    sleeps = Sleeps()
    fn, _ = failing(ConnectionFailed("x"), ConnectionFailed("y"), RateLimited("z", retry_after=0.1))
    await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert sleeps.waits == [0.5, 1.0, 2.0]


async def test_rate_limited_without_retry_after_backs_off() -> None:
    sleeps = Sleeps()
    fn, _ = failing(RateLimited("z"))
    await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert sleeps.waits == [0.5]


async def test_retry_after_beyond_maximum_is_not_waited() -> None:
    sleeps = Sleeps()
    error = RateLimited("quota", retry_after=3600.0)
    fn, calls = failing(error)
    with pytest.raises(RateLimited) as raised:
        await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert raised.value is error
    assert raised.value.retry_after == 3600.0
    assert (len(calls), sleeps.waits) == (1, [])


# -- the caller's deadline ----------------------------------------------------------------------


async def test_wait_that_would_pass_the_deadline_raises_deadline_exceeded() -> None:
    sleeps = Sleeps()
    error = RateLimited("slow down", retry_after=5.0)
    fn, calls = failing(error)
    with graphfuse.deadline(1.0), pytest.raises(DeadlineExceeded, match="deadline") as raised:
        await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert raised.value.__cause__ is error
    assert (len(calls), sleeps.waits) == (1, [])


async def test_backoff_stops_before_the_deadline() -> None:
    sleeps = Sleeps()
    errors = [ConnectionFailed(f"down {i}") for i in range(10)]
    fn, calls = failing(*errors)
    policy = RetryPolicy(attempts=10, initial=1.0, maximum=100.0, jitter=0.0)
    # The injected sleep does not pass time, so the deadline stays ~5 s away: 1, 2 and 4 fit, 8 does not.
    with graphfuse.deadline(5.0), pytest.raises(DeadlineExceeded) as raised:
        await call_with_retry(fn, policy, describe="t", sleep=sleeps)
    assert sleeps.waits == [1.0, 2.0, 4.0]
    assert len(calls) == 4
    assert raised.value.__cause__ is errors[3]


async def test_attempt_is_cut_off_at_the_deadline() -> None:
    async def hang() -> str:
        await asyncio.sleep(30)
        return "late"

    with graphfuse.deadline(0.05), pytest.raises(DeadlineExceeded, match="slow call") as raised:
        await call_with_retry(hang, NO_JITTER, describe="slow call", sleep=Sleeps())
    assert isinstance(raised.value.__cause__, (TimeoutError, asyncio.TimeoutError))


async def test_passed_deadline_makes_no_call() -> None:
    fn, calls = failing()
    with graphfuse.deadline(0.01):
        await asyncio.sleep(0.02)
        with pytest.raises(DeadlineExceeded):
            await call_with_retry(fn, NO_JITTER, describe="t", sleep=Sleeps())
    assert calls == []


async def test_deadline_exceeded_from_the_call_is_not_retried() -> None:
    sleeps = Sleeps()
    error = DeadlineExceeded("inner")
    fn, calls = failing(error)
    with graphfuse.deadline(10.0), pytest.raises(DeadlineExceeded) as raised:
        await call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps)
    assert raised.value is error
    assert (len(calls), sleeps.waits) == (1, [])


async def test_timeout_error_from_the_call_before_the_deadline_is_not_rewrapped() -> None:
    error = TimeoutError("sdk timeout")
    fn, _ = failing(error)
    with graphfuse.deadline(10.0), pytest.raises(TimeoutError) as raised:
        await call_with_retry(fn, NO_JITTER, describe="t", sleep=Sleeps())
    assert raised.value is error


def test_attempt_timeout_is_capped_by_the_deadline() -> None:
    assert attempt_timeout(None) is None
    assert attempt_timeout(30.0) == 30.0
    with graphfuse.deadline(2.0):
        capped = attempt_timeout(30.0)
        assert capped is not None
        assert 0 < capped <= 2.0
        assert attempt_timeout(0.5) == 0.5
        uncapped = attempt_timeout(None)
        assert uncapped is not None
        assert 0 < uncapped <= 2.0


def test_attempt_timeout_after_the_deadline_raises() -> None:
    with graphfuse.deadline(0.001):
        time.sleep(0.01)
        with pytest.raises(DeadlineExceeded):
            attempt_timeout(30.0)


async def test_retries_are_logged_with_the_wait(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="graphfuse.retry")
    fn, _ = failing(RateLimited("busy", retry_after=3.0))
    await call_with_retry(fn, NO_JITTER, describe="voyage embed", sleep=Sleeps())
    [record] = [r for r in caplog.records if r.name == "graphfuse.retry"]
    assert record.__dict__["graphfuse_call"] == "voyage embed"
    assert record.__dict__["graphfuse_attempt"] == 1
    assert record.__dict__["graphfuse_wait"] == 3.0
    assert "voyage embed" in record.getMessage()


async def test_concurrent_calls_keep_their_own_state() -> None:
    sleeps = Sleeps()
    pairs = [failing(*[ConnectionFailed("x")] * i, result=str(i)) for i in range(4)]
    results = await asyncio.gather(*(call_with_retry(fn, NO_JITTER, describe="t", sleep=sleeps) for fn, _ in pairs))
    assert results == ["0", "1", "2", "3"]
    assert [len(calls) for _, calls in pairs] == [1, 2, 3, 4]
    assert sorted(sleeps.waits) == [0.5, 0.5, 0.5, 1.0, 1.0, 2.0]


# -- classifying provider failures --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (None, ConnectionFailed),
        (400, InvalidInput),
        (401, AuthenticationFailed),
        (403, AuthenticationFailed),
        (404, InvalidInput),
        (408, ConnectionFailed),
        (422, InvalidInput),
        (429, RateLimited),
        (498, AuthenticationFailed),
        (500, ConnectionFailed),
        (502, ConnectionFailed),
        (503, ConnectionFailed),
    ],
)
def test_error_for_status(status: int | None, kind: type[GraphFuseError]) -> None:
    error = error_for_status(status, provider="Acme", detail="boom", headers={"Retry-After": "2"})
    assert type(error) is kind
    assert "Acme" in str(error)
    assert "boom" in str(error)
    if kind is RateLimited:
        assert isinstance(error, RateLimited)
        assert error.retry_after == 2.0
    assert error.retryable is (kind in (ConnectionFailed, RateLimited))


def test_retry_after_parsing() -> None:
    assert retry_after(None) is None
    assert retry_after({}) is None
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"Retry-After": "0.25"}) == 0.25
    assert retry_after({"Retry-After": "soon"}) is None
    assert retry_after({"Retry-After": "-4"}) is None
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after-ms": "x", "retry-after": "9"}) == 9.0
    later = datetime.now(timezone.utc) + timedelta(seconds=120)
    from_date = retry_after({"Retry-After": format_datetime(later, usegmt=True)})
    assert from_date is not None
    assert 100 < from_date <= 120
    earlier = datetime.now(timezone.utc) - timedelta(seconds=120)
    assert retry_after({"Retry-After": format_datetime(earlier, usegmt=True)}) == 0.0
