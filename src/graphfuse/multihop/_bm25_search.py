"""The BM25 stage: lexical retrieval as a signal, to fuse with semantic search."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Document, Query
from ..stages import NamedStage
from ..validation import check_options, check_positive_int
from ._bm25 import BM25Index

__all__ = ["BM25Search"]

_OPTIONS = ("limit",)


class BM25Search(NamedStage):
    """Lexical (Okapi BM25) search for the query over a :class:`BM25Index`.

    The best ``limit`` documents become candidates (ids only, like semantic search: hydrate
    later) with the ``bm25`` signal ``score / best score`` of this query; candidates already
    present gain the signal when hit. The query's metadata filter is checked against the
    metadata the index was built with. Fuse with ``semantic`` through the scorer (weighted
    sum, or :class:`~graphfuse.scoring.ReciprocalRankFusion` for the classic hybrid).

    Per-call options (``options={"bm25": {...}}``): ``limit``.
    """

    traits = StageTraits(needs_stores=False)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_index", "_limit")

    def __init__(self, index: BM25Index, *, limit: int = 50, name: str = "bm25", signal: str = "bm25") -> None:
        if not isinstance(index, BM25Index):
            raise InvalidInput(f"index must be a BM25Index, got {index!r}")
        self._index = index
        self._limit = check_positive_int(limit, "limit")
        self._set_names(name, signal)

    def __repr__(self) -> str:
        return f"BM25Search({self._index!r}, limit={self._limit}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        check_options(self._name, options, _OPTIONS)
        check_positive_int(options.get("limit", self._limit), f"stage {self._name!r} option 'limit'")

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        options = query.options.get(self._name, {})
        self.check_options(options)
        hits = self._index.search(query.text, options.get("limit", self._limit), filter=query.filter)
        if not hits:
            return list(candidates)
        top = hits[0][1]
        signal = {doc_id: min(1.0, score / top) for doc_id, score in hits}
        out = [c.with_signal(self._signal, signal[c.id]) if c.id in signal else c for c in candidates]
        present = {c.id for c in candidates}
        out.extend(Candidate(Document(i), {self._signal: v}) for i, v in signal.items() if i not in present)
        return out
