"""Optional capabilities: interfaces a component may implement beyond its kind's protocol.

They are runtime-checkable :class:`~typing.Protocol` classes (implement the method, no base
class needed); GraphFuse tests for them with ``isinstance`` and uses them when present: the
pipeline checks options and explains scores, corpus indexes and Personalized PageRank list
documents and walk adjacency, the indexer refreshes PageRank and skips unchanged documents only
when their vectors are there, hosts run signal stages and scorers over their own records. See
docs/plugins.md, "Optional capabilities".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast, runtime_checkable

from ._errors import InvalidInput
from ._filters import FilterLike
from ._protocols import RunContext
from ._types import Candidate, Document, Query

__all__ = [
    "AdjacencySource",
    "ChecksOptions",
    "DocumentListing",
    "ExplainsScores",
    "PageRankRefreshing",
    "RanksDocuments",
    "SignalInput",
    "SignalScorer",
    "SignalStage",
    "VectorLookup",
    "VectorSource",
    "Versioned",
    "as_signal_stage",
]


@runtime_checkable
class VectorLookup(Protocol):
    """A vector store that says which ids it holds a vector for.

    The :class:`~graphfuse.indexing.Indexer` skips an unchanged document only when the vectors
    of its units are there (a truncated or replaced vector file must not leave it orphaned);
    with a vector store without this capability the skip trusts the graph store's record.
    """

    async def existing_ids(self, ids: Sequence[str]) -> set[str]: ...


@runtime_checkable
class Versioned(Protocol):
    """A store that says when it was written to.

    ``generation()`` returns a value (an integer for GraphFuse's stores) that changes with every
    write, by this object or any other (another process writing the same file included), and
    never returns to an earlier value while the store exists. A
    :class:`~graphfuse.ResultCache` puts it in every key, so a write makes earlier entries
    unreachable at once; stores without it are cached only on request, for the TTL.
    """

    async def generation(self) -> int: ...


@runtime_checkable
class VectorSource(Protocol):
    """A vector store that hands back the vectors it holds, by id.

    ``get_vectors(ids)`` maps each of ``ids`` that has a vector to it (ids without one are left
    out; an empty ``ids`` gives ``{}``). The :class:`~graphfuse.rerankers.EmbeddingReranker`
    given such a store scores documents by the vectors the index stored for them instead of
    embedding their texts again; without it the reranker embeds.
    """

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]: ...


@runtime_checkable
class RanksDocuments(Protocol):
    """A reranker that scores documents (ids, metadata, content), not only their texts.

    The :class:`~graphfuse.stages.Rerank` stage calls ``rerank_documents(query, documents)``
    instead of ``rerank(query, texts)`` when its reranker has it; the same contract holds: one
    score in [0, 1] per document, input order.
    """

    async def rerank_documents(self, query: str, documents: Sequence[Document]) -> list[float]: ...


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


_SIGNAL_FIELDS = ("id", "created_at", "updated_at", "metadata")


@dataclass(frozen=True, slots=True)
class SignalInput:
    """The one part of each document a :class:`SignalStage` computes its signal from.

    ``field`` is ``"id"`` (the value is the document id), ``"created_at"`` or ``"updated_at"``
    (the UTC ``datetime``, or ``None`` when the document has none) or ``"metadata"`` (the
    document's metadata mapping, of which the stage reads only ``key``). :meth:`read` gives that
    value for a :class:`~graphfuse.Document`; a host holding its own records gives the same value
    from them (for ``"metadata"`` any mapping holding the same entry under ``key``, or lacking it
    as the document does, e.g. the record's own metadata, not copied).
    """

    field: str
    key: str | None = None

    def __post_init__(self) -> None:
        if self.field not in _SIGNAL_FIELDS:
            raise InvalidInput(f"SignalInput field must be one of {_SIGNAL_FIELDS}, got {self.field!r}")
        if (self.field == "metadata") != (isinstance(self.key, str) and bool(self.key)):
            raise InvalidInput(
                f"SignalInput key must be a non-empty string for field 'metadata' and None otherwise, got {self.key!r}"
            )

    def read(self, document: Document) -> Any:
        """The value of this input for ``document``."""
        field = self.field
        if field == "id":
            return document.id
        if field == "metadata":
            return document.metadata
        return document.created_at if field == "created_at" else document.updated_at


@runtime_checkable
class SignalStage(Protocol):
    """A stage that sets one signal on each candidate from one part of its document, and does nothing else.

    Its ``run`` returns the candidates it was given, in their order, each with ``signal`` set to
    the value ``signal_values`` computes for it from ``signal_input.read(candidate.document)``
    (after the same checks of options and input). A host that keeps its own records (LlamaIndex
    nodes, LangChain documents) reads that one value from each record and calls
    :func:`graphfuse.hosts.run_signal_stage`, building no :class:`~graphfuse.Document` or
    :class:`~graphfuse.Candidate`. The built-in :class:`~graphfuse.stages.TemporalDecay`,
    :class:`~graphfuse.stages.AccessPopularity` and :class:`~graphfuse.stages.PageRank` are
    signal stages (their ``run`` is ``signal_values`` over candidates); a subclass that changes
    ``run`` must change ``signal_values`` alike.
    """

    @property
    def name(self) -> str: ...

    @property
    def signal(self) -> str: ...

    @property
    def signal_input(self) -> SignalInput: ...

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext
    ) -> list[float]: ...


_SIGNAL_STAGE_ATTRIBUTES = ("name", "signal", "signal_input")


def as_signal_stage(stage: object) -> SignalStage | None:
    """``stage`` when a host may call its ``signal_values`` instead of its ``run``, else ``None``.

    That is: it is a :class:`SignalStage` and its ``run`` comes from the class that defines its
    ``signal_values`` (a subclass overriding only one of them is run as a plain stage, so its
    override is honoured). Check once per stage object, not per call.
    """
    # What isinstance(stage, SignalStage) checks, without the typing machinery's cost on every call of
    # a host step: the attributes present, signal_values callable.
    if not callable(getattr(stage, "signal_values", None)) or not all(
        hasattr(stage, member) for member in _SIGNAL_STAGE_ATTRIBUTES
    ):
        return None
    mro = type(stage).__mro__
    run_owner = next((c for c in mro if "run" in c.__dict__), None)
    values_owner = next((c for c in mro if "signal_values" in c.__dict__), None)
    # A subclass overriding one of the two (not both) may have made them disagree: run it as a stage.
    return cast(SignalStage, stage) if run_owner is not None and run_owner is values_owner else None


@runtime_checkable
class SignalScorer(Protocol):
    """A scorer that reads only each candidate's id and signals, so it can score them without candidates.

    ``score_signals(ids, signals)`` equals ``score(candidates)`` for candidates with those ids
    and signals (same order), and ``explain_signals`` equals ``explain``: a host fusing its own
    records calls these instead. :class:`~graphfuse.scoring.WeightedScorer` and
    :class:`~graphfuse.scoring.ReciprocalRankFusion` are signal scorers.
    """

    def score_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[float]: ...

    def explain_signals(self, ids: Sequence[str], signals: Sequence[Mapping[str, float]]) -> list[dict[str, float]]: ...
