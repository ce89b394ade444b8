"""Retrying calls to providers and backends within the caller's deadline.

::

    from graphfuse.retry import RetryPolicy, call_with_retry

    vectors = await call_with_retry(lambda: client.embed(texts), RetryPolicy(attempts=3), describe="embed")

:func:`call_with_retry` retries only errors whose ``retryable`` is true
(:class:`~graphfuse.ConnectionFailed`, :class:`~graphfuse.RateLimited`), backs off
exponentially with jitter, waits at least a provider's Retry-After, and never waits or runs
past the deadline set with :func:`graphfuse.deadline`. :func:`error_for_status` and
:func:`retry_after` classify a provider's HTTP failure for it; :func:`attempt_timeout` gives
the timeout to hand to an SDK for one attempt.
"""

from ._provider_errors import error_for_status, retry_after
from ._retry import RetryPolicy, attempt_timeout, call_with_retry

__all__ = ["RetryPolicy", "attempt_timeout", "call_with_retry", "error_for_status", "retry_after"]
