"""The corpus-wide inputs of the ``multihop`` preset (BM25, titles, timeline, entities), read from a store."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._core._capabilities import DocumentListing
from .._core._errors import InvalidInput
from .._core._protocols import GraphStore
from .._core._sync import sync_form
from .._core._types import Document
from ..indexing import ENTITY_PREFIX, KIND_KEY, EntityMatcher, TitleLinker, metadata_aliases
from ..timeaware import Timeline
from ._bm25 import BM25Index
from ._subjects import linked_names, subject_span

if TYPE_CHECKING:
    from ._corpus_cache import CorpusCache

__all__ = [
    "CORPUS_INPUTS",
    "acorpus_indexes",
    "acorpus_inputs",
    "corpus_indexes",
    "corpus_inputs",
    "page_names",
    "passage_index",
]

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


CORPUS_INPUTS = ("bm25", "linker", "timeline", "entities")
"""The keys of :func:`corpus_inputs`: the keyword inputs of a preset that reads the corpus."""


async def acorpus_inputs(
    graph_store: GraphStore,
    *,
    cache: CorpusCache | None = None,
    save: bool = True,
    k1: float = 1.2,
    b: float = 0.75,
    batch_size: int = 1000,
) -> dict[str, Any]:
    """What a preset that reads the whole corpus (``multihop``) is built with, read from a store.

    The one building path of the corpus-wide indexes: ``graphfuse query`` and ``graphfuse serve``
    (:meth:`~graphfuse.stores.StoreDirectory.pipeline`), ``graphfuse eval``, the hosts' stores and
    :func:`graphfuse.presets.abuild` all call it. Returns ``{"bm25", "linker", "timeline",
    "entities"}`` (:data:`CORPUS_INPUTS`), keyword inputs of :func:`graphfuse.presets.abuild`:

    - ``bm25``: a :class:`BM25Index` of every document except the indexer's chunk and entity
      nodes, its text prefixed with its title (metadata ``"title"``), its metadata without the
      indexer's ``graphfuse_*`` keys for filters, the subjects the texts state
      (:attr:`BM25Index.subjects`) and, when the indexer split documents, the corpus by passage
      (:attr:`BM25Index.passages`, :func:`passage_index`);
    - ``linker``: a :class:`~graphfuse.indexing.TitleLinker` of each document's title, a title-less
      one's subject name (:func:`~graphfuse.multihop.linked_names`) and its aliases
      (:func:`~graphfuse.indexing.metadata_aliases`);
    - ``timeline``: a :class:`~graphfuse.timeaware.Timeline` of every node but the entity nodes;
    - ``entities``: an :class:`~graphfuse.indexing.EntityMatcher` of the entity nodes.

    With ``cache`` (a :class:`CorpusCache` of the store's directory) they come from its file,
    refreshed first when stale (in memory only with ``save=False``); without, the store's
    documents are read once, in batches of ``batch_size``. The store must list its documents
    (:class:`~graphfuse.DocumentListing`; otherwise ``InvalidInput``): build the inputs from your
    source records instead.
    """
    if cache is not None:
        return await cache.ainputs(graph_store, save=save)
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
    dated: list[tuple[str, datetime | None]] = []
    entities: dict[str, str] = {}
    async for doc in graph_store.iter_documents(batch_size=batch_size):
        if doc.metadata.get(KIND_KEY) == "entity":
            if doc.id.startswith(ENTITY_PREFIX):
                entities[doc.id[len(ENTITY_PREFIX) :]] = doc.id
        else:
            dated.append((doc.id, doc.created_at))
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
        titles.extend((name, doc.id) for name in page_names(title, doc.content or "", own))

    def build() -> dict[str, Any]:
        linker = TitleLinker()
        for title, doc_id in titles:
            linker.add(title, doc_id)
        bm25 = BM25Index(items, k1=k1, b=b, subjects=subjects)
        return {
            "bm25": bm25.with_passages(passage_index(pages, chunks, k1=k1, b=b)),
            "linker": linker,
            "timeline": Timeline(dated),
            "entities": EntityMatcher(entities),
        }

    return await asyncio.to_thread(build)


corpus_inputs = sync_form(acorpus_inputs)
"""Sync form of :func:`acorpus_inputs`: same arguments, result and errors, no event loop needed."""


def page_names(title: str | None, text: str, metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """What the corpus's title linker names a page by: :func:`linked_names` and its aliases."""
    return (*linked_names(title, text), *metadata_aliases(metadata))


async def acorpus_indexes(
    graph_store: GraphStore, *, k1: float = 1.2, b: float = 0.75, batch_size: int = 1000
) -> tuple[BM25Index, TitleLinker]:
    """The ``bm25`` and ``linker`` of :func:`corpus_inputs` (a :class:`BM25Index` and a
    :class:`~graphfuse.indexing.TitleLinker` over the store's documents)."""
    inputs = await acorpus_inputs(graph_store, k1=k1, b=b, batch_size=batch_size)
    return inputs["bm25"], inputs["linker"]


corpus_indexes = sync_form(acorpus_indexes)
"""Sync form of :func:`acorpus_indexes`: same arguments, result and errors, no event loop needed."""
