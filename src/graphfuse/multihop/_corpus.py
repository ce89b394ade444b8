"""The corpus-wide indexes of the ``multihop`` preset, rebuilt from what a graph store holds."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from .._capabilities import DocumentListing
from .._errors import InvalidInput
from .._protocols import GraphStore
from .._types import Document
from ..indexing import KIND_KEY, TitleLinker
from ._bm25 import BM25Index
from ._subjects import linked_names, subject_span

__all__ = ["corpus_indexes", "passage_index"]

_RESERVED = "graphfuse_"  # the indexer's bookkeeping keys in document metadata
PARENT_KEY = "parent_id"  # the indexer's link from a chunk node to its document


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


def chunk_item(doc: Document) -> tuple[str, Mapping[str, Any], str, bool] | None:
    """What the passage index takes from an indexer chunk node: (BM25 text, own metadata, parent
    id, whether it opens its document), or ``None`` for any other node."""
    metadata = doc.metadata
    parent = metadata.get(PARENT_KEY)
    if metadata.get(KIND_KEY) != "chunk" or not isinstance(parent, str) or not parent:
        return None
    title = metadata.get("title")
    text = doc.content or ""
    own = {k: v for k, v in metadata.items() if not k.startswith(_RESERVED)}
    return (
        (f"{title} {text}" if isinstance(title, str) and title.strip() else text),
        own,
        parent,
        (metadata.get("chunk_index") == 0),
    )


PassageRow = tuple[str, str, Mapping[str, Any], str | None]
"""``(id, BM25 text, metadata, subject or None)`` of a row of the passage index."""


def passage_index(
    pages: Sequence[PassageRow], chunks: Sequence[tuple[PassageRow, str]], *, k1: float = 1.2, b: float = 0.75
) -> BM25Index | None:
    """The BM25 index of a corpus by passage (:attr:`BM25Index.passages`), or ``None`` when no page is split.

    ``chunks`` are the indexer's chunk rows with their parent's id; each page of ``pages`` that
    has no chunk is a passage of its own. A subject is kept for an unsplit page and for the
    opening chunk of a split one (the start of its first sentence, as the page index has it).
    """
    if not chunks:
        return None
    split = {parent for _, parent in chunks}
    rows = [row for row in pages if row[0] not in split] + [row for row, _ in chunks]
    return BM25Index(
        ((i, text, meta) for i, text, meta, _ in rows),
        k1=k1,
        b=b,
        subjects=((i, subject, meta) for i, _, meta, subject in rows if subject is not None),
    )


async def corpus_indexes(
    graph_store: GraphStore, *, k1: float = 1.2, b: float = 0.75, batch_size: int = 1000
) -> tuple[BM25Index, TitleLinker]:
    """A :class:`BM25Index` and a :class:`~graphfuse.indexing.TitleLinker` over the store's documents.

    What the ``multihop`` preset's ``bm25`` and ``linker`` need, for a store filled by the
    :class:`~graphfuse.indexing.Indexer` (or ``graphfuse index``): every document except the
    indexer's chunk nodes, its text prefixed with its title (metadata ``"title"``), its
    metadata without the indexer's ``graphfuse_*`` keys for filters, and the subjects their
    texts state (:attr:`BM25Index.subjects`, :func:`subject_span`); the linker maps each title
    to its documents, and a document without a title by the name its subject gives
    (:func:`~graphfuse.multihop.subject_name`, in each of its
    :func:`~graphfuse.multihop.name_forms`). When the indexer split documents into chunks, the
    index also holds the corpus by passage (:attr:`BM25Index.passages`, :func:`passage_index`).
    The store must offer ``iter_documents`` (the embedded stores do; otherwise
    ``InvalidInput``): build both from your source records instead. The documents
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
    pages: list[PassageRow] = []
    chunks: list[tuple[PassageRow, str]] = []
    async for doc in graph_store.iter_documents(batch_size=batch_size):
        piece = chunk_item(doc)
        if piece is not None:
            text, own, parent, opening = piece
            lead = subject_span(doc.content or "") if opening else None
            chunks.append(((doc.id, text, own, lead), parent))
            continue
        item = corpus_item(doc)
        if item is None:
            continue
        text, own, title = item
        items.append((doc.id, text, own))
        subject = subject_span(doc.content or "")
        pages.append((doc.id, text, own, subject))
        if subject is not None:
            subjects.append((doc.id, subject, own))
        # A document without a title is named by its subject ("Frank Launder (1906 - 1997) was ..."),
        # so that a question naming it finds it as a titled corpus's would (docs/multihop.md).
        titles.extend((name, doc.id) for name in linked_names(title, doc.content or ""))

    def build() -> tuple[BM25Index, TitleLinker]:
        linker = TitleLinker()
        for title, doc_id in titles:
            linker.add(title, doc_id)
        bm25 = BM25Index(items, k1=k1, b=b, subjects=subjects)
        return bm25.with_passages(passage_index(pages, chunks, k1=k1, b=b)), linker

    return await asyncio.to_thread(build)
