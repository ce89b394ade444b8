"""Conversion between LangChain ``Document`` objects and GraphFuse candidates.

Everything GraphFuse adds to a LangChain document lives under one metadata key,
``metadata["graphfuse"]``::

    {"query": "...", "filter": {...}, "signals": {"semantic": 0.8, ...},
     "score": 0.61, "contributions": {"semantic": 0.24, ...}}

``query`` (and ``filter``, when one applied) let the query travel down a chain of runnables
with the documents; ``score`` and ``contributions`` are only present after a fusion step
(or on a :class:`GraphFuseRetriever` result), because any later stage changes the signals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from langchain_core.documents import Document

import graphfuse
from graphfuse import Candidate, InvalidInput, MetadataFilter
from graphfuse.validation import check_signal

__all__ = [
    "METADATA_KEY",
    "RETRIEVAL_SIGNAL",
    "DocumentMapping",
    "StageInput",
    "combine_filters",
    "from_graphfuse",
    "parse_input",
    "to_candidates",
    "to_documents",
    "to_graphfuse",
]

METADATA_KEY = "graphfuse"
RETRIEVAL_SIGNAL = "retrieval"
INTERNAL_PREFIX = "graphfuse_"
"""Stored metadata keys starting with this are GraphFuse's own bookkeeping: never copied onto documents."""

StageInput = Sequence[Document] | Mapping[str, Any]
"""What the GraphFuse runnables accept: a list of documents, or ``{"query", "documents"[, "filter"]}``."""


@dataclass(frozen=True, slots=True)
class DocumentMapping:
    """Where a LangChain document keeps what a GraphFuse document has as fields.

    ``id_key``: the metadata key holding the GraphFuse id (``None``: ``Document.id``). A
    document with neither gets an id derived from its content, so identical anonymous
    documents are one document. ``created_at_key``/``updated_at_key``: metadata keys holding
    timestamps (a ``datetime``, an ISO 8601 string or POSIX seconds).
    """

    id_key: str | None = None
    created_at_key: str = "created_at"
    updated_at_key: str = "updated_at"

    def doc_id(self, doc: Document) -> str:
        if self.id_key is not None:
            value = doc.metadata.get(self.id_key)
            if value is not None:
                if not isinstance(value, str) or not value:
                    raise InvalidInput(f"metadata[{self.id_key!r}] must be a non-empty string id, got {value!r}")
                return value
        if doc.id:
            return doc.id
        return "content:" + hashlib.sha256(doc.page_content.encode("utf-8")).hexdigest()[:32]


def combine_filters(*filters: graphfuse.MetadataFilter | Mapping[str, Any] | None) -> MetadataFilter | None:
    """The conjunction of the given filters (``None`` entries ignored), validated."""
    conditions = tuple(c for f in filters if (p := MetadataFilter.parse(f)) is not None for c in p.conditions)
    return MetadataFilter(conditions) if conditions else None


