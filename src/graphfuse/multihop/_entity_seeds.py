"""The entity-seeds stage: documents about the entities a question names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import GraphStore, RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from .._retrieval._run_documents import load_documents
from ..indexing import EntityExtractor
from ..stages import NamedStage
from ..validation import check_options, check_positive_int, check_unit
from ._bm25 import BM25Index

__all__ = ["EntitySeeds"]


class EntitySeeds(NamedStage):
    """Add the documents about entities the query mentions, with a strong ``entity`` signal.

    ``linker`` is an entity extractor whose mentions carry ``targets`` (a
    :class:`~graphfuse.indexing.TitleLinker` over the corpus titles). Every target of a mention
    found in the query text is loaded from ``graph_store`` (with the query's filter: a target
    outside it is not added) and gets ``entity = 1.0``; a mention whose title is made of a
    single word gets ``single_word`` (0.6 by default: single words are more often incidental).
    When several documents share the title (paragraphs of one article), the strength is
    divided among them, so one ambiguous name does not fill the top ranks. With ``words`` (a
    :class:`BM25Index` of the corpus) a one-word title's weight is also multiplied by the share
    of documents that do not hold the word: a title most pages use ("models" in a library's
    documentation) is the corpus's vocabulary, not a name. At most ``limit``
    documents are added, longest mentions first. These candidates are hydrated already.
    """

    traits = StageTraits()
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_graph_store", "_limit", "_linker", "_single", "_words")

    def __init__(
        self,
        graph_store: GraphStore,
        linker: EntityExtractor,
        *,
        limit: int = 10,
        single_word: float = 0.6,
        words: BM25Index | None = None,
        name: str = "entity",
        signal: str = "entity",
    ) -> None:
        if not callable(getattr(graph_store, "get_documents", None)):
            raise InvalidInput(f"graph_store must be a GraphStore (with 'get_documents'), got {graph_store!r}")
        if not callable(getattr(linker, "extract", None)):
            raise InvalidInput(f"linker must be an EntityExtractor (with 'extract'), got {linker!r}")
        self._graph_store = graph_store
        self._linker = linker
        self._limit = check_positive_int(limit, "limit")
        self._single = check_unit(single_word, "single_word")
        if words is not None and not isinstance(words, BM25Index):
            raise InvalidInput(f"words must be a BM25Index or None, got {words!r}")
        self._words = words
        self._set_names(name, signal)

    def __repr__(self) -> str:
        return f"EntitySeeds({self._linker!r}, limit={self._limit}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """EntitySeeds takes no per-call options."""
        check_options(self._name, options, ())

    def _one_word(self, word: str) -> float:
        # A one-word title that most pages use is the corpus's vocabulary ("models" in a library's
        # docs), not a name: it weighs as much as the share of pages that do not hold it.
        share = self._words.document_share(word) if self._words is not None else 0.0
        return self._single * (1.0 - share)

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        mentions = sorted(self._linker.extract(query.text), key=lambda m: -len(m.entity))
        strength: dict[str, float] = {}
        for m in mentions:
            value = (self._one_word(m.entity) if " " not in m.entity else 1.0) / max(1, len(m.targets))
            for target in m.targets:
                if len(strength) >= self._limit and target not in strength:
                    break
                strength[target] = max(value, strength.get(target, 0.0))
        if not strength:
            return list(candidates)
        out = [c.with_signal(self._signal, strength[c.id]) if c.id in strength else c for c in candidates]
        present = {c.id for c in candidates}
        missing = [i for i in strength if i not in present]
        if missing:
            docs = await load_documents(self._graph_store, missing, context, filter=query.filter)
            out.extend(Candidate(docs[i], {self._signal: strength[i]}) for i in missing if i in docs)
        return out
