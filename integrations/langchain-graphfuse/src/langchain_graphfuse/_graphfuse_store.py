"""GraphFuseVectorStore: a GraphFuse store behind LangChain's ``VectorStore`` interface."""

from __future__ import annotations

import os
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from typing_extensions import Self

from graphfuse import Embedder, InvalidInput, MetadataFilter, Pipeline, Result, presets, run_sync
from graphfuse.embedders import CachingEmbedder
from graphfuse.indexing import KIND_KEY, Indexer, SourceRecord
from graphfuse.stores import (
    InMemoryCacheStore,
    InMemoryGraphStore,
    LocalVectorStore,
    StoreDirectory,
    aopen_store,
    open_store,
)

from ._embedder import LangChainEmbedder
from ._embeddings import GraphFuseEmbeddings
from ._ingest import source_records
from ._retriever import check_k

__all__ = ["DEFAULT_PRESET", "GraphFuseVectorStore"]

DEFAULT_PRESET = presets.DEFAULT_PRESET
"""The preset a :class:`GraphFuseVectorStore` retrieves with unless told otherwise (as the CLI does)."""

_PARENT = "parent_id"  # the chunk node's document (graphfuse.indexing.Indexer)
_CHUNK_INDEX = "chunk_index"
_INTERNAL = "graphfuse_"
_SEARCH_KNOBS = ("filter", "min_score", "options", "timeout")


def _graphfuse_embedder(embedding: Embeddings) -> Embedder:
    """The GraphFuse embedder for ``embedding``: a wrapped GraphFuse one as it is, else a :class:`LangChainEmbedder`."""
    if isinstance(embedding, GraphFuseEmbeddings):
        return embedding.embedder
    if not isinstance(embedding, Embeddings):
        raise InvalidInput(f"embedding must be a LangChain Embeddings, got {type(embedding).__name__}")
    return LangChainEmbedder(embedding)


def _user_metadata(doc: Any) -> dict[str, Any]:
    """What the user gave as metadata: GraphFuse's bookkeeping (``graphfuse_*``, and a chunk's
    ``parent_id``/``chunk_index``) left out; timestamps as ISO 8601 strings under ``created_at``/``updated_at``."""
    chunk = isinstance(doc.metadata.get(_PARENT), str)
    metadata = {
        k: v
        for k, v in doc.metadata.items()
        if not k.startswith(_INTERNAL) and not (chunk and k in (_PARENT, _CHUNK_INDEX))
    }
    if doc.created_at is not None:
        metadata.setdefault("created_at", doc.created_at.isoformat())
    if doc.updated_at is not None:
        metadata.setdefault("updated_at", doc.updated_at.isoformat())
    return metadata


