"""Retrying calls to providers and backends within the caller's deadline.

:func:`call_with_retry` retries only errors whose ``retryable`` is true, backs off exponentially
with jitter, waits at least a provider's Retry-After and never runs past the deadline set with
:func:`graphfuse.deadline`; :func:`error_for_status`, :func:`retry_after` and
:func:`attempt_timeout` classify a provider's HTTP failure and size one attempt. See
docs/backends/providers.md, "Retries and deadlines".
"""

from ._provider_errors import error_for_status, retry_after
from ._retry import RetryPolicy, attempt_timeout, call_with_retry

__all__ = ["RetryPolicy", "attempt_timeout", "call_with_retry", "error_for_status", "retry_after"]
