"""Errors as ``application/problem+json`` (RFC 9457), naming the field at fault.

Every error a client sees is one of these; an unexpected exception becomes a 500 with a
generic detail and an id to find it in the server's log, never a stack trace.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi.responses import JSONResponse

from .._core._errors import (
    AuthenticationFailed,
    ConnectionFailed,
    DeadlineExceeded,
    GraphFuseError,
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    StageFailed,
    StoreCorrupted,
)
from .._keys import KeyFileDamaged

__all__ = ["PROBLEM_JSON", "Problem", "field_of", "from_graphfuse", "problem_response"]

PROBLEM_JSON = "application/problem+json"

_TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    409: "Conflict",
    413: "Request body too large",
    415: "Unsupported media type",
    421: "Misdirected request",
    422: "Invalid input",
    429: "Too many requests",
    500: "Internal server error",
    501: "Not implemented",
    503: "Service unavailable",
    504: "Gateway timeout",
}


class Problem(Exception):
    """An HTTP error answer: status, detail, and the request field it is about (if any)."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.field = field
        self.headers = headers or {}
        self.extra = extra or {}

    @classmethod
    def invalid(cls, field: str, detail: str) -> Problem:
        """A 422 about request field ``field`` (dotted path, e.g. ``documents[2].text``)."""
        return cls(422, detail, field=field)

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "about:blank", "title": _TITLES.get(self.status, "Error"), "status": self.status}
        out["detail"] = self.detail
        if self.field is not None:
            out["field"] = self.field
        out.update(self.extra)
        return out


def problem_response(problem: Problem) -> JSONResponse:
    """``problem`` as the ``application/problem+json`` response a client gets."""
    return JSONResponse(problem.body(), status_code=problem.status, media_type=PROBLEM_JSON, headers=problem.headers)


def field_of(loc: Sequence[Any]) -> str:
    """A request validation error's location as a dotted field path (``documents[2].text``)."""
    parts = list(loc)
    if parts and parts[0] in ("body", "query", "path", "header"):
        parts = parts[1:]
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "body"


def from_graphfuse(exc: GraphFuseError) -> Problem:
    """The answer to a GraphFuse error raised while serving a request."""
    # Server-side faults, never the client's (also when a stage met them): the details (file
    # names) go to the server's log only.
    cause = exc.cause if isinstance(exc, StageFailed) else exc
    if isinstance(cause, KeyFileDamaged):
        return Problem(500, "the server's API key file is damaged; the server's log names it")
    if isinstance(cause, StoreCorrupted):
        return Problem(500, "store damaged: run `graphfuse check` on the server's store (its log names the file)")
    if isinstance(cause, PermissionDenied):
        return Problem(500, "the server may not read or write a file it needs (permission denied); its log names it")
    if isinstance(exc, StageFailed) and isinstance(exc, (InvalidInput, NotFound)):
        # Data a stage met (a store's, a provider's), not the request: a fault of the server.
        return Problem(500, "the request failed inside the retrieval pipeline")
    if isinstance(exc, InvalidInput):
        return Problem(422, str(exc))
    if isinstance(exc, NotFound):
        return Problem(404, str(exc))
    if isinstance(exc, DeadlineExceeded):
        return Problem(504, "the request did not finish in time")
    if isinstance(exc, RateLimited):
        headers = {} if exc.retry_after is None else {"Retry-After": str(max(1, round(exc.retry_after)))}
        return Problem(503, "a backend is rate limiting this server; try again later", headers=headers)
    if isinstance(exc, (ConnectionFailed, AuthenticationFailed)):
        return Problem(503, "a backend of this server is unavailable")
    return Problem(500, "the request failed inside the retrieval pipeline")
