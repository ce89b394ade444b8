"""Graph expansion of LlamaIndex nodes, shared by GraphExpansionRetriever and GraphExpansionPostprocessor."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from llama_index.core.schema import NodeWithScore

from graphfuse import Candidate, FilterLike, GraphStore, InvalidInput, MetadataFilter, NotFound
from graphfuse.validation import check_choice, check_positive_int, check_relation_types, check_unit

from ._nodes import NodeMapping, from_candidates, to_candidates

__all__ = ["Expansion", "UNKNOWN_CHOICES"]

UNKNOWN_CHOICES = ("keep", "error")
_MAX_DEPTH = 3


@dataclass(frozen=True)
class Expansion:
    """Validated expansion settings and the expansion itself.

    Every node whose graph id the store knows (and whose document passes ``filter``) is a seed
    and gets the ``graph`` signal 1.0; the store's ``related`` adds documents within ``depth``
    hops, at most ``max_expansion``, nearest first, each with ``graph = decay ** distance`` and
    the score ``seed score * decay ** distance`` (``None`` when the seed had no score). The
    filter is applied on every hop, so a document outside it is never returned nor walked
    through. Nodes the store does not know are kept unexpanded (``unknown="keep"``) or raise
    :class:`~graphfuse.NotFound` (``unknown="error"``).
    """

    graph_store: GraphStore
    depth: int = 2
    max_expansion: int = 100
    relation_types: tuple[str, ...] | None = None
    decay: float = 0.5
    filter: MetadataFilter | None = None
    unknown: str = "keep"
    signal: str = "graph"

    @classmethod
    def build(
        cls,
        graph_store: GraphStore,
        *,
        depth: int,
        max_expansion: int,
        relation_types: Sequence[str] | None,
        decay: float,
        filter: FilterLike | None,
        unknown: str,
        signal: str,
    ) -> Expansion:
        """Validate the settings (raises :class:`~graphfuse.InvalidInput` naming the argument)."""
        for method in ("related", "get_documents"):
            if not callable(getattr(graph_store, method, None)):
                raise InvalidInput(f"graph_store must be a GraphStore (with {method!r}), got {graph_store!r}")
        return cls(
            graph_store,
            check_positive_int(depth, "depth", high=_MAX_DEPTH),
            check_positive_int(max_expansion, "max_expansion"),
            check_relation_types(relation_types, "relation_types"),
            check_unit(decay, "decay", open_low=True),
            MetadataFilter.parse(filter),
            check_choice(unknown, "unknown", UNKNOWN_CHOICES),
            signal,
        )

    async def expand(self, nodes: Sequence[NodeWithScore], mapping: NodeMapping) -> list[NodeWithScore]:
        """The input nodes (seeds carrying ``graph`` 1.0), then the related documents as new nodes."""
        if not nodes:
            return []
        converted = to_candidates(nodes, mapping)
        ids = list(converted.groups)
        existing = await self.graph_store.get_documents(ids)
        unknown = [i for i in ids if i not in existing]
        if unknown and self.unknown == "error":
            shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
            raise NotFound(
                f"{len(unknown)} node(s) are not in the graph store ({shown}); "
                "pass unknown='keep' to keep them unexpanded, or set id_key to the metadata key holding graph ids"
            )
        seeds = [i for i in ids if i in existing and (self.filter is None or self.filter.matches(existing[i].metadata))]
        seed_set = set(seeds)
        out = [c.with_signal(self.signal, 1.0) if c.id in seed_set else c for c in converted.candidates]
        if not seeds:
            return from_candidates(out, nodes, converted, mapping)
        related = await self.graph_store.related(
            seeds, depth=self.depth, filter=self.filter, relation_types=self.relation_types, limit=self.max_expansion
        )
        best: dict[str, tuple[int, str]] = {}
        for r in related:
            if r.id in converted.groups:
                continue
            if isinstance(r.distance, bool) or not isinstance(r.distance, int) or not 1 <= r.distance <= self.depth:
                raise InvalidInput(
                    f"graph store {type(self.graph_store).__name__} returned {r.id!r} at distance "
                    f"{r.distance!r} for depth {self.depth}"
                )
            if r.id not in best or (r.distance, r.seed) < best[r.id]:
                best[r.id] = (r.distance, r.seed)
        new_ids = sorted(best, key=lambda i: (best[i][0], i))[: self.max_expansion]
        docs = await self.graph_store.get_documents(new_ids, filter=self.filter) if new_ids else {}
        seed_scores = _seed_scores(nodes, converted.groups)
        scores: dict[str, float | None] = {}
        for doc_id in new_ids:
            if doc_id not in docs:
                continue
            distance, seed = best[doc_id]
            factor = self.decay**distance
            seed_score = seed_scores.get(seed)
            scores[doc_id] = None if seed_score is None else seed_score * factor
            out.append(Candidate(docs[doc_id], {self.signal: factor}))
        return from_candidates(out, nodes, converted, mapping, scores)


def _seed_scores(nodes: Sequence[NodeWithScore], groups: dict[str, list[int]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for doc_id, members in groups.items():
        values = [s for s in (nodes[i].score for i in members) if s is not None]
        out[doc_id] = max(values) if values else None
    return out