def _timestamp(doc_id: str, key: str, value: Any) -> datetime | None:
    """The UTC time in ``metadata[key]`` (naive times are UTC, as graphfuse.Document takes them)."""
    if value is None:
        return None
    if isinstance(value, str):
        parsed = _parse_iso(value)
        if parsed is None:
            raise InvalidInput(f"document {doc_id!r}: metadata[{key!r}] is not an ISO 8601 time: {value!r}")
        return parsed
    if isinstance(value, datetime):
        return _as_utc(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(float(value), tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise InvalidInput(f"document {doc_id!r}: metadata[{key!r}] is not a valid POSIX time: {value!r}") from None
    raise InvalidInput(
        f"document {doc_id!r}: metadata[{key!r}] must be a datetime, ISO 8601 string or POSIX seconds, "
        f"got {type(value).__name__}"
    )


def _as_utc(stamp: datetime) -> datetime:
    return stamp.replace(tzinfo=timezone.utc) if stamp.tzinfo is None else stamp.astimezone(timezone.utc)


def _parse_iso(value: str) -> datetime | None:
    # Memoised: every runnable of a chain reads the same timestamp strings (datetimes are immutable).
    # Only short strings are cached, so odd metadata cannot make the cache hold large values.
    return _parse_iso_cached(value) if len(value) <= 64 else _parse_iso_uncached(value)


def _parse_iso_uncached(value: str) -> datetime | None:
    text = value.strip()
    # Python 3.10's fromisoformat does not read a trailing "Z".
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return _as_utc(datetime.fromisoformat(text))
    except ValueError:
        return None


_parse_iso_cached = lru_cache(maxsize=4096)(_parse_iso_uncached)


def _namespace(doc: Document) -> Mapping[str, Any]:
    ns = doc.metadata.get(METADATA_KEY)
    if ns is None:
        return {}
    if type(ns) is not dict and not isinstance(ns, Mapping):  # dict first: the ABC check is slow
        raise InvalidInput(f"metadata[{METADATA_KEY!r}] must be a mapping, got {type(ns).__name__}")
    return ns


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
        if not isinstance(item, Document):
            raise InvalidInput(f"{what} takes a list of Documents, found a {type(item).__name__}")
        ns = _namespace(item)
        if ns:
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


def to_candidates(
    docs: Sequence[Document], mapping: DocumentMapping, *, source: str | None = None
) -> tuple[list[Candidate], dict[str, Document]]:
    """Convert documents to candidates; returns them and the first original document per id.

    A document listed twice (same id) is one candidate: its signals merge (maximum per signal).
    Documents without GraphFuse signals (from any other retriever) get the ``retrieval``
    signal from their rank: ``(n - rank) / n``, 1.0 for the first. With ``source``, every
    document gets only the signal named ``source`` from its rank (its own signals are dropped).
    """
    originals: dict[str, Document] = {}
    signals: dict[str, dict[str, float]] = {}
    foreign: list[str] = []
    for doc in docs:
        doc_id = mapping.doc_id(doc)
        raw = _namespace(doc).get("signals", {})
        if type(raw) is not dict and not isinstance(raw, Mapping):
            raise InvalidInput(f"document {doc_id!r}: metadata[{METADATA_KEY!r}]['signals'] must be a mapping")
        if doc_id not in originals:
            originals[doc_id] = doc
            signals[doc_id] = {}
            if source is not None or not raw:
                foreign.append(doc_id)
        if source is not None:
            # A source contributes its ranking only: the signals behind that ranking are its own business.
            for name, v in raw.items():
                check_signal(name, v)
            continue
        merged = signals[doc_id]
        if not merged:
            signals[doc_id] = {name: check_signal(name, v) for name, v in raw.items()}
            continue
        for name, v in raw.items():
            value = check_signal(name, v)
            merged[name] = max(value, merged.get(name, value))
    n = len(foreign)
    signal = source or RETRIEVAL_SIGNAL
    if n:
        check_signal(signal, 0.0)  # the name; rank values are in (0, 1] by construction
    for rank, doc_id in enumerate(foreign):
        signals[doc_id][signal] = max((n - rank) / n, signals[doc_id].get(signal, 0.0))
    # Every signal was checked above: build the candidates without checking them again.
    candidates = [
        Candidate.trusted(to_graphfuse(doc_id, doc, mapping), signals[doc_id]) for doc_id, doc in originals.items()
    ]
    return candidates, originals


def to_graphfuse(doc_id: str, doc: Document, mapping: DocumentMapping) -> graphfuse.Document:
    """A GraphFuse document for a LangChain one (the ``graphfuse`` metadata key left out)."""
    metadata = doc.metadata.copy()
    metadata.pop(METADATA_KEY, None)
    created = _timestamp(doc_id, mapping.created_at_key, metadata.get(mapping.created_at_key))
    updated = _timestamp(doc_id, mapping.updated_at_key, metadata.get(mapping.updated_at_key))
    content = doc.page_content
    if type(doc_id) is not str or not doc_id.strip() or len(doc_id) > 512 or type(content) is not str:
        return graphfuse.Document(doc_id, content, metadata, created, updated)  # let it name the problem
    # What graphfuse.Document() checks already holds (a valid id, str content, a fresh metadata dict
    # nobody else references, UTC timestamps): the trusted constructor skips re-checking.
    return graphfuse.Document.trusted(doc_id, content, metadata, created, updated)


def _namespace_for(
    query: str | None,
    filter: MetadataFilter | None,
    signals: Mapping[str, float],
    score: float | None,
    contributions: Mapping[str, float] | None,
) -> dict[str, Any]:
    ns: dict[str, Any] = {}
    if query is not None:
        ns["query"] = query
    if filter is not None:
        ns["filter"] = filter.to_dict()
    ns["signals"] = dict(signals)
    if score is not None:
        ns["score"] = score
        ns["contributions"] = dict(contributions or {})
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
    """A LangChain document for a GraphFuse document (timestamps written as ISO 8601 metadata).

    The stored metadata is copied without GraphFuse's internal ``graphfuse_*`` keys, so
    ``metadata["graphfuse"]`` is the only GraphFuse key on the document.
    """
    if doc.content is None:
        raise InvalidInput(
            f"document {doc.id!r} carries only an id; a LangChain Document needs its content "
            "(add a Hydrate stage to the pipeline)"
        )
    metadata: dict[str, Any] = {
        k: v for k, v in doc.metadata.items() if not (isinstance(k, str) and k.startswith(INTERNAL_PREFIX))
    }
    if doc.created_at is not None:
        metadata.setdefault(mapping.created_at_key, doc.created_at.isoformat())
    if doc.updated_at is not None:
        metadata.setdefault(mapping.updated_at_key, doc.updated_at.isoformat())
    if mapping.id_key is not None:
        metadata.setdefault(mapping.id_key, doc.id)
    metadata[METADATA_KEY] = _namespace_for(query, filter, signals, score, contributions)
    return Document(id=doc.id, page_content=doc.content, metadata=metadata)


def to_documents(
    candidates: Sequence[Candidate],
    originals: Mapping[str, Document],
    *,
    query: str | None,
    filter: MetadataFilter | None,
    mapping: DocumentMapping,
    scores: Sequence[float] | None = None,
    contributions: Sequence[Mapping[str, float]] | None = None,
) -> list[Document]:
    """Convert candidates back: known ids keep their original document (copied), new ones are built."""
    out: list[Document] = []
    for i, c in enumerate(candidates):
        score = None if scores is None else scores[i]
        shares = None if contributions is None else contributions[i]
        original = originals.get(c.id)
        if original is None:
            out.append(
                from_graphfuse(
                    c.document,
                    query=query,
                    filter=filter,
                    signals=c.signals,
                    mapping=mapping,
                    score=score,
                    contributions=shares,
                )
            )
            continue
        metadata = dict(original.metadata)
        metadata[METADATA_KEY] = _namespace_for(query, filter, c.signals, score, shares)
        out.append(original.model_copy(update={"metadata": metadata}))
    return out
