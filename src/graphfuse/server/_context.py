"""A context inside a tenant's scope: assembled under the scope's filter, with the ids it knows.

Every source and dropped entry is renamed to the tenant's id (in the text too); an id the scope
cannot name is refused with a 500 and logged. The tokens sent are counted in the session.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput, StageFailed
from .._retrieval._pipeline import Pipeline
from ..context import FORMATS, aretrieve_context
from ._problems import Problem
from ._scope import Scope
from ._session import SessionStats

__all__ = ["scoped_context"]

logger = logging.getLogger("graphfuse.server")


async def scoped_context(
    session: SessionStats,
    scope: Scope,
    pipeline: Pipeline,
    label: str,
    query: str,
    *,
    budget: int,
    format: str,
    top_k: int | None,
    client_filter: Any,
    timeout: float | None,
    cache: bool = True,
    history: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Retrieve inside ``scope`` and assemble a context (see :meth:`graphfuse.server.Service.context`)."""
    if format not in FORMATS:
        raise Problem.invalid("format", f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    flt = scope.filter(client_filter)
    try:
        ctx = await aretrieve_context(
            pipeline,
            query,
            budget=budget,
            format=format,
            top_k=top_k,
            filter=flt,
            timeout=timeout,
            cache=cache,
            history=history,
        )
    except InvalidInput as exc:
        if isinstance(exc, StageFailed):
            raise  # bad data a stage met is the server's fault (500), not the request's
        raise Problem.invalid("query", str(exc)) from exc
    data: dict[str, Any] = ctx.to_dict()
    text: str = data["text"]
    for entry in (*data["sources"], *data["dropped"]):
        external = scope.external(entry["id"])
        if external is None:
            logger.error("context for tenant %r held %r: refused", scope.tenant, entry["id"])
            raise Problem(500, "internal error; the server's log has the details")
        if external != entry["id"]:
            text = text.replace(entry["id"], external)
        entry["id"] = external
    if "prompt_text" in data:  # the history block, then the text: with the ids the tenant knows
        data["prompt_text"] = data["prompt_text"][: len(data["prompt_text"]) - len(data["text"])] + text
    data["text"] = text
    session.record(scope.tenant, f"{label}:{format}", int(data["tokens"]))
    return data
