"""Seams for host integrations: run stages outside a pipeline, ask a stage what it needs, score signals.

A host package (LlamaIndex, LangChain, your own framework) uses these to run the core's stages over
its own objects with the same checks, logs, metrics and errors as a :class:`~graphfuse.Pipeline`;
most hosts are written on :mod:`graphfuse.records`, which is built from them. Applications need
none of it. See ``docs/write-an-integration.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._core._capabilities import SignalInput, SignalScorer, SignalStage, as_signal_stage
from ._core._errors import InvalidInput
from ._core._filters import FilterLike, MetadataFilter
from ._core._traits import DeclaresTraits, StageTraits, stage_traits
from ._core._types import Query
from ._retrieval._pipeline import StageRunContext, run_signal_stage, run_stage, run_stages

__all__ = [
    "NO_QUERY",
    "DeclaresTraits",
    "SignalInput",
    "SignalScorer",
    "SignalStage",
    "StageRunContext",
    "StageTraits",
    "as_signal_stage",
    "host_query",
    "run_signal_stage",
    "run_stage",
    "run_stages",
    "stage_traits",
]

NO_QUERY = "(no query)"
"""The query text a host runs stages that never read it with when it has none."""


def host_query(
    text: str | None,
    *,
    needs_query: bool,
    what: str = "the stage",
    missing: str = "none was given",
    filter: FilterLike | None = None,
    options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Query:
    """The :class:`~graphfuse.Query` a host runs stages with: ``text``, or :data:`NO_QUERY` when it has
    none (``None`` or blank) and the stages never read it (``needs_query=False``; see
    :func:`stage_traits`). For stages that read it a missing text raises
    :class:`~graphfuse.InvalidInput`: ``"{what} needs the query text, but {missing}"`` (say how to
    give one in ``missing``), never a made-up query."""
    if text is None or not text.strip():
        if needs_query:
            raise InvalidInput(f"{what} needs the query text, but {missing}")
        text = NO_QUERY
    return Query(text, MetadataFilter.parse(filter), options or {})
