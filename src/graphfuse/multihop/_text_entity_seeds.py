"""The text-entity seeds stage: the entity nodes a question names start the graph walk."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._capabilities import DocumentListing
from .._core._errors import InvalidInput
from .._core._protocols import GraphStore, RunContext
from .._core._sync import sync_form
from .._core._types import Candidate, Query
from ..indexing import ENTITY_PREFIX, KIND_KEY, EntityMatcher
from ..stages import NamedStage
from ..validation import check_options, check_unit
from ._ppr import GRAPH_SEEDS

__all__ = ["TextEntitySeeds", "aentity_matcher", "entity_matcher"]


async def aentity_matcher(graph_store: GraphStore, *, batch_size: int = 1000) -> EntityMatcher:
    """An :class:`~graphfuse.indexing.EntityMatcher` of the entity nodes a store holds (name -> node id).

    The store must list its documents (:class:`~graphfuse.DocumentListing`); an index built
    without ``entity_graph=True`` gives an empty matcher.
    """
    if not isinstance(graph_store, DocumentListing):
        raise InvalidInput(f"graph store {graph_store!r} cannot list its documents (it has no iter_documents)")
    names: dict[str, str] = {}
    async for doc in graph_store.iter_documents(batch_size=batch_size):
        if doc.metadata.get(KIND_KEY) == "entity" and doc.id.startswith(ENTITY_PREFIX):
            names[doc.id[len(ENTITY_PREFIX) :]] = doc.id
    return EntityMatcher(names)


entity_matcher = sync_form(aentity_matcher)
"""Sync form of :func:`aentity_matcher`: same arguments, result and errors, no event loop needed."""


class TextEntitySeeds(NamedStage):
    """Find the entities a question names (tolerant of spacing and case) and seed the walk with them.

    ``matcher`` maps entity names to entity node ids (:func:`entity_matcher` reads them from
    a store indexed with ``entity_graph=True``). Each entity found in the query text becomes a
    seed of :class:`PersonalizedPageRank` (``context.values["graph_seeds"]``) with weight
    ``weight`` (``single_word`` for a one-word name, which is more often ambiguous). A one-word
    match that the question writes in lower case (*the place of birth*) is a common word, not
    a name, and is skipped, unless the whole question is in lower case. The candidates pass
    unchanged: the walk, not this stage, turns entities into passages.
    """

    __slots__ = ("_matcher", "_single", "_weight")

    def __init__(
        self, matcher: EntityMatcher, *, weight: float = 1.0, single_word: float = 0.6, name: str = "text_entity"
    ) -> None:
        if not isinstance(matcher, EntityMatcher):
            raise InvalidInput(f"matcher must be an EntityMatcher, got {matcher!r}")
        self._matcher = matcher
        self._weight = check_unit(weight, "weight", high=10.0)
        self._single = check_unit(single_word, "single_word")
        self._set_names(name)

    def __repr__(self) -> str:
        return f"TextEntitySeeds({self._matcher!r}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """TextEntitySeeds takes no per-call options."""
        check_options(self._name, options, ())

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        seeds: dict[str, float] = dict(context.values.get(GRAPH_SEEDS) or {})
        # A one-word match written in lower case is a common word ("the place of birth"), not a
        # name, unless the whole question is in lower case (then case tells nothing).
        cased = any(ch.isupper() for ch in query.text)
        for key, node, surface in self._matcher.match_surface(query.text):
            single = " " not in key
            if single and cased and not any(ch.isupper() or ch.isdigit() for ch in surface):
                continue
            weight = self._weight * (self._single if single else 1.0)
            seeds[node] = max(seeds.get(node, 0.0), weight)
        if seeds:
            context.values[GRAPH_SEEDS] = seeds
        return list(candidates)
