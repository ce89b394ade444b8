"""The GraphFuse exception tree.

Every error GraphFuse raises on purpose derives from :class:`GraphFuseError`, one class per
cause; :class:`DeadlineExceeded` is a retryable :class:`ConnectionFailed`, :class:`InvalidInput`
is also a ``ValueError``, :class:`PermissionDenied` also a ``PermissionError`` and
:class:`DiskFull` also an ``OSError``. See
docs/concepts.md, "Errors".
"""

from __future__ import annotations

import errno

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
    """A pipeline stage raised; ``stage`` names it and ``__cause__`` is the original error."""

    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(f"stage {stage!r} failed: {type(cause).__name__}: {cause}")
        self.stage = stage
        self.cause = cause


class NoCandidates(GraphFuseError):
    """A run (or a component configured to require input) had no candidates."""


class EmptyPipeline(GraphFuseError):
    """A pipeline was built without any stage."""


class PluginError(GraphFuseError):
    """A plugin failed to load or register, or two plugins registered the same name."""
