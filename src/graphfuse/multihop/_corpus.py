"""The corpus-wide indexes of the ``multihop`` preset, rebuilt from what a graph store holds."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from .._capabilities import DocumentListing
from .._errors import InvalidInput
from .._protocols import GraphStore
from .._types import Document
from ..indexing import KIND_KEY, TitleLinker
from ._bm25 import BM25Index
from ._subjects import subject_span

__all__ = ["corpus_indexes"]

_RESERVED = "graphfuse_"  # the indexer's bookkeeping keys in document metadata


def corpus_item(doc: Document) -> tuple[str, Mapping[str, Any], str | None] | None:
    """What the corpus indexes take from a document: (BM25 text, own metadata, title), or
    ``None`` for the indexer's chunk and entity nodes."""
    metadata = doc.metadata
    if metadata.get(KIND_KEY) in ("chunk", "entity"):
        return None  # a chunk's text is in its document already; an entity node is no passage
    title = metadata.get("title")
    title = title if isinstance(title, str) and title.strip() else None
    text = doc.content or ""
    own = {k: v for k, v in metadata.items() if not k.startswith(_RESERVED)}
    return (f"{title} {text}" if title else text), own, title


async def corpus_indexes(
    graph_store: GraphStore, *, k1: float = 1.2, b: float = 0.75, batch_size: int = 1000
) -> tuple[BM25Index, TitleLinker]:
    """A :class:`BM25Index` and a :class:`~graphfuse.indexing.TitleLinker` over the store's documents.

    What the ``multihop`` preset's ``bm25`` and ``linker`` need, for a store filled by the
    :class:`~graphfuse.indexing.Indexer` (or ``graphfuse index``): every document except the
    indexer's chunk nodes, its text prefixed with its title (metadata ``"title"``), its
    metadata without the indexer's ``graphfuse_*`` keys for filters, and the subjects their
    texts state (:attr:`BM25Index.subjects`, :func:`subject_span`); the linker maps each title
    to its documents. The store must offer ``iter_documents`` (the embedded stores do;
    otherwise ``InvalidInput``): build both from your source records instead. The documents
    are read in batches of ``batch_size``; the indexes are built in a worker thread.
    """
    if not isinstance(graph_store, DocumentListing):
        raise InvalidInput(
            f"graph store {graph_store!r} cannot list its documents (it has no iter_documents): "
            "build the BM25Index and TitleLinker from your source records instead"
        )
    items: list[tuple[str, str, Mapping[str, Any]]] = []
    subjects: list[tuple[str, str, Mapping[str, Any]]] = []
    titles: list[tuple[str, str]] = []
    async for doc in graph_store.iter_documents(batch_size=batch_size):
        item = corpus_item(doc)
        if item is None:
            continue
        text, own, title = item
        items.append((doc.id, text, own))
        subject = subject_span(doc.content or "")
        if subject is not None:
            subjects.append((doc.id, subject, own))
        if title is not None:
            titles.append((title, doc.id))

    def build() -> tuple[BM25Index, TitleLinker]:
        linker = TitleLinker()
        for title, doc_id in titles:
            linker.add(title, doc_id)
        return BM25Index(items, k1=k1, b=b, subjects=subjects), linker

    return await asyncio.to_thread(build)
