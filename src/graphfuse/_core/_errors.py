"""The GraphFuse exception tree.

Every error GraphFuse raises on purpose derives from :class:`GraphFuseError`, one class per
cause; :class:`DeadlineExceeded` is a :class:`ConnectionFailed` (not retryable: the caller's
time is up), :class:`InvalidInput` is also a ``ValueError``, :class:`PermissionDenied` also a
``PermissionError`` and :class:`DiskFull` also an ``OSError``; a :class:`StageFailed` is also of
its cause's class when that is a GraphFuse error. See docs/concepts.md, "Errors".
"""

from __future__ import annotations

import errno
from typing import Any

__all__ = [
    "AlreadyExists",
    "AuthenticationFailed",
    "ConnectionFailed",
    "DeadlineExceeded",
    "DiskFull",
    "EmptyPipeline",
    "GraphFuseError",
    "InvalidInput",
    "NoCandidates",
    "NotFound",
    "PermissionDenied",
    "PluginError",
    "RateLimited",
    "RequestTimedOut",
    "StageFailed",
    "StoreCorrupted",
]


class GraphFuseError(Exception):
    """Base class of every error GraphFuse raises on purpose."""

    retryable: bool = False


class NotFound(GraphFuseError, LookupError):
    """A document, relation, collection or named component does not exist."""


class AlreadyExists(GraphFuseError):
    """Something being created exists already."""


class ConnectionFailed(GraphFuseError):
    """A backend or provider could not be reached, or answered with a server error."""

    retryable = True


class DeadlineExceeded(ConnectionFailed, TimeoutError):
    """The caller's deadline passed before the work finished."""

    retryable = False


class RequestTimedOut(ConnectionFailed):
    """A provider or backend did not answer one request within its timeout (retryable).

    Unlike :class:`DeadlineExceeded`, the caller's own time is not up: the request may be sent
    again. Not a ``TimeoutError``: code that reads ``TimeoutError`` as "the deadline passed"
    must not take it for one.
    """

    retryable = True


class RateLimited(GraphFuseError):
    """The provider rate-limited the request.

    ``retry_after`` is the delay in seconds the provider asked for, when it said one.
    """

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class AuthenticationFailed(GraphFuseError, PermissionError):
    """Credentials were missing or refused. Never retried."""


class InvalidInput(GraphFuseError, ValueError):
    """An argument or a piece of data is not acceptable; the message names it."""


class StoreCorrupted(GraphFuseError):
    """A store directory is damaged, half-written, or was written by something else."""


class PermissionDenied(GraphFuseError, PermissionError):
    """The operating system refused to let GraphFuse read or write a file; the message names it.

    Not damage: the file may be intact (a read-only store written to, another user's file).
    """


class DiskFull(GraphFuseError, OSError):
    """A write ran out of disk space (or disk quota); the message names the file.

    Not damage: what the failed write was doing is rolled back, and the store stays as consistent
    as an interrupted run leaves it. Free space and run the same command again. ``errno`` is
    ``ENOSPC``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.errno = errno.ENOSPC


class StageFailed(GraphFuseError):
    """A pipeline stage raised; ``stage`` names it and ``cause`` (also ``__cause__``) is the original error.

    A stage that raised a GraphFuse error fails with that error's class too, as ``OSError(errno, ...)``
    returns a ``FileNotFoundError``: ``StageFailed("rerank", RateLimited(...))`` is an instance of
    a subclass of both ``StageFailed`` and ``RateLimited`` (named ``StageFailed[RateLimited]``), so
    ``except RateLimited`` and ``except StageFailed`` both catch it. It keeps the cause's
    ``retryable`` flag and its attributes (``retry_after``). Any other cause gives a plain
    ``StageFailed``, not retryable.
    """

    stage: str
    cause: BaseException

    def __new__(cls, stage: str, cause: BaseException) -> StageFailed:
        if cls is StageFailed:
            cls = _stage_failure_class(type(cause))
        # The whole message, not (stage, cause): an OSError subclass (PermissionDenied, a
        # DeadlineExceeded) would read two arguments as (errno, strerror).
        return super().__new__(cls, _stage_message(stage, cause))

    def __init__(self, stage: str, cause: BaseException) -> None:
        # Not super().__init__: in a derived class that would run the cause class's own __init__
        # (other arguments); its state is copied from the cause instead.
        Exception.__init__(self, _stage_message(stage, cause))
        if isinstance(cause, GraphFuseError):
            # The cause's own attributes (``retry_after``, an instance's ``retryable``), then ours.
            vars(self).update({k: v for k, v in vars(cause).items() if k != "__notes__"})
        self.stage = stage
        self.cause = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt through StageFailed(stage, cause), which picks the derived class again.
        return (StageFailed, (self.stage, self.cause), dict(vars(self)))


def _stage_message(stage: str, cause: BaseException) -> str:
    return f"stage {stage!r} failed: {type(cause).__name__}: {cause}"


_DERIVED: dict[type[BaseException], type[StageFailed]] = {}


def _stage_failure_class(kind: type[BaseException]) -> type[StageFailed]:
    """``StageFailed`` for a cause of class ``kind``: derived from both when ``kind`` is a GraphFuse error.

    One class per cause class, made on first use (``setdefault``: two threads agree on one).
    """
    found = _DERIVED.get(kind)
    if found is None:
        found = _DERIVED.setdefault(kind, _derive(kind))
    return found


def _derive(kind: type[BaseException]) -> type[StageFailed]:
    if not issubclass(kind, GraphFuseError) or kind is GraphFuseError or issubclass(kind, StageFailed):
        return StageFailed
    try:
        derived = type(f"StageFailed[{kind.__name__}]", (StageFailed, kind), {"__module__": __name__})
    except TypeError:  # a cause class that cannot be combined (an incompatible layout): the plain failure
        return StageFailed
    derived.__doc__ = f"A stage failed with :class:`{kind.__module__}.{kind.__qualname__}`."
    return derived


class NoCandidates(GraphFuseError):
    """A run (or a component configured to require input) had no candidates."""


class EmptyPipeline(GraphFuseError):
    """A pipeline was built without any stage."""


class PluginError(GraphFuseError):
    """A plugin failed to load or register, or two plugins registered the same name."""
