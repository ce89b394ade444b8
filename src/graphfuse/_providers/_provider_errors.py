"""Turning a provider's HTTP failure into the GraphFuse error that says whether to retry it."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from .._core._errors import AuthenticationFailed, ConnectionFailed, GraphFuseError, InvalidInput, RateLimited

__all__ = ["error_for_status", "retry_after"]


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def _seconds(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for, in seconds, or ``None`` when it asks for none.

    Reads ``retry-after-ms`` (milliseconds, as OpenAI sends) and ``Retry-After`` (seconds,
    decimals accepted, or an HTTP date); unparseable values count as absent.
    """
    if not headers:
        return None
    millis = _header(headers, "retry-after-ms")
    if millis is not None and (value := _seconds(millis)) is not None:
        return value / 1000.0
    text = _header(headers, "retry-after")
    if text is None:
        return None
    if (value := _seconds(text.strip())) is not None:
        return value
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_for_status(
    status: int | None, *, provider: str, detail: str, headers: Mapping[str, str] | None = None
) -> GraphFuseError:
    """The GraphFuse error for a provider response with HTTP ``status`` (``None``: no response).

    401, 403 (and Cohere's 498) -> :class:`~graphfuse.AuthenticationFailed`; 429 ->
    :class:`~graphfuse.RateLimited` with ``retry_after`` from the headers; 408, 5xx or no
    response -> :class:`~graphfuse.ConnectionFailed`; any other status ->
    :class:`~graphfuse.InvalidInput`. ``provider`` and ``detail`` go into the message.
    """
    if status is None:
        return ConnectionFailed(f"{provider}: no response: {detail}")
    message = f"{provider} answered HTTP {status}: {detail}"
    if status in (401, 403, 498):
        return AuthenticationFailed(message)
    if status == 429:
        return RateLimited(message, retry_after=retry_after(headers))
    if status == 408 or status >= 500:
        return ConnectionFailed(message)
    return InvalidInput(message)
