"""Retrying calls to providers and backends within the caller's deadline.

:func:`call_with_retry` retries only errors whose ``retryable`` is true, backs off exponentially
with jitter, waits at least a provider's Retry-After and never runs past the deadline set with
:func:`graphfuse.deadline`; :func:`error_for_status`, :func:`retry_after` and
:func:`attempt_timeout` classify a provider's HTTP failure and size one attempt;
:func:`counting_retries` counts the retries made in a block (a report's retry counts). See
docs/backends/providers.md, "Retries and deadlines".
"""

from ._providers._provider_errors import error_for_status, retry_after
from ._providers._retry import RetryCount, RetryPolicy, attempt_timeout, call_with_retry, counting_retries

__all__ = [
    "RetryCount",
    "RetryPolicy",
    "attempt_timeout",
    "call_with_retry",
    "counting_retries",
    "error_for_status",
    "retry_after",
]