class GraphFuseVectorStore(VectorStore):
    """A LangChain ``VectorStore`` whose searches are a GraphFuse preset (``multihop`` by default:
    the document graph, BM25 and the vectors together), not a plain cosine ranking.

    ``GraphFuseVectorStore.from_documents(docs, embedding).as_retriever()`` is the whole set-up:
    the documents (as a loader gives them, one per file or page; GraphFuse chunks them) are
    indexed with the core :class:`~graphfuse.indexing.Indexer` as ``graphfuse index`` indexes
    files (titles, links, markdown, entities: :func:`source_records` and
    ``Indexer.for_records``), with ``embedding`` (any LangChain ``Embeddings``, used as it is;
    :class:`GraphFuseEmbeddings` over a GraphFuse embedder is unwrapped).

    ``path=None`` keeps everything in memory; a ``path`` is a GraphFuse store directory (the
    format ``graphfuse index --store`` writes), created when missing, which ``graphfuse query``,
    ``graphfuse serve`` and ``graphfuse eval`` open when its embedder is one they can rebuild
    (see :meth:`from_path` and ``docs/integrations/langchain.md``); every write leaves the
    directory complete (corpus indexes and manifest refreshed). :meth:`close` (or ``with``)
    closes its files.

    Each add or delete indexes the whole corpus again as one call (unchanged documents are
    skipped; those whose relations changed are written again, with the vectors this object made
    for their texts), so the graph is the same whether the documents came in one batch or many
    and the embeddings get each text once.
    Ids: the ``ids`` given, else ``Document.id``, else the loader's ``metadata["source"]`` (with
    ``#page=N``), else a new UUID; adding an id again replaces that document.

    Results are passages no longer than the indexer's chunk size, one per document, each with the
    id of its document and the metadata it was added with (plus ``title``/``created_at`` when
    the indexer read them from a markdown file): nothing of GraphFuse's bookkeeping.
    ``similarity_search_with_score`` gives the preset's fused score (higher is better; in [0, 1]
    for every built-in preset, comparable within one query); ``similarity_search_with_relevance_scores``
    gives the same score, clipped to [0, 1] for a custom pipeline whose scorer is not bounded.
    Search keyword arguments: ``filter`` (a GraphFuse metadata filter, ``{"tenant": "acme"}``
    or ``{key: {op: value}}``), ``min_score``, ``options`` (per-stage), ``timeout``.
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        path: str | os.PathLike[str] | None = None,
        preset: str = DEFAULT_PRESET,
    ) -> None:
        embedder = _graphfuse_embedder(embedding)
        directory = None if path is None else open_store(path, create=True, embedder=embedder)
        self._init(embedding, embedder, directory, preset)

    def _init(self, embedding: Embeddings, embedder: Embedder, directory: StoreDirectory | None, preset: str) -> None:
        presets.get(preset)  # an unknown name fails here, listing the known ones
        self._embedding = embedding
        self._embedder = embedder
        # What the indexer embeds, by text: a write re-reads the documents whose relations it
        # changes (a page naming a new title), whose texts are embedded once per store object.
        self._indexing: Embedder = CachingEmbedder(embedder, InMemoryCacheStore(), namespace="indexing")
        self._directory = directory
        if directory is None:
            self._graph: Any = InMemoryGraphStore()
            self._vectors: Any = LocalVectorStore(dimension=embedder.dimension)
        else:
            self._graph, self._vectors = directory.graph, directory.vectors
        self._preset = preset
        self._pipeline: Pipeline | None = None
        # The corpus: documents added through this store (id -> text, metadata), in order, and
        # the records of the documents the store held when it was opened (read on first write).
        self._loaded: dict[str, tuple[str, dict[str, Any]]] = {}
        self._stored: dict[str, SourceRecord] | None = None if directory is not None else {}

    @classmethod
    def _opened(cls, embedding: Embeddings, embedder: Embedder, directory: StoreDirectory | None, preset: str) -> Self:
        store = cls.__new__(cls)
        store._init(embedding, embedder, directory, preset)
        return store

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def from_path(
        cls, path: str | os.PathLike[str], embedding: Embeddings | None = None, *, preset: str | None = None
    ) -> Self:
        """Open the store directory ``path`` (made by ``graphfuse index --store`` or by this class).

        Without ``embedding`` the store's own recorded embedder is used (the one ``graphfuse
        index --embedder`` named); a store built with a LangChain ``Embeddings`` no registered
        name rebuilds needs it given again. A given ``embedding`` must be the one the store was
        built with (same identity and dimension: :class:`GraphFuseEmbeddings` over the same
        GraphFuse embedder, or the same LangChain class and model), else
        :class:`~graphfuse.InvalidInput`. ``preset`` defaults to the store's own default
        (``multihop``). Raises :class:`~graphfuse.NotFound` when there is no store at ``path``.
        """
        return run_sync(cls.afrom_path(path, embedding, preset=preset))

    @classmethod
    async def afrom_path(
        cls, path: str | os.PathLike[str], embedding: Embeddings | None = None, *, preset: str | None = None
    ) -> Self:
        """Async form of :meth:`from_path`."""
        embedder = None if embedding is None else _graphfuse_embedder(embedding)
        directory = await aopen_store(path, embedder=embedder)
        try:
            if embedding is None:
                embedding = GraphFuseEmbeddings(directory.embedder)
                embedder = directory.embedder
            assert embedder is not None
            return cls._opened(embedding, embedder, directory, preset or directory.default_preset)
        except BaseException:
            await directory.aclose()
            raise

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        path: str | os.PathLike[str] | None = None,
        preset: str = DEFAULT_PRESET,
        **kwargs: Any,
    ) -> Self:
        """A store (in memory, or the directory ``path``) holding ``texts``; see the class docs."""
        return cls.from_documents(_documents(texts, metadatas), embedding, ids=ids, path=path, preset=preset, **kwargs)

    @classmethod
    async def afrom_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        path: str | os.PathLike[str] | None = None,
        preset: str = DEFAULT_PRESET,
        **kwargs: Any,
    ) -> Self:
        """Async form of :meth:`from_texts`."""
        return await cls.afrom_documents(
            _documents(texts, metadatas), embedding, ids=ids, path=path, preset=preset, **kwargs
        )

    @classmethod
    def from_documents(
        cls,
        documents: list[Document],
        embedding: Embeddings,
        *,
        path: str | os.PathLike[str] | None = None,
        preset: str = DEFAULT_PRESET,
        **kwargs: Any,
    ) -> Self:
        """A store (in memory, or the directory ``path``) holding ``documents``; see the class docs.

        ``ids=`` gives the documents' ids (else ``Document.id``, the loader's ``source``, a UUID).
        """
        return run_sync(cls.afrom_documents(documents, embedding, path=path, preset=preset, **kwargs))

    @classmethod
    async def afrom_documents(
        cls,
        documents: list[Document],
        embedding: Embeddings,
        *,
        path: str | os.PathLike[str] | None = None,
        preset: str = DEFAULT_PRESET,
        **kwargs: Any,
    ) -> Self:
        """Async form of :meth:`from_documents`."""
        embedder = _graphfuse_embedder(embedding)
        directory = None if path is None else await aopen_store(path, create=True, embedder=embedder)
        try:
            store = cls._opened(embedding, embedder, directory, preset)
            await store.aadd_documents(documents, **kwargs)
        except BaseException:
            if directory is not None:
                await directory.aclose()
            raise
        return store

    # -- properties ----------------------------------------------------------------------------

    @property
    def embeddings(self) -> Embeddings:
        """The LangChain embeddings the store embeds with."""
        return self._embedding

    @property
    def preset(self) -> str:
        """The preset searches run."""
        return self._preset

    @property
    def directory(self) -> StoreDirectory | None:
        """The store directory, or ``None`` for a store in memory."""
        return self._directory

    async def apipeline(self) -> Pipeline:
        """The preset's :class:`~graphfuse.Pipeline` over the store as it is now (rebuilt after each write)."""
        pipeline = self._pipeline
        if pipeline is None:
            if self._directory is not None:
                pipeline = await self._directory.apipeline(self._preset)
            else:
                reranker = None
                if "reranker" in presets.get(self._preset).needs:
                    from graphfuse.rerankers import EmbeddingReranker

                    reranker = EmbeddingReranker(self._embedder, vector_store=self._vectors)
                pipeline = await presets.abuild(
                    self._preset,
                    graph_store=self._graph,
                    vector_store=self._vectors,
                    embedder=self._embedder,
                    reranker=reranker,
                )
            self._pipeline = pipeline
        return pipeline

    def pipeline(self) -> Pipeline:
        """Sync form of :meth:`apipeline`."""
        return run_sync(self.apipeline())

    # -- writing -------------------------------------------------------------------------------

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Add texts (see :meth:`add_documents`)."""
        return self.add_documents(_documents(list(texts), metadatas), ids=ids, **kwargs)

    async def aadd_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Async form of :meth:`add_texts`."""
        return await self.aadd_documents(_documents(list(texts), metadatas), ids=ids, **kwargs)

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Add documents, or replace those whose id is already in the store; returns their ids.

        ``ids=[...]`` (one per document) take precedence over ``Document.id``. A document with
        blank text is not added (a warning names it) and its id is not returned. Every document
        is checked before anything is written (:class:`~graphfuse.InvalidInput` names a bad one).
        """
        return run_sync(self.aadd_documents(documents, **kwargs))

    async def aadd_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Async form of :meth:`add_documents`."""
        ids = kwargs.pop("ids", None)
        if kwargs:
            raise InvalidInput(f"add_documents got unknown argument(s) {sorted(kwargs)}; it takes ids")
        if isinstance(documents, Document):
            raise InvalidInput("documents must be a list of LangChain documents, got a single Document")
        docs = list(documents)
        if ids is not None and (isinstance(ids, str) or len(ids) != len(docs)):
            raise InvalidInput(f"ids must be a list of {len(docs)} id(s), one per document, got {ids!r:.80}")
        if not docs:
            return []
        named: list[tuple[str, Document]] = []
        for n, doc in enumerate(docs):
            if not isinstance(doc, Document):
                raise InvalidInput(f"document {n}: expected a LangChain Document, got {type(doc).__name__}")
            given = ids[n] if ids is not None else doc.id
            doc_id = given or _source_id(doc) or str(uuid.uuid4())
            if not isinstance(doc_id, str):
                raise InvalidInput(f"document {n}: its id must be a string, got {doc_id!r}")
            named.append((doc_id, doc))
        counts = Counter(doc_id for doc_id, _ in named)
        twice = sorted(doc_id for doc_id, n in counts.items() if n > 1)
        if twice:
            raise InvalidInput(
                f"{len(twice)} document id(s) given twice in one call: {', '.join(map(repr, twice[:20]))}; "
                "give each document its own id (pass whole documents: GraphFuse chunks them itself)"
            )
        corpus = dict(self._loaded)
        for doc_id, doc in named:
            corpus.pop(doc_id, None)  # a replaced document takes its new place, as in one call
            corpus[doc_id] = (doc.page_content, dict(doc.metadata))
        skipped: list[str] = []
        await self._reindex(corpus, (), on_skip=lambda doc_id, why: skipped.append(f"{doc_id!r} ({why})"))
        if skipped:
            warnings.warn(f"not added, no text to index: {', '.join(skipped)}", stacklevel=3)
        return [doc_id for doc_id, _ in named if doc_id in self._loaded]

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete the documents ``ids`` (with their chunks, vectors and relations); unknown ids are ignored."""
        return run_sync(self.adelete(ids, **kwargs))

    async def adelete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Async form of :meth:`delete`."""
        if kwargs:
            raise InvalidInput(f"delete got unknown argument(s) {sorted(kwargs)}; it takes ids")
        if ids is None or isinstance(ids, str):
            raise InvalidInput("delete takes a list of document ids")
        gone = set(ids)
        corpus = {k: v for k, v in self._loaded.items() if k not in gone}
        await self._reindex(corpus, sorted(gone))
        return True

    async def _reindex(
        self,
        corpus: dict[str, tuple[str, dict[str, Any]]],
        deleted: Sequence[str],
        *,
        on_skip: Callable[[str, str], None] | None = None,
    ) -> None:
        """Index the whole corpus (the stored records plus ``corpus``) as one call, after deleting ``deleted``."""
        loaded = [Document(id=k, page_content=text, metadata=meta) for k, (text, meta) in corpus.items()]
        records = source_records(loaded, on_skip=on_skip)  # checks every document before any write
        stored = await self._stored_records()
        kept = {k: r for k, r in stored.items() if k not in corpus and k not in deleted}
        everything = [*kept.values(), *records]
        indexer = Indexer.for_records(everything, self._graph, self._vectors, self._indexing)
        self._pipeline = None
        try:
            if deleted:
                await indexer.adelete(list(deleted))
            # A document replaced by a blank one (not indexed) must not linger in its old form.
            written = {r.id for r in records}
            blank = sorted(k for k in corpus if k not in written)
            if blank:
                await indexer.adelete(blank)
            await indexer.aindex(everything)
            if self._directory is not None:
                await self._directory.arefresh_corpus_indexes()
                await self._directory.arefresh_manifest()
        finally:
            self._pipeline = None
        self._stored = kept
        self._loaded = {k: v for k, v in corpus.items() if k in written}

    async def _stored_records(self) -> dict[str, SourceRecord]:
        if self._stored is None:
            indexer = Indexer(self._graph, self._vectors, self._embedder)
            self._stored = {r.id: r for r in await indexer.astored_records()}
        return self._stored

    # -- reading -------------------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The whole documents with these ids (their text as added), in the order given; unknown ids are left out."""
        return run_sync(self.aget_by_ids(ids))

    async def aget_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """Async form of :meth:`get_by_ids`."""
        if isinstance(ids, str):
            raise InvalidInput("get_by_ids takes a list of ids, not a string")
        wanted = list(dict.fromkeys(ids))
        found = await self._graph.get_documents(wanted) if wanted else {}
        out = []
        for doc_id in wanted:
            doc = found.get(doc_id)
            if doc is None or doc.content is None or doc.metadata.get(KIND_KEY) != "document":
                continue
            out.append(Document(id=doc.id, page_content=doc.content, metadata=_user_metadata(doc)))
        return out

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """The ``k`` best passages for ``query`` by the preset (keyword arguments: see the class docs)."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    async def asimilarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        """Async form of :meth:`similarity_search`."""
        return [doc for doc, _ in await self.asimilarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(self, query: str, k: int = 4, **kwargs: Any) -> list[tuple[Document, float]]:
        """``(document, score)`` pairs, best first; the score is the preset's fused score (higher is better)."""
        return run_sync(self.asimilarity_search_with_score(query, k, **kwargs))

    async def asimilarity_search_with_score(
        self, query: str, k: int = 4, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """Async form of :meth:`similarity_search_with_score`."""
        results = await self._search(query, k, kwargs)
        return [(self._result_document(r), float(r.score)) for r in results]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        # Built-in presets score in [0, 1] already; a custom pipeline's scorer may not be bounded.
        return lambda score: min(max(score, 0.0), 1.0)

    async def _search(self, query: str, k: int, kwargs: dict[str, Any]) -> list[Result]:
        unknown = sorted(set(kwargs) - set(_SEARCH_KNOBS))
        if unknown:
            raise InvalidInput(f"search got unknown argument(s) {unknown}; it takes: k, {', '.join(_SEARCH_KNOBS)}")
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        top_k = check_k(k)
        filter = MetadataFilter.parse(kwargs.get("filter"))
        if not query.strip() or await self._vectors.count() == 0:
            return []
        pipeline = await self.apipeline()
        return await pipeline.aretrieve(
            query,
            top_k=top_k,
            filter=filter,
            min_score=kwargs.get("min_score"),
            options=kwargs.get("options"),
            timeout=kwargs.get("timeout"),
        )

    @staticmethod
    def _result_document(result: Result) -> Document:
        doc = result.document
        parent = doc.metadata.get(_PARENT)
        page = parent if isinstance(parent, str) and parent else doc.id
        return Document(id=page, page_content=doc.content or "", metadata=_user_metadata(doc))

    # -- closing -------------------------------------------------------------------------------

    def close(self) -> None:
        """Close a store on disk (its manifest counts are written); a store in memory has nothing to close."""
        run_sync(self.aclose())

    async def aclose(self) -> None:
        """Async form of :meth:`close`."""
        if self._directory is not None:
            await self._directory.aclose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        where = "memory" if self._directory is None else str(self._directory.path)
        return f"GraphFuseVectorStore({where}, preset={self._preset!r}, embedder={self._embedder!r})"


def _documents(texts: list[str], metadatas: list[dict[str, Any]] | None) -> list[Document]:
    if isinstance(texts, str):
        raise InvalidInput("texts must be a list of strings, not a string")
    if metadatas is not None and len(metadatas) != len(texts):
        raise InvalidInput(f"metadatas must have one entry per text: {len(metadatas)} for {len(texts)} texts")
    out = []
    for n, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidInput(f"text {n} must be a string, got {type(text).__name__}")
        out.append(Document(page_content=text, metadata=dict(metadatas[n]) if metadatas else {}))
    return out


def _source_id(doc: Document) -> str | None:
    source = doc.metadata.get("source")
    if not isinstance(source, str) or not source:
        return None
    page = doc.metadata.get("page")
    return source if page is None else f"{source}#page={page}"
