"""LangChain documents on GraphFuse's records layer (:mod:`graphfuse.records`): the LangChain side only.

Everything GraphFuse adds to a LangChain document lives under one metadata key,
``metadata["graphfuse"]``::

    {"query": "...", "filter": {...}, "signals": {"semantic": 0.8, ...},
     "score": 0.61, "contributions": {"semantic": 0.24, ...}}

``query`` (and ``filter``) travel down a chain of runnables with the documents; ``score`` and
``contributions`` are present after a fusion step (or on a :class:`GraphFuseRetriever` result).
A result that is a chunk of a page also carries ``"passage": {"parent_id": ..., "chunk_index": ...}``
there (the indexer's bookkeeping, kept out of the metadata a prompt or an embedder reads).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.documents import Document

import graphfuse
from graphfuse import InvalidInput, MetadataFilter
from graphfuse.records import Batch, Hit, RecordReader
from graphfuse.validation import combine_filters

__all__ = [
    "METADATA_KEY",
    "PASSAGE_KEYS",
    "RETRIEVAL_SIGNAL",
    "DocumentMapping",
    "StageInput",
    "combine_filters",
    "documents_from_hits",
    "from_graphfuse",
    "parse_input",
    "passage_metadata",
    "read_documents",
    "to_graphfuse",
]

METADATA_KEY = "graphfuse"
"""The one metadata key GraphFuse adds to a document: its signals, score and contributions."""
RETRIEVAL_SIGNAL = "retrieval"
"""The signal a retriever's rank becomes when the retriever names no signal of its own."""
INTERNAL_PREFIX = "graphfuse_"
"""Stored metadata keys starting with this are GraphFuse's own bookkeeping: never copied onto documents."""
PASSAGE_KEYS = ("parent_id", "chunk_index")
"""A chunk's bookkeeping keys: kept under ``metadata["graphfuse"]["passage"]`` of a LangChain document."""

StageInput = Sequence[Document] | Mapping[str, Any]
"""What the GraphFuse runnables accept: a list of documents, or ``{"query", "documents"[, "filter"]}``."""


def _namespace(doc: Document) -> Mapping[str, Any]:
    ns = doc.metadata.get(METADATA_KEY)
    if ns is None:
        return {}
    if type(ns) is not dict and not isinstance(ns, Mapping):
        raise InvalidInput(f"metadata[{METADATA_KEY!r}] must be a mapping, got {type(ns).__name__}")
    return ns


@dataclass(frozen=True, slots=True)
class DocumentMapping:
    """Where a LangChain document keeps what a GraphFuse document has as fields.

    ``id_key``: the metadata key holding the GraphFuse id (``None``: ``Document.id``). A
    document with neither gets an id derived from its content, so identical anonymous
    documents are one document. ``created_at_key``/``updated_at_key``: metadata keys holding
    timestamps (:func:`graphfuse.parse_timestamp`'s rule).
    """

    id_key: str | None = None
    created_at_key: str = "created_at"
    updated_at_key: str = "updated_at"

    def doc_id(self, doc: Document) -> str:
        """The GraphFuse id of ``doc``."""
        if self.id_key is not None:
            value = doc.metadata.get(self.id_key)
            if value is not None:
                if not isinstance(value, str) or not value:
                    raise InvalidInput(f"metadata[{self.id_key!r}] must be a non-empty string id, got {value!r}")
                return value
        if doc.id:
            return doc.id
        return "content:" + hashlib.sha256(doc.page_content.encode("utf-8")).hexdigest()[:32]

    def reader(self, source: str | None = None) -> RecordReader[Document]:
        """The :class:`graphfuse.records.RecordReader` for LangChain documents. Documents without
        signals get the ``retrieval`` signal from their rank, ``(n - rank) / n``; with ``source``,
        every document gets only the signal named ``source`` from its rank."""

        def signals(doc: Document) -> object:
            raw = _namespace(doc).get("signals")
            return raw if raw else None  # no signals (or none yet): a document from elsewhere

        keys = [None if k == METADATA_KEY else k for k in (self.created_at_key, self.updated_at_key)]
        return RecordReader(
            id=self.doc_id,
            content=lambda doc: doc.page_content,
            metadata=passage_metadata,
            signals=signals if source is None else None,
            rank_signal=source or RETRIEVAL_SIGNAL,
            label=lambda doc: f"document {self.doc_id(doc)!r}",
            created_at_key=keys[0],
            updated_at_key=keys[1],
        )


