"""Writes: ingest and delete, one at a time, each tenant through an indexer of its own.

A tenant's indexer links new documents to its own titles and aliases only (one title linker per
tenant, read from the store on its first write); in a store built with an entity graph, new
documents get entity nodes inside the tenant's scope. Every write, finished or not, is reported
to ``on_write`` (the preset pipelines that read the corpus are rebuilt).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._core._capabilities import DocumentListing
from .._core._filters import MetadataFilter
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._types import KIND_KEY
from ..indexing import Indexer, SourceRecord, TitleLinker, metadata_aliases
from ._problems import Problem
from ._scope import TENANT_KEY, Scope

__all__ = ["Writers", "has_entity_nodes"]


async def has_entity_nodes(graph: GraphStore) -> bool:
    """Whether the store was built with an entity graph: it holds an entity node (of anyone)."""
    if isinstance(graph, DocumentListing):
        kind = MetadataFilter.parse({KIND_KEY: "entity"})
        async for _ in graph.iter_documents(filter=kind, batch_size=1):
            return True
    return False


@dataclass
class _Writer:
    indexer: Indexer
    linker: TitleLinker


class Writers:
    """Ingest and delete for every tenant of one store, under one lock.

    Each call names the store's components as the service holds them then; a tenant's indexer
    keeps those of its first write. ``entity_graph`` says whether new documents get entity nodes;
    ``on_write`` is called after every write, in the lock, whether it finished or failed.
    """

    def __init__(self, *, entity_graph: Callable[[], Awaitable[bool]], on_write: Callable[[], None]) -> None:
        self._entity_graph = entity_graph
        self._on_write = on_write
        self._lock = asyncio.Lock()
        self._writers: dict[str | None, _Writer] = {}

    async def _writer(self, scope: Scope, graph: GraphStore, vectors: VectorStore, embedder: Embedder) -> _Writer:
        writer = self._writers.get(scope.tenant)
        if writer is None:
            # One title linker per tenant: a document only ever mentions its own tenant's titles.
            linker = TitleLinker()
            if isinstance(graph, DocumentListing):
                async for doc in graph.iter_documents(filter=scope.base_filter):
                    if not scope.visible(doc.id, doc.metadata):
                        continue
                    if doc.metadata.get(KIND_KEY) in ("chunk", "entity"):
                        continue
                    title = doc.metadata.get("title")
                    titles = [title] if isinstance(title, str) and title.strip() else []
                    for name in (*titles, *metadata_aliases(doc.metadata)):  # as the indexer learns them
                        linker.add(name, doc.id)
            # A store built with an entity graph keeps one: new documents get their entity nodes
            # too, inside the tenant's scope (ids under the tenant, its tenant metadata), so the
            # same name in two tenants is two nodes that the tenant filter keeps apart.
            indexer = Indexer.for_records(
                [],
                graph,
                vectors,
                embedder,
                entity_graph=await self._entity_graph(),
                linker=linker,
                entity_namespace=scope.prefix,
                entity_metadata=None if scope.tenant is None else {TENANT_KEY: scope.tenant},
            )
            writer = self._writers[scope.tenant] = _Writer(indexer, linker)
        return writer

    async def ingest(
        self,
        scope: Scope,
        records: Sequence[SourceRecord],
        *,
        graph: GraphStore,
        vectors: VectorStore,
        embedder: Embedder,
    ) -> dict[str, Any]:
        """Index ``records`` (already stamped for ``scope``); durable once this returns."""
        async with self._lock:
            local = {r.id for r in records}
            outside = sorted({x for r in records for x in r.links if x not in local})
            found = await graph.get_documents(outside, filter=scope.base_filter) if outside else {}
            unknown = [x for x in outside if x not in found]
            warnings: list[str] = []
            if unknown:
                shown = ", ".join(repr(scope.external(x)) for x in unknown[:10])
                more = " ..." if len(unknown) > 10 else ""
                warnings.append(f"links to {len(unknown)} unknown document id(s) skipped: {shown}{more}")
                gone = set(unknown)
                records = [dataclasses.replace(r, links=tuple(x for x in r.links if x not in gone)) for r in records]
            writer = await self._writer(scope, graph, vectors, embedder)
            try:
                report = await writer.indexer.aindex(records)
            finally:
                self._on_write()
        return {
            "documents": report.documents,
            "chunks": report.chunks,
            "relations": report.relations,
            "skipped": report.skipped,
            "warnings": warnings + [w for w in report.warnings if scope.prefix not in w or not scope.prefix],
        }

    async def delete(
        self, scope: Scope, doc_id: str, *, graph: GraphStore, vectors: VectorStore, embedder: Embedder
    ) -> dict[str, Any]:
        """Delete one of the scope's documents (with its chunks and relations); 404 otherwise."""
        stored = scope.internal(doc_id)
        async with self._lock:
            found = await graph.get_documents([stored], filter=scope.base_filter)
            doc = found.get(stored)
            if doc is None or not scope.visible(doc.id, doc.metadata) or doc.metadata.get(KIND_KEY) == "chunk":
                raise Problem(404, f"no document {doc_id!r}")
            writer = await self._writer(scope, graph, vectors, embedder)
            try:
                await writer.indexer.adelete([stored])
            finally:
                self._on_write()
        return {"deleted": doc_id}
