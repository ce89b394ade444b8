"""Errors as ``application/problem+json`` (RFC 9457), naming the field at fault.

Every error a client sees is one of these; an unexpected exception becomes a 500 with a
generic detail and an id to find it in the server's log, never a stack trace.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PROBLEM_JSON", "Problem"]

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