def parse_input(value: object, what: str) -> tuple[str | None, MetadataFilter | None, list[Document]]:
    """Split a runnable's input into (query text or None, filter or None, documents).

    The query comes from ``{"query": ...}`` or, for a plain list, from the documents'
    ``metadata["graphfuse"]["query"]`` (all documents that carry one must agree).
    """
    explicit_query: object = None
    explicit_filter: object = None
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"query", "documents", "filter"})
        if unknown or "documents" not in value:
            raise InvalidInput(
                f"{what} takes a list of Documents or a mapping with 'documents' (and optionally 'query', "
                f"'filter'); got a mapping with keys {sorted(value)}"
            )
        explicit_query, explicit_filter, value = value.get("query"), value.get("filter"), value["documents"]
        if explicit_query is not None and (not isinstance(explicit_query, str) or not explicit_query.strip()):
            raise InvalidInput(f"{what}: 'query' must be a non-empty string, got {explicit_query!r}")
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInput(f"{what} takes a list of Documents, got {type(value).__name__}")
    docs = list(value)
    queries: set[str] = set()
    filters: list[Any] = []
    for item in docs:
        if type(item) is not Document and not isinstance(item, Document):
            raise InvalidInput(f"{what} takes a list of Documents, found a {type(item).__name__}")
        ns = _namespace(item)
        if isinstance(q := ns.get("query"), str):
            queries.add(q)
        if (f := ns.get("filter")) is not None:
            filters.append(f)
    if explicit_query is None and len(queries) > 1:
        shown = ", ".join(repr(q[:40]) for q in sorted(queries)[:3])
        raise InvalidInput(f"{what}: the documents carry different queries ({shown}); pass {{'query': ...}} explicitly")
    query = explicit_query if isinstance(explicit_query, str) else next(iter(queries), None)
    carried = MetadataFilter.parse(filters[0]) if filters else None
    return query, combine_filters(carried, MetadataFilter.parse(explicit_filter)), docs  # type: ignore[arg-type]


def read_documents(docs: Sequence[Document], mapping: DocumentMapping, source: str | None = None) -> Batch[Document]:
    """The documents as a batch of records, one per GraphFuse id (see :meth:`DocumentMapping.reader`)."""
    return mapping.reader(source).read(docs)


def to_graphfuse(doc: Document, mapping: DocumentMapping) -> graphfuse.Document:
    """The GraphFuse document for a LangChain one (the ``graphfuse`` metadata key left out)."""
    return read_documents([doc], mapping).records[0].document


def _namespace_for(
    query: str | None, filter: MetadataFilter | None, signals: Mapping[str, float], hit: Hit[Any] | None
) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    if query is not None:
        ns["query"] = query
    if filter is not None:
        ns["filter"] = filter.to_dict()
    ns["signals"] = dict(signals)
    if hit is not None and hit.score is not None:
        ns["score"] = hit.score
        ns["contributions"] = dict(hit.contributions)
    return ns


def from_graphfuse(
    doc: graphfuse.Document,
    *,
    query: str | None,
    filter: MetadataFilter | None,
    signals: Mapping[str, float],
    mapping: DocumentMapping,
    score: float | None = None,
    contributions: Mapping[str, float] | None = None,
) -> Document:
    """A LangChain document for a GraphFuse document: its user metadata (timestamps as ISO 8601,
    GraphFuse's internal ``graphfuse_*`` keys left out) and ``metadata["graphfuse"]``."""
    if doc.content is None:
        raise InvalidInput(
            f"document {doc.id!r} carries only an id; a LangChain Document needs its content "
            "(add a Hydrate stage to the pipeline)"
        )
    chunk = isinstance(doc.metadata.get(PASSAGE_KEYS[0]), str)
    metadata: dict[str, Any] = {
        k: v
        for k, v in doc.metadata.items()
        if not (isinstance(k, str) and k.startswith(INTERNAL_PREFIX)) and not (chunk and k in PASSAGE_KEYS)
    }
    if doc.created_at is not None:
        metadata.setdefault(mapping.created_at_key, doc.created_at.isoformat())
    if doc.updated_at is not None:
        metadata.setdefault(mapping.updated_at_key, doc.updated_at.isoformat())
    if mapping.id_key is not None:
        metadata.setdefault(mapping.id_key, doc.id)
    hit: Hit[Any] = Hit(doc, signals, (), score, contributions or {})
    metadata[METADATA_KEY] = _namespace_for(query, filter, signals, hit)
    if chunk:
        metadata[METADATA_KEY]["passage"] = {k: doc.metadata[k] for k in PASSAGE_KEYS if k in doc.metadata}
    return Document(id=doc.id, page_content=doc.content, metadata=metadata)


def passage_metadata(doc: Document) -> dict[str, Any]:
    """``doc``'s metadata as GraphFuse reads a passage: the ``graphfuse`` key left out, a chunk's
    ``parent_id``/``chunk_index`` (kept under ``metadata["graphfuse"]["passage"]``) put back."""
    metadata = {k: v for k, v in doc.metadata.items() if k != METADATA_KEY}
    passage = _namespace(doc).get("passage")
    if isinstance(passage, Mapping):
        for key in PASSAGE_KEYS:
            if key in passage:
                metadata.setdefault(key, passage[key])
    return metadata


def documents_from_hits(
    hits: Sequence[Hit[Document]], *, query: str | None, filter: MetadataFilter | None, mapping: DocumentMapping
) -> list[Document]:
    """One document per hit, in order: a copy of the first document with that id carrying the hit's
    ``metadata["graphfuse"]`` (the user's metadata kept as it was), or a new document for a hit a
    stage added. The documents passed in are never changed."""
    out: list[Document] = []
    for hit in hits:
        if not hit.items:
            out.append(
                from_graphfuse(
                    hit.document,
                    query=query,
                    filter=filter,
                    signals=hit.signals,
                    mapping=mapping,
                    score=hit.score,
                    contributions=hit.contributions,
                )
            )
            continue
        first = hit.items[0]
        ns = _namespace_for(query, filter, hit.signals, hit)
        if isinstance(passage := _namespace(first).get("passage"), Mapping):
            ns["passage"] = dict(passage)  # a chunk stays a chunk of its page down the chain
        metadata = {**first.metadata, METADATA_KEY: ns}
        out.append(first.model_copy(update={"metadata": metadata}))
    return out
