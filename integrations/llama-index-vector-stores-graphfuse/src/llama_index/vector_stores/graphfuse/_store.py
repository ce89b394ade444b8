"""GraphFuseVectorStore: a GraphFuse store behind LlamaIndex's ``VectorStoreIndex``."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.embeddings import BaseEmbedding
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)

from graphfuse import Embedder, GraphStore, InvalidInput, MetadataFilter, NotFound, Pipeline, run_sync
from graphfuse import presets as catalogue
from graphfuse.indexing import KIND_KEY, Indexer, SourceRecord, TokenChunker, wants_entity_graph
from graphfuse.multihop import CorpusCache, acorpus_inputs
from graphfuse.stores import InMemoryGraphStore, LocalStore, LocalVectorStore, aopen_store

from ._filters import graphfuse_filter
from ._records import (
    NODE_TYPE,
    Parts,
    canonical,
    embed_texts,
    is_host_document,
    is_host_page,
    node_of,
    records_of,
    scored_node,
    unit_texts,
)
from ._vectors import NodeVectors, QueryVectors, embed_passages, given_query

__all__ = ["HOST_EMBEDDER", "GraphFuseVectorStore"]

HOST_EMBEDDER = "(given)"
"""What a store directory's manifest names as its embedder (``components.embedder``) when its vectors
come from a LlamaIndex ``embed_model`` that no registered GraphFuse embedder rebuilds: GraphFuse's
convention for an embedder given in Python (never a registered name). The manifest's ``embedder``
identity says ``llama-index embed_model`` and ``dimension`` the vectors' size; the CLI refuses such
a store (it could not embed a question alike): give ``embedder=`` a registered name to let it."""

_WHOLE = TokenChunker(max_tokens=2**31 - 1, overlap=0)  # LlamaIndex's node parser already chunked the text
_MANIFEST = "manifest.json"


def _units(record: SourceRecord) -> list[str]:
    """The ids of the GraphFuse documents holding ``record``'s units (its chunks', or its own)."""
    return [f"{record.id}#{c.index}" for c in record.chunks] if record.chunks else [record.id]


def _ours(document: Any) -> bool:
    return is_host_document(document) or is_host_page(document)


@dataclass(frozen=True)
class _Held:
    node: BaseNode
    unit: str  # the GraphFuse document holding the node (a page's chunk, or a one-node page)
    page: str  # the page it is part of


@dataclass
class _Backend:
    graph: GraphStore
    vectors: Any  # a GraphFuse VectorStore (LocalVectorStore in the embedded stores)
    embedder: Embedder | None  # the store's own embedder, when it has a registered one
    directory: Path | None
    local: LocalStore | None  # the directory when it holds a LlamaIndex embed_model's vectors
    closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    dimension: int | None = None
    pipeline: Pipeline | None = None
    stamp: object = None
    # The nodes written through this class as the last write left them (with the graph store's
    # generation then), and each node's page parts: a write reads only its own nodes again.
    held: dict[str, _Held] | None = None
    held_stamp: object = None
    parts: dict[str, Parts] = field(default_factory=dict)


def _recorded_embedder(directory: Path) -> str | None:
    try:
        manifest = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # no manifest yet (or a damaged one, which opening the store reports)
    components = manifest.get("components") if isinstance(manifest, dict) else None
    name = components.get("embedder") if isinstance(components, dict) else None
    return name if isinstance(name, str) else None


class GraphFuseVectorStore(BasePydanticVectorStore):
    """A GraphFuse store as a LlamaIndex vector store: ``VectorStoreIndex`` retrieves through a preset.

    ``GraphFuseVectorStore(path=None, *, preset="multihop", embedder=None, max_per_document=1,
    embed_model=None)``:

    - ``path``: ``None`` keeps everything in memory; a directory is a GraphFuse store directory,
      the format ``graphfuse index --store`` writes (created when missing;
      :meth:`from_path` opens an existing one, e.g. one the CLI built).
    - ``preset``: the GraphFuse preset queries run (``multihop``: graph walk, BM25 and vectors).
    - ``max_per_document``: at most this many nodes of one source document (``ref_doc_id``) in a
      query's results, best first (``1``, GraphFuse's rule for passages: ``similarity_top_k``
      nodes then name as many documents); ``None`` returns the best nodes whatever their document.
    - ``embedder``: the registered name of the GraphFuse embedder that makes the same vectors as
      your ``embed_model`` (``"local"`` for ``GraphFuseEmbedding(LocalEmbedder())``), recorded
      in the manifest so ``graphfuse query``/``serve``/``eval`` can embed questions alike.
      ``None``: the manifest records :data:`HOST_EMBEDDER` and the vectors' dimension, and the
      CLI refuses the store (it cannot rebuild your embed_model).
    - ``embed_model``: ``None`` stores, as each passage's vector, the embedding LlamaIndex
      computed for its node. Your LlamaIndex ``embed_model`` (the one the index embeds queries
      with): a page's passages are ``graphfuse index``'s cut of its text, each holding the node
      its middle falls in (a page whose nodes are shorter than the passages keeps the nodes'
      own), and the store embeds each, title and passage, as ``graphfuse index`` embeds a
      page's chunks (the embedding at ``add`` is LlamaIndex's then the store's). A model whose
      vectors differ in size from the nodes' embeddings raises :class:`~graphfuse.InvalidInput`
      and nothing is written; another model of the same size cannot be told apart, and would
      make queries compare unlike vectors.

    The nodes of one source document (``ref_doc_id``) are one GraphFuse page, as ``graphfuse
    index`` makes of a file (its text rebuilt from the nodes' spans, its title and links read
    from it), with the nodes' passages as its chunks: a node longer than ``graphfuse index``'s
    chunks (256 tokens) is cut as the CLI cuts a page, each passage holding the node and, as its
    vector, the embedding LlamaIndex computed for the node; so BM25, the graph and the fusion
    see passages as on a store the CLI built, and a query returns each node once. A source
    document of one short node is that node. The graph (title mentions, markdown links,
    entities from the text) is resolved over all the pages of the store at each ``add``, so it
    is the same whether the nodes came in one batch or many; an ``add`` serialises and writes
    only its own nodes and the pages whose relations they change (their vectors reused), plus a
    planning pass over the pages' texts (the first write of a store object reads its nodes once).
    Queries use ``query_str`` and ``query_embedding`` as LlamaIndex passes them,
    ``similarity_top_k``, ``filters`` (``MetadataFilters``, AND) and ``doc_ids``, and return
    the nodes as they were added, with the preset's score and its
    signals under ``graphfuse_signals`` (hidden from the LLM and the embedder, as are
    ``file_path``, ``parent_id`` and ``chunk_index``). Writes from two processes at once are not
    supported (as with ``graphfuse index``).
    """

    stores_text: bool = True
    is_embedding_query: bool = True
    flat_metadata: bool = False

    path: str | None = Field(default=None, description="Store directory; None keeps the store in memory.")
    preset: str = Field(default=catalogue.DEFAULT_PRESET, description="The GraphFuse preset queries run.")
    max_per_document: int | None = Field(
        default=1, description="Nodes of one source document in a query's results, at most (None: no cap)."
    )
    embedder: str | None = Field(
        default=None, description="Registered GraphFuse embedder making the same vectors as the embed_model."
    )

    _backend: _Backend | None = PrivateAttr(default=None)
    _create: bool = PrivateAttr(default=True)
    _embed_model: BaseEmbedding | None = PrivateAttr(default=None)

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        preset: str = catalogue.DEFAULT_PRESET,
        embedder: str | None = None,
        max_per_document: int | None = 1,
        embed_model: BaseEmbedding | None = None,
        **kwargs: Any,
    ) -> None:
        if embed_model is not None and not isinstance(embed_model, BaseEmbedding):
            raise InvalidInput(
                f"embed_model must be a LlamaIndex embedding (BaseEmbedding), got {type(embed_model).__name__}"
            )
        catalogue.get(preset)  # an unknown name raises InvalidInput listing the known ones
        if max_per_document is not None and (
            isinstance(max_per_document, bool) or not isinstance(max_per_document, int) or max_per_document < 1
        ):
            raise InvalidInput(f"max_per_document must be None or a positive integer, got {max_per_document!r}")
        if embedder is not None and (not isinstance(embedder, str) or not embedder or embedder == HOST_EMBEDDER):
            raise InvalidInput(f"embedder must be a registered GraphFuse embedder name, got {embedder!r}")
        fields: dict[str, Any] = {
            "path": None if path is None else os.fspath(path),
            "preset": preset,
            "embedder": embedder,
            "max_per_document": max_per_document,
            **kwargs,
        }
        super().__init__(**fields)
        self._embed_model = embed_model

    @classmethod
    def class_name(cls) -> str:
        return "GraphFuseVectorStore"

    @classmethod
    def from_path(
        cls,
        path: str | os.PathLike[str],
        *,
        preset: str = catalogue.DEFAULT_PRESET,
        embed_model: BaseEmbedding | None = None,
    ) -> GraphFuseVectorStore:
        """Open the existing store directory ``path`` (one ``graphfuse index --store`` built, or one
        written through this class); :class:`~graphfuse.NotFound` when there is none. Pass it to
        ``VectorStoreIndex.from_vector_store(store, embed_model=...)`` with an embed_model making
        the vectors of the store's embedder (its dimension is checked at the first query);
        ``embed_model`` as in the constructor, for the nodes added to it."""
        if not Path(path).exists():
            raise NotFound(f"no GraphFuse store at {os.fspath(path)!r}: index documents into it first")
        store = cls(path, preset=preset, embed_model=embed_model)
        store._create = False
        return store

    @property
    def client(self) -> Any:
        """The GraphFuse graph store holding the documents and relations."""
        return run_sync(self._open()).graph

    # -- opening and closing ---------------------------------------------------------------------

    async def _open(self) -> _Backend:
        if self._backend is not None:
            return self._backend
        if self.path is None:
            backend = _Backend(InMemoryGraphStore(), LocalVectorStore(), None, None, None)
            self._backend = backend
            return backend
        directory = Path(self.path)
        recorded = _recorded_embedder(directory)
        if recorded == HOST_EMBEDDER or (recorded is None and self.embedder is None):
            if self.embedder is not None:
                raise InvalidInput(
                    f"store {self.path!r} holds the vectors of a LlamaIndex embed_model, not of embedder "
                    f"{self.embedder!r}: open it without embedder="
                )
            local = await LocalStore.aopen(directory, create=self._create)
            if local.manifest.get("components") is None:
                if local.manifest.get("embedder") is not None:
                    await local.aclose()
                    raise InvalidInput(
                        f"store {self.path!r} was built from Python without recording its components: "
                        "open it with graphfuse.stores.LocalStore"
                    )
                await local.arecord_components(
                    {"embedder": HOST_EMBEDDER, "graph_store": "sqlite", "vector_store": "local"}
                )
            backend = _Backend(local.graph, local.vectors, None, directory, local, [local.aclose])
            backend.dimension = local.manifest.get("dimension")
        else:
            store = await aopen_store(directory, create=self._create, embedder=self.embedder)
            backend = _Backend(store.graph, store.vectors, store.embedder, directory, None, [store.aclose])
            backend.dimension = store.embedder.dimension
        self._backend = backend
        return backend

    async def aclose(self) -> None:
        """Close the store (refreshing its manifest's counts); it reopens on next use."""
        backend, self._backend = self._backend, None
        if backend is not None:
            for closer in reversed(backend.closers):
                await closer()

    def close(self) -> None:
        """Sync form of :meth:`aclose`."""
        run_sync(self.aclose())

    # -- writing ---------------------------------------------------------------------------------

    def _dimension(self, backend: _Backend, size: int, what: str) -> int:
        if backend.dimension is None:
            vectors_dim = getattr(backend.vectors, "dimension", None)
            backend.dimension = vectors_dim if isinstance(vectors_dim, int) else None
        if backend.dimension is not None and size != backend.dimension:
            where = "in memory" if self.path is None else repr(self.path)
            raise InvalidInput(
                f"{what} has {size} dimensions but the store {where} holds {backend.dimension}-d vectors: "
                "use the embed_model the store was built with (or another store)"
            )
        return size

    async def _host_nodes(self, backend: _Backend, flt: MetadataFilter | None = None) -> dict[str, _Held]:
        """The nodes written through this class (matching ``flt``), by node id, with where each is held."""
        found: dict[str, _Held] = {}
        listing = getattr(backend.graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(f"graph store {type(backend.graph).__name__} cannot list its documents")
        spec = {NODE_TYPE: {"$exists": True}}
        query = MetadataFilter.parse(spec) if flt is None else flt
        async for doc in listing(filter=query):
            if is_host_document(doc) and doc.metadata.get(KIND_KEY) in ("document", "chunk"):
                node = node_of(doc)
                parent = doc.metadata.get("parent_id")
                page = parent if isinstance(parent, str) and parent else doc.id
                found[node.node_id] = _Held(node, doc.id, page)
        return found

    async def _generation(self, backend: _Backend) -> object:
        generation = getattr(backend.graph, "generation", None)
        return await generation() if callable(generation) else None

    async def _stored(self, backend: _Backend) -> dict[str, _Held]:
        """Every node written through this class: as the last write of this object left them while
        the graph store has not changed since (its ``generation``), else read again."""
        stamp = await self._generation(backend)
        if backend.held is None or stamp is None or stamp != backend.held_stamp:
            backend.held = await self._host_nodes(backend)
            backend.parts = {}
        return backend.held

    def _indexer(self, backend: _Backend, embedder: Embedder, entity_graph: bool, titled: bool = False) -> Indexer:
        return Indexer.for_records(
            [], backend.graph, backend.vectors, embedder, entity_graph=entity_graph, chunker=_WHOLE, embed_title=titled
        )

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Add ``nodes`` (with the embeddings LlamaIndex computed; a node's id already stored is
        replaced) and rebuild the graph over every node of the store; returns the nodes' ids.

        A node without an embedding, or one whose size differs from the store's vectors, raises
        :class:`~graphfuse.InvalidInput` and nothing is written."""
        if not nodes:
            return []
        backend = await self._open()
        given: dict[str, BaseNode] = {}
        for n, node in enumerate(nodes):
            if not isinstance(node, BaseNode):
                raise InvalidInput(f"node {n}: expected a LlamaIndex node, got {type(node).__name__}")
            if node.embedding is None:
                raise InvalidInput(
                    f"node {node.node_id!r} has no embedding: add nodes through VectorStoreIndex (which embeds them "
                    "with your embed_model) or set node.embedding"
                )
            self._dimension(backend, len(node.embedding), f"node {node.node_id!r}'s embedding")
            given[node.node_id] = canonical(node.model_copy())
        dimension = len(next(iter(given.values())).embedding or ())
        stored = await self._stored(backend)
        held = {i: h for i, h in stored.items() if i not in given}
        await self._sync(backend, dimension, {**{i: h.node for i, h in held.items()}, **given}, given, held, stored)
        backend.dimension = dimension
        await self._changed(backend)
        return [node.node_id for node in nodes]

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Sync form of :meth:`async_add`."""
        return run_sync(self.async_add(nodes, **add_kwargs))

    async def _sync(
        self,
        backend: _Backend,
        dimension: int,
        nodes: dict[str, BaseNode],
        given: dict[str, BaseNode],
        held: dict[str, _Held],
        before: dict[str, _Held],
    ) -> None:
        """Index ``nodes`` (every node the store is to hold) as pages, then delete the pages that
        no longer hold a node; ``given`` are new (with their embeddings), ``held`` are stored
        (their vectors re-read), ``before`` is every node the store held."""
        for node_id in given:
            backend.parts.pop(node_id, None)
        planned = records_of(nodes.values(), memo=backend.parts, page_passages=self._embed_model is not None)
        records = [record for record, _ in planned]
        model = self._embed_model
        vectors: dict[str, Sequence[float]] = {}
        kept: dict[str, str] = {}
        todo: list[str] = []  # passages the store's embed_model embeds
        again: dict[str, tuple[str, str, str | None]] = {}  # a stored node's passage: unit -> texts, title
        for record, owners in planned:
            texts = embed_texts(record) if model is not None else unit_texts(record)
            units = _units(record)
            for node_id, text, raw, unit in zip(owners, texts, unit_texts(record), units, strict=True):
                if node_id in given and model is not None:
                    todo.append(text)
                elif node_id in given:
                    vectors[text] = given[node_id].embedding or []
                elif node_id in held and model is None:
                    kept.setdefault(text, held[node_id].unit)
                elif node_id in held:
                    again[unit] = (text, raw, record.title)
        if again:  # a passage stored before keeps its vector (same text, same title), else is embedded
            earlier = await backend.graph.get_documents(sorted(again))
            for unit, (text, raw, title) in again.items():
                doc = earlier.get(unit)
                if doc is not None and doc.content == raw and doc.metadata.get("title") == title:
                    kept.setdefault(text, unit)
        if model is not None:  # embedded (and checked) before anything is written
            vectors.update(await embed_passages(model, [t for t in todo if t not in kept], dimension))
        fetch = getattr(backend.vectors, "get_vectors", None)
        embedder = NodeVectors(dimension, vectors, kept, fetch if callable(fetch) else None, model)
        if backend.local is not None:
            await backend.local.ause_embedder(QueryVectors(dimension, None))
        indexer = self._indexer(backend, embedder, wants_entity_graph(records), model is not None)
        await indexer.aindex(records)
        gone = sorted({h.page for h in before.values()} - {r.id for r in records})
        if gone:
            await indexer.adelete(gone)
        backend.dimension = dimension
        now: dict[str, _Held] = {}
        for record, owners in planned:
            for node_id, unit in zip(owners, _units(record), strict=True):
                if node_id not in now:
                    now[node_id] = _Held(nodes[node_id], unit, record.id)
        backend.parts = {i: p for i, p in backend.parts.items() if i in now}
        backend.held = now

    async def _changed(self, backend: _Backend) -> None:
        backend.pipeline = None
        if backend.directory is not None:
            await CorpusCache(backend.directory).arefresh(backend.graph)
        backend.held_stamp = await self._generation(backend)

    async def _ids(self, backend: _Backend, flt: MetadataFilter | None) -> list[str]:
        listing = getattr(backend.graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(f"graph store {type(backend.graph).__name__} cannot list its documents")
        return [d.id async for d in listing(filter=flt) if d.metadata.get(KIND_KEY) == "document"]

    async def _delete(self, backend: _Backend, ids: Sequence[str]) -> None:
        if not ids:
            return
        dimension = backend.dimension or 1
        await self._indexer(backend, QueryVectors(dimension, backend.embedder), False).adelete(list(ids))
        backend.held = None  # (read again at the next write)
        await self._changed(backend)

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete the nodes of the source document ``ref_doc_id`` (and a GraphFuse document of that id)."""
        backend = await self._open()
        ids = await self._ids(backend, MetadataFilter.parse({"ref_doc_id": ref_doc_id}))
        own = await backend.graph.get_documents([ref_doc_id])
        ids.extend(i for i, d in own.items() if d.metadata.get(KIND_KEY) == "document" and i not in ids)
        await self._delete(backend, ids)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Sync form of :meth:`adelete`."""
        run_sync(self.adelete(ref_doc_id, **delete_kwargs))

    async def adelete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Delete the nodes ``node_ids`` (those matching ``filters`` among them), or all matching ``filters``.

        A source document that keeps other nodes is indexed again without these; one left
        without nodes is deleted."""
        backend = await self._open()
        flt = graphfuse_filter(filters)
        if node_ids is None and flt is None:
            return
        matching = await self._host_nodes(backend, flt)
        doomed = set(matching) if node_ids is None else set(node_ids) & set(matching)
        others = await self._other_documents(backend, flt, None if node_ids is None else set(node_ids))
        if doomed:
            stored = await self._stored(backend)
            held = {i: h for i, h in stored.items() if i not in doomed}
            dimension = backend.dimension or len(next(iter(stored.values())).node.embedding or ()) or 1
            await self._sync(backend, dimension, {i: h.node for i, h in held.items()}, {}, held, stored)
            await self._changed(backend)
        await self._delete(backend, others)

    async def _other_documents(self, backend: _Backend, flt: MetadataFilter | None, ids: set[str] | None) -> list[str]:
        """The documents matching ``flt`` (among ``ids``) not written through this class (a store
        ``graphfuse index`` built): a node LlamaIndex got from them is the document."""
        if ids is not None:
            docs = await backend.graph.get_documents(sorted(ids), filter=flt)
            return [i for i, d in docs.items() if d.metadata.get(KIND_KEY) == "document" and not _ours(d)]
        listing = getattr(backend.graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(f"graph store {type(backend.graph).__name__} cannot list its documents")
        return [d.id async for d in listing(filter=flt) if d.metadata.get(KIND_KEY) == "document" and not _ours(d)]

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Sync form of :meth:`adelete_nodes`."""
        run_sync(self.adelete_nodes(node_ids, filters, **delete_kwargs))

    async def aclear(self) -> None:
        """Delete every node, document, relation and vector of the store."""
        backend = await self._open()
        await self._delete(backend, await self._ids(backend, None))
        listing = getattr(backend.graph, "iter_documents", None)
        rest = [d.id async for d in listing()] if callable(listing) else []
        if rest:  # entity nodes, which outlive their documents
            await backend.graph.delete_documents(rest)
            await backend.vectors.delete(rest)
            backend.held = None
            await self._changed(backend)

    def clear(self) -> None:
        """Sync form of :meth:`aclear`."""
        run_sync(self.aclear())

    # -- reading ---------------------------------------------------------------------------------

    async def aget_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The nodes ``node_ids`` (matching ``filters``), or every node matching ``filters``."""
        backend = await self._open()
        flt = graphfuse_filter(filters)
        listing = getattr(backend.graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(f"graph store {type(backend.graph).__name__} cannot list its documents")
        found: dict[str, BaseNode] = {}
        async for doc in listing(filter=flt):
            if doc.metadata.get(KIND_KEY) == "entity" or is_host_page(doc):
                continue  # an entity node; a page whose nodes are its chunks
            node = node_of(doc)
            found[node.node_id] = node
        if node_ids is None:
            return list(found.values())
        return [found[i] for i in node_ids if i in found]

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        """Sync form of :meth:`aget_nodes`."""
        return run_sync(self.aget_nodes(node_ids, filters))

    async def _empty(self, backend: _Backend) -> bool:
        count = getattr(backend.graph, "count_documents", None)
        if callable(count):
            return bool(await count() == 0)
        return not await self._ids(backend, None)

    async def _pipeline(self, backend: _Backend) -> Pipeline:
        generation = getattr(backend.graph, "generation", None)
        stamp = await generation() if callable(generation) else None
        if backend.pipeline is not None and (stamp is None or stamp == backend.stamp):
            return backend.pipeline
        dimension = backend.dimension or getattr(backend.vectors, "dimension", None) or 1
        embedder = QueryVectors(dimension, backend.embedder)
        inputs: dict[str, Any] = {}
        preset = catalogue.get(self.preset)
        if backend.directory is not None and "corpus_indexes" in preset.inputs:
            inputs = await acorpus_inputs(backend.graph, cache=CorpusCache(backend.directory))
        reranker = None
        if "reranker" in preset.needs:
            from graphfuse.rerankers import EmbeddingReranker

            reranker = EmbeddingReranker(embedder, vector_store=backend.vectors)
        backend.pipeline = await catalogue.abuild(
            self.preset,
            graph_store=backend.graph,
            vector_store=backend.vectors,
            embedder=embedder,
            reranker=reranker,
            **inputs,
        )
        backend.stamp = stamp
        return backend.pipeline

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Retrieve ``query.similarity_top_k`` nodes through the preset, with ``query_str`` and
        ``query_embedding`` as LlamaIndex passes them, ``filters`` and ``doc_ids`` on every stage."""
        text = query.query_str
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput(
                "GraphFuseVectorStore needs the query text (VectorStoreQuery.query_str): its preset searches "
                "the graph and BM25 as well as the vectors"
            )
        if query.node_ids:  # (VectorStoreIndex passes [] for a store that keeps the text)
            raise InvalidInput("GraphFuseVectorStore does not restrict a query to node_ids: use filters or doc_ids")
        top_k = query.similarity_top_k
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise InvalidInput(f"similarity_top_k must be a positive integer, got {top_k!r}")
        flt = graphfuse_filter(query.filters, query.doc_ids)
        backend = await self._open()
        if await self._empty(backend):
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if query.query_embedding is not None:
            self._dimension(backend, len(query.query_embedding), "the query embedding")
        pipeline = await self._pipeline(backend)
        token = given_query.set(None if query.query_embedding is None else (text, list(query.query_embedding)))
        try:
            cap = top_k if self.max_per_document is None else self.max_per_document
            # A long node is several passages: the first of them that ranks stands for it.
            wanted = top_k
            while True:
                results = await pipeline.aretrieve(text, wanted, filter=flt, max_per_document=cap)
                scored, seen = [], set()
                for result in results:
                    one = scored_node(result)
                    if one.node.node_id not in seen:
                        seen.add(one.node.node_id)
                        scored.append(one)
                if len(scored) >= top_k or len(results) < wanted:
                    break
                wanted, cap = wanted * 2, cap * 2 if self.max_per_document is None else cap
        finally:
            given_query.reset(token)
        scored = scored[:top_k]
        return VectorStoreQueryResult(
            nodes=[s.node for s in scored],
            similarities=[float(s.score or 0.0) for s in scored],
            ids=[s.node.node_id for s in scored],
        )

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """Sync form of :meth:`aquery`."""
        return run_sync(self.aquery(query, **kwargs))
