"""What one request may ask for: sizes, counts and time limits, each checked with a 413/422 naming the field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._options import check_filter_size
from ._problems import Problem

__all__ = ["Limits"]


@dataclass(frozen=True)
class Limits:
    """What one request may ask for; larger requests get a 413 or a 422 naming the field.

    ``max_body_bytes`` bounds an ingest body, ``max_request_bytes`` every other body (a query,
    its options and filter). ``request_timeout`` bounds all the work a read request causes
    (building a preset's pipeline and waiting for a run slot included), ``write_timeout`` an
    ingest or a delete: past it the answer is a 504. ``max_concurrent_runs`` pipeline runs
    (retrieve, context, compare) are in progress at once; more wait their turn.
    ``body_timeout`` bounds the time to receive a whole request body, from the end of its
    headers, however slowly it trickles in: past it the answer is a 408 and the connection closes.
    """

    max_body_bytes: int = 8 * 1024 * 1024
    max_request_bytes: int = 64 * 1024
    max_query_chars: int = 2000
    max_top_k: int = 100
    max_budget: int = 32_000
    max_documents: int = 1000
    max_stages: int = 16
    max_filter_conditions: int = 32
    max_filter_values: int = 256
    max_filter_chars: int = 1024
    request_timeout: float = 60.0
    write_timeout: float = 600.0
    max_concurrent_runs: int = 4
    body_timeout: float = 60.0

    def check_query(self, query: str, field: str = "query") -> str:
        if not query.strip():
            raise Problem.invalid(field, f"{field} must not be empty")
        if len(query) > self.max_query_chars:
            raise Problem.invalid(field, f"{field} has {len(query)} characters; the limit is {self.max_query_chars}")
        return query

    def check_top_k(self, top_k: int, field: str = "top_k") -> int:
        if top_k < 1 or top_k > self.max_top_k:
            raise Problem.invalid(field, f"{field} must be between 1 and {self.max_top_k}, got {top_k}")
        return top_k

    def check_budget(self, budget: int, field: str = "budget") -> int:
        if budget < 1 or budget > self.max_budget:
            raise Problem.invalid(field, f"{field} must be between 1 and {self.max_budget} tokens, got {budget}")
        return budget

    def check_filter(self, spec: Any, field: str = "filter") -> Any:
        check_filter_size(
            spec,
            max_conditions=self.max_filter_conditions,
            max_values=self.max_filter_values,
            max_chars=self.max_filter_chars,
            field=field,
        )
        return spec
