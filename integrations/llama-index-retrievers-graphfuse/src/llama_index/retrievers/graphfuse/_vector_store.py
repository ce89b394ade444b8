"""A LlamaIndex vector store used as a GraphFuse VectorStore."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterOperator,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.core.vector_stores.types import MetadataFilter as LlamaFilter

from graphfuse import Condition, GraphFuseError, InvalidInput, MetadataFilter, VectorHit, VectorRecord
from graphfuse.validation import check_positive_int, check_vector_records

__all__ = ["LlamaIndexVectorStore", "to_metadata_filters"]

_OPERATORS = {
    "$eq": FilterOperator.EQ,
    "$ne": FilterOperator.NE,
    "$gt": FilterOperator.GT,
    "$gte": FilterOperator.GTE,
    "$lt": FilterOperator.LT,
    "$lte": FilterOperator.LTE,
    "$in": FilterOperator.IN,
    "$nin": FilterOperator.NIN,
}


def _llama_condition(c: Condition) -> LlamaFilter:
    if c.op == "$exists":
        if c.value:
            raise InvalidInput(f"filter {c.key!r} $exists: true has no LlamaIndex metadata filter equivalent")
        return LlamaFilter(key=c.key, value=None, operator=FilterOperator.IS_EMPTY)
    values = list(c.value) if isinstance(c.value, tuple) else [c.value]
    if any(isinstance(v, bool) for v in values):
        raise InvalidInput(f"filter {c.key!r} {c.op}: LlamaIndex metadata filters cannot hold booleans")
    return LlamaFilter(
        key=c.key, value=list(c.value) if c.op in ("$in", "$nin") else c.value, operator=_OPERATORS[c.op]
    )


def to_metadata_filters(spec: MetadataFilter | None) -> MetadataFilters | None:
    """Translate a GraphFuse filter to LlamaIndex ``MetadataFilters`` (AND of the conditions).

    ``$exists: false`` becomes ``IS_EMPTY``; ``$exists: true`` and boolean values have no
    LlamaIndex equivalent and raise :class:`~graphfuse.InvalidInput`.
    """
    if spec is None:
        return None
    return MetadataFilters(filters=[_llama_condition(c) for c in spec.conditions])


class LlamaIndexVectorStore:
    """A LlamaIndex ``BasePydanticVectorStore`` used as a GraphFuse :class:`~graphfuse.VectorStore`.

    ``search`` awaits ``aquery`` with a ``VectorStoreQuery`` (GraphFuse filters translated by
    :func:`to_metadata_filters`) and reads the ids and similarities back; the wrapped store
    should measure cosine similarity (LlamaIndex's default). ``upsert`` awaits ``async_add``
    with one embedding-only ``TextNode`` per record; ``delete`` awaits ``adelete_nodes``.
    ``delete`` and ``count`` need to know which ids the store holds: they work with
    ``SimpleVectorStore`` and with stores implementing ``aget_nodes``, and raise
    :class:`~graphfuse.GraphFuseError` otherwise.
    """

    __slots__ = ("_dimension", "_store")

    def __init__(self, vector_store: BasePydanticVectorStore, *, dimension: int | None = None) -> None:
        if not isinstance(vector_store, BasePydanticVectorStore):
            raise InvalidInput(
                f"vector_store must be a LlamaIndex BasePydanticVectorStore, got {type(vector_store).__name__}"
            )
        self._store = vector_store
        self._dimension = None if dimension is None else check_positive_int(dimension, "dimension")

    @property
    def dimension(self) -> int | None:
        """The vector size, when given."""
        return self._dimension

    def __repr__(self) -> str:
        return f"LlamaIndexVectorStore({type(self._store).__name__}, dimension={self._dimension})"

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        # Everything is validated before the first write, so bad input writes nothing.
        vectors = check_vector_records(records, self._dimension)
        nodes = [
            TextNode(id_=r.id, text="", embedding=v, metadata=dict(r.metadata))
            for r, v in zip(records, vectors, strict=True)
        ]
        if nodes:
            await self._store.async_add(nodes)

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: MetadataFilter | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        check_positive_int(limit, "limit")
        query = VectorStoreQuery(
            query_embedding=[float(x) for x in vector],
            similarity_top_k=limit,
            filters=to_metadata_filters(MetadataFilter.parse(filter)),
        )
        found = await self._store.aquery(query)
        ids = found.ids if found.ids is not None else [n.node_id for n in found.nodes or []]
        similarities = found.similarities or []
        if len(similarities) != len(ids):
            raise GraphFuseError(
                f"{type(self._store).__name__} returned {len(ids)} ids but {len(similarities)} similarities"
            )
        hits = [VectorHit(i, float(s)) for i, s in zip(ids, similarities, strict=True)]
        if min_score is not None:
            hits = [h for h in hits if h.score >= min_score]
        return hits[:limit]

    async def _held(self, ids: Sequence[str] | None) -> set[str]:
        if isinstance(self._store, SimpleVectorStore):
            held = set(self._store.data.embedding_dict)
            return held if ids is None else held & set(ids)
        try:
            nodes = await self._store.aget_nodes(node_ids=None if ids is None else list(ids))
        except NotImplementedError as exc:
            raise GraphFuseError(
                f"{type(self._store).__name__} cannot list its nodes (aget_nodes), so it cannot count or delete"
            ) from exc
        return {n.node_id for n in nodes}

    async def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        held = await self._held(ids)
        if held:
            await self._store.adelete_nodes(node_ids=sorted(held))
        return len(held)

    async def count(self) -> int:
        return len(await self._held(None))

    async def close(self) -> None:
        """Nothing to close: the wrapped store belongs to the caller."""
