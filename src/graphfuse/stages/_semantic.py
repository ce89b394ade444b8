"""The semantic stage: embed the query, search the vector store, emit ids with the ``semantic`` signal."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._filters import FilterLike, MetadataFilter
from .._core._protocols import Embedder, RunContext, VectorStore
from .._core._traits import StageTraits
from .._core._types import Candidate, Document, Query
from .._retrieval._passages import QUERY_VECTOR
from ..validation import check_options, check_positive_int, check_unit, combine_filters
from ._named import NamedStage

__all__ = ["SemanticSearch"]

_OPTIONS = ("limit", "min_score")


class SemanticSearch(NamedStage):
    """Vector search for the query; the entry stage of most pipelines.

    The query is embedded with ``embedder.embed_query`` and searched with cosine similarity in
    ``vector_store``; the best ``limit`` hits become candidates carrying **only their id**
    (``content`` is ``None``: put :class:`Hydrate` after this stage) and the ``semantic``
    signal ``max(0, cosine)``. ``min_score`` drops hits below that cosine; ``filter`` is a
    metadata filter ANDed with the query's filter. Candidates already present (if this stage
    is not first) keep their place and gain the signal when hit.

    Per-call options (``options={"semantic": {...}}``): ``limit``, ``min_score``.
    """

    traits = StageTraits()
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_embedder", "_filter", "_limit", "_min_score", "_vector_store")

    def __init__(
        self,
        vector_store: VectorStore,
        embedder: Embedder,
        *,
        limit: int = 50,
        min_score: float | None = None,
        filter: FilterLike | None = None,
        name: str = "semantic",
        signal: str = "semantic",
    ) -> None:
        if not callable(getattr(vector_store, "search", None)):
            raise InvalidInput(f"vector_store must be a VectorStore (with an async 'search'), got {vector_store!r}")
        if not callable(getattr(embedder, "embed_query", None)):
            raise InvalidInput(f"embedder must be an Embedder (with an async 'embed_query'), got {embedder!r}")
        self._vector_store = vector_store
        self._embedder = embedder
        self._limit = check_positive_int(limit, "limit")
        self._min_score = None if min_score is None else check_unit(min_score, "min_score", low=-1.0)
        self._filter = MetadataFilter.parse(filter)
        self._set_names(name, signal)

    @property
    def embedder(self) -> Embedder:
        """The embedder this stage embeds the query with."""
        return self._embedder

    def __repr__(self) -> str:
        return f"SemanticSearch(limit={self._limit}, min_score={self._min_score}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[int, float | None]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        limit = check_positive_int(options.get("limit", self._limit), f"{prefix} 'limit'")
        min_score = options.get("min_score", self._min_score)
        if min_score is not None:
            min_score = check_unit(min_score, f"{prefix} 'min_score'", low=-1.0)
        return limit, min_score

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        limit, min_score = self._settings(query.options.get(self._name, {}))
        vector = await self._embedder.embed_query(query.text)
        self._check_vector(vector)
        # Left for the pipeline's passage selection, which scores chunks with the same vector.
        values = getattr(context, "values", None)
        if isinstance(values, dict):
            values[QUERY_VECTOR] = (self._embedder, vector)
        hits = await self._vector_store.search(
            vector, limit=limit, filter=combine_filters(query.filter, self._filter), min_score=min_score
        )
        best: dict[str, float] = {}
        for hit in hits:
            score = hit.score
            if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
                raise InvalidInput(f"vector store {type(self._vector_store).__name__} returned score {score!r}")
            # Cosine may leave [-1, 1] by a rounding error; the signal is clamped to [0, 1].
            value = min(1.0, max(0.0, float(score)))
            best[hit.id] = max(value, best.get(hit.id, 0.0))
        out = [c.with_signal(self._signal, best.pop(c.id)) if c.id in best else c for c in candidates]
        out.extend(Candidate(Document(doc_id), {self._signal: value}) for doc_id, value in best.items())
        return out

    def _check_vector(self, vector: object) -> None:
        who = type(self._embedder).__name__
        if isinstance(vector, (str, bytes)) or not isinstance(vector, Sequence):
            raise InvalidInput(f"embedder {who} returned {type(vector).__name__}, not a vector")
        expected = self._embedder.dimension
        if len(vector) != expected:
            raise InvalidInput(f"embedder {who} returned a vector of dimension {len(vector)}, expected {expected}")
        store_dim = getattr(self._vector_store, "dimension", None)
        if store_dim is not None and len(vector) != store_dim:
            raise InvalidInput(
                f"embedder {who} returned a vector of dimension {len(vector)}, "
                f"but vector store {type(self._vector_store).__name__} holds dimension {store_dim}"
            )
        for x in vector:
            if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
                raise InvalidInput(f"embedder {who} returned a vector holding {x!r}")
