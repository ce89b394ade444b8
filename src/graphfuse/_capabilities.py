"""Optional capabilities: interfaces a component may implement beyond its kind's protocol.

GraphFuse tests for them with ``isinstance`` (they are runtime-checkable :class:`~typing.Protocol`
classes: implement the method, no base class needed) and uses them when present:

============================ ==================================================================
capability                   used by
============================ ==================================================================
:class:`ChecksOptions`       :class:`~graphfuse.Pipeline` validates per-call options before I/O
:class:`ExplainsScores`      :class:`~graphfuse.Pipeline` fills ``Result.contributions``
:class:`DocumentListing`     :func:`graphfuse.multihop.corpus_indexes`, the ``multihop`` preset
:class:`AdjacencySource`     :class:`~graphfuse.multihop.PersonalizedPageRank` (whole-graph walk)
:class:`PageRankRefreshing`  :class:`~graphfuse.indexing.Indexer` (precompute after writes)
============================ ==================================================================
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from ._filters import FilterLike
from ._types import Candidate, Document

__all__ = ["AdjacencySource", "ChecksOptions", "DocumentListing", "ExplainsScores", "PageRankRefreshing"]


@runtime_checkable
class ChecksOptions(Protocol):
    """A stage that validates its per-call options (``Query.options[stage.name]``).

    ``check_options`` raises :class:`~graphfuse.InvalidInput` naming the bad option; the pipeline
    calls it before any stage runs, so a typo costs no I/O.
    """

    def check_options(self, options: Mapping[str, Any]) -> None: ...


@runtime_checkable
class ExplainsScores(Protocol):
    """A scorer that reports each signal's contribution to each candidate's score."""

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]: ...


@runtime_checkable
class DocumentListing(Protocol):
    """A graph store that can list every document it holds, in batches."""

    def iter_documents(
        self, *, filter: FilterLike | None = None, batch_size: int = 1000
    ) -> AsyncIterator[Document]: ...


@runtime_checkable
class AdjacencySource(Protocol):
    """A graph store that hands out its whole directed adjacency: ``(ids, scipy CSR matrix)``."""

    async def adjacency(self, relation_types: Sequence[str] | None = None) -> tuple[Sequence[str], Any]: ...


@runtime_checkable
class PageRankRefreshing(Protocol):
    """A graph store that can precompute its PageRank after writes."""

    async def refresh_pagerank(self) -> None: ...
