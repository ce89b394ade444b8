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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from itertools import repeat
from operator import itemgetter, setitem
from types import MappingProxyType
from typing import Any, NamedTuple, cast

from langchain_core.documents import Document

import graphfuse
from graphfuse import Candidate, InvalidInput, MetadataFilter, SignalInput
from graphfuse.validation import check_signal

__all__ = [
    "METADATA_KEY",
    "RETRIEVAL_SIGNAL",
    "DocumentMapping",
    "Owned",
    "Records",
    "StageInput",
    "combine_filters",
    "from_graphfuse",
    "mapping_for",
    "owned_documents",
    "owned_input",
    "owned_records",
    "parse_input",
    "picker",
    "read_records",
    "record_documents",
    "source_ranks",
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


def mapping_for(
    id_key: str | None = None, created_at_key: str = "created_at", updated_at_key: str = "updated_at"
) -> DocumentMapping:
    """The shared :class:`DocumentMapping` for these keys (one object per settings: compared by identity)."""
    return _mapping(id_key, created_at_key, updated_at_key)


_mapping = lru_cache(maxsize=256)(DocumentMapping)


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
        if type(item) is not Document and not isinstance(item, Document):
            raise InvalidInput(f"{what} takes a list of Documents, found a {type(item).__name__}")
        ns = item.metadata.get(METADATA_KEY)  # _namespace, inline (this runs per document per step)
        if ns is None:
            continue
        if type(ns) is not dict and not isinstance(ns, Mapping):
            raise InvalidInput(f"metadata[{METADATA_KEY!r}] must be a mapping, got {type(ns).__name__}")
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


# A runnable's output, remembered so that the next runnable of a chain (which gets that very list)
# takes its candidates instead of converting every document again. Taken only after checking each
# document against its candidate: same id and content, the same metadata values (by identity: the
# candidate's document was made from them) and the same signals. Bounded: the last _KEPT outputs,
# keyed by their first document's id(); an entry holds the candidates, not the documents.
_KEPT = 8
_OUTPUTS: dict[int, tuple[tuple[Candidate, ...], DocumentMapping]] = {}
_MISSING = object()


def _remember(docs: Sequence[Document], candidates: Sequence[Candidate], mapping: DocumentMapping) -> None:
    if not docs:
        return
    _OUTPUTS[id(docs[0])] = (tuple(candidates), mapping)
    while len(_OUTPUTS) > _KEPT:
        try:
            del _OUTPUTS[next(iter(_OUTPUTS))]
        except (KeyError, RuntimeError, StopIteration):  # another thread got there first
            break


def _recall(docs: Sequence[Document], mapping: DocumentMapping) -> tuple[Candidate, ...] | None:
    """The candidates a runnable made ``docs`` from, if ``docs`` still show exactly them."""
    entry = _OUTPUTS.get(id(docs[0])) if docs else None
    if entry is None:
        return None
    candidates, made_with = entry
    if made_with is not mapping or len(candidates) != len(docs):
        return None
    plain_ids = mapping.id_key is None
    for doc, c in zip(docs, candidates, strict=True):
        source = c.document
        if doc.page_content is not source.content:
            return None
        if (doc.id if plain_ids and doc.id else mapping.doc_id(doc)) != source.id:
            return None
        metadata = doc.metadata
        kept = source.metadata
        if type(metadata) is not dict or len(metadata) != len(kept) + 1:
            return None
        for key, value in kept.items():
            if metadata.get(key, _MISSING) is not value:
                return None
        ns = metadata.get(METADATA_KEY)
        if type(ns) is not dict or ns.get("signals") != c.signals:
            return None
    return candidates


def to_candidates(
    docs: Sequence[Document], mapping: DocumentMapping, *, source: str | None = None
) -> tuple[list[Candidate], dict[str, Document]]:
    """Convert documents to candidates; returns them and the first original document per id.

    A document listed twice (same id) is one candidate: its signals merge (maximum per signal).
    Documents without GraphFuse signals (from any other retriever) get the ``retrieval``
    signal from their rank: ``(n - rank) / n``, 1.0 for the first. With ``source``, every
    document gets only the signal named ``source`` from its rank (its own signals are dropped).

    A runnable's output, unchanged since, is not converted again: its candidates are taken as
    the runnable made them (same documents, ids, contents, metadata and signals).
    """
    known = _recall(docs, mapping) if source is None else None
    if known is not None:
        return list(known), {c.id: doc for c, doc in zip(known, docs, strict=True)}
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


def source_ranks(
    docs: Sequence[Document], mapping: DocumentMapping, source: str
) -> tuple[dict[str, float], dict[str, Document]]:
    """One source's ranking as its signal: ``(n - rank) / n`` per distinct id, and its first documents.

    What ``to_candidates(docs, mapping, source=source)`` gives as signals, without converting
    the documents (a document several sources list is converted once, by the caller). The
    signals the documents carried are checked, then left out.
    """
    originals: dict[str, Document] = {}
    for doc in docs:
        doc_id = mapping.doc_id(doc)
        raw = _namespace(doc).get("signals", {})
        if type(raw) is not dict and not isinstance(raw, Mapping):
            raise InvalidInput(f"document {doc_id!r}: metadata[{METADATA_KEY!r}]['signals'] must be a mapping")
        for name, v in raw.items():
            check_signal(name, v)
        originals.setdefault(doc_id, doc)
    n = len(originals)
    if n:
        check_signal(source, 0.0)  # the name; rank values are in (0, 1] by construction
    return {doc_id: (n - rank) / n for rank, doc_id in enumerate(originals)}, originals


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


_FIELDS_SET = frozenset({"id", "metadata", "page_content"})


def _slot_setter(name: str) -> Callable[[object, object], None]:
    """``object.__setattr__(obj, name, value)`` for a pydantic model's own slot, as a direct call of the slot's
    descriptor (a quarter cheaper; copies set four per document); the plain call if pydantic has no such slot."""
    owner = next(
        (c for c in Document.__mro__ if "__pydantic_fields_set__" in c.__dict__), object
    )  # pydantic's BaseModel
    setter = getattr(owner.__dict__.get(name), "__set__", None)
    if setter is None:  # pragma: no cover - a pydantic without this slot

        def fallback(obj: object, value: object) -> None:
            object.__setattr__(obj, name, value)

        return fallback
    return cast("Callable[[object, object], None]", setter)


_set_dict = _slot_setter("__dict__")
_set_fields = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")


def _new_document(doc_id: str, content: str, metadata: dict[str, Any]) -> Document:
    """``Document(id=doc_id, page_content=content, metadata=metadata)`` without pydantic's validation.

    For values already known to be valid (a str id and content, a fresh metadata dict): the same
    object ``Document(...)`` builds (same ``__dict__``, fields set, no extras), at a fraction of
    the cost, since every runnable builds one per document per call.
    """
    doc = object.__new__(Document)
    _set_dict(doc, {"id": doc_id, "metadata": metadata, "page_content": content, "type": "Document"})
    _set_fields(doc, set(_FIELDS_SET))
    _set_extra(doc, None)
    _set_private(doc, None)
    return doc


def _with_metadata(original: Document, metadata: dict[str, Any]) -> Document:
    """A copy of ``original`` with ``metadata``: ``original.model_copy(update={"metadata": metadata})``.

    ``model_copy`` goes through ``copy.copy`` of every part; for a plain LangChain ``Document``
    (the only type this shortcut takes; subclasses go through ``model_copy``) the copy is one
    dict and one set. The original is not touched.
    """
    if type(original) is not Document or original.__pydantic_extra__ or original.__pydantic_private__:
        return original.model_copy(update={"metadata": metadata})
    state = original.__dict__.copy()
    state["metadata"] = metadata
    doc = object.__new__(Document)
    _set_dict(doc, state)
    fields_set = original.__pydantic_fields_set__
    _set_fields(doc, fields_set.copy() if "metadata" in fields_set else fields_set | {"metadata"})
    _set_extra(doc, None)
    _set_private(doc, None)
    return doc


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
    return _new_document(doc.id, doc.content, metadata)


def to_documents(
    candidates: Sequence[Candidate],
    originals: Mapping[str, Document],
    *,
    query: str | None,
    filter: MetadataFilter | None,
    mapping: DocumentMapping,
    scores: Sequence[float] | None = None,
    contributions: Sequence[Mapping[str, float]] | None = None,
    inputs: Sequence[Candidate] | None = None,
) -> list[Document]:
    """Convert candidates back: known ids keep their original document (copied), new ones are built.

    ``inputs``: the candidates ``to_candidates`` made from ``originals``. When every output
    document is a copy whose candidate still carries that GraphFuse document, the output is
    remembered, so that the next runnable does not convert it again.
    """
    converted = {c.id: c.document for c in inputs} if inputs is not None else None
    out: list[Document] = []
    for i, c in enumerate(candidates):
        original = originals.get(c.id)
        score = None if scores is None else scores[i]
        if original is None:
            converted = None  # a new document: its conversion back differs (timestamps written as text)
            out.append(
                from_graphfuse(
                    c.document,
                    query=query,
                    filter=filter,
                    signals=c.signals,
                    mapping=mapping,
                    score=score,
                    contributions=None if contributions is None else contributions[i],
                )
            )
            continue
        # _namespace_for, inlined: this loop runs for every document of every call.
        held = c.signals
        # A candidate's signals are a read-only view of a dict: copying that dict is the fast way.
        signals: dict[str, float] = held.copy() if type(held) is MappingProxyType else dict(held)
        ns: dict[str, Any] = {}
        if query is not None:
            ns["query"] = query
        if filter is not None:
            ns["filter"] = filter.to_dict()
        ns["signals"] = signals
        if score is not None:
            ns["score"] = score
            ns["contributions"] = dict(contributions[i]) if contributions is not None else {}
        metadata = original.metadata.copy()
        metadata[METADATA_KEY] = ns
        doc = _with_metadata(original, metadata)
        out.append(doc)
        if converted is not None and converted.get(c.id) is not c.document:
            converted = None  # the stage replaced the document: what the copy shows is not c's
    if converted is not None:
        _remember(out, candidates, mapping)
    return out


# Signal stages and fusion on documents, without candidates.


class Records(NamedTuple):
    """Documents read as :func:`to_candidates` reads them, one entry per distinct id (first-seen order):
    the id, its signals (a fresh dict), its first document and, when asked for, the value of a
    :class:`graphfuse.SignalInput` for it."""

    ids: list[str]
    signals: list[dict[str, float]]
    firsts: list[Document]
    values: list[Any]
    stamps: Stamps | None = None  # the timestamps read from each first document (None: not recorded)


class Stamps(NamedTuple):
    """The timestamps read for each record: the raw metadata values and what they parse to (``None``: absent).
    ``raw_created``/``raw_updated`` is ``None`` when the mapping's key is the ``graphfuse`` key (never read)."""

    raw_created: list[Any] | None
    created: list[datetime | None]
    raw_updated: list[Any] | None
    updated: list[datetime | None]

    def pick(self, order: Sequence[int]) -> Stamps:
        """The same for the records in ``order``."""
        take = picker(order)
        rc, ru = self.raw_created, self.raw_updated
        return Stamps(
            None if rc is None else take(rc),
            take(self.created),
            None if ru is None else take(ru),
            take(self.updated),
        )


def picker(order: Sequence[int]) -> Callable[[Sequence[Any]], list[Any]]:
    """``lambda items: [items[k] for k in order]``, the picking done in C (``operator.itemgetter``)."""
    if len(order) < 2:  # itemgetter() needs an index, and with one it returns the item, not a tuple
        keys = list(order)
        return lambda items: [items[k] for k in keys]
    get = itemgetter(*order)
    return lambda items: list(get(items))


_VALID_NAMES: set[str] = set()  # signal names check_signal accepted (bounded)
_STAMPS: dict[str, datetime] = {}  # ISO strings _timestamp parsed (short ones, bounded)
_VALID_IDS: set[str] = set()  # ids that passed to_graphfuse's id check (bounded)
_MAX_STAMPS = 16384


def _parsed_stamp(doc_id: str, key: str, raw: Any) -> datetime | None:
    """``_timestamp`` of a value not found in ``_STAMPS``, remembered there when it is a short string."""
    parsed = _timestamp(doc_id, key, raw)
    if type(raw) is str and len(raw) <= 64 and len(_STAMPS) < _MAX_STAMPS:
        _STAMPS[raw] = parsed  # type: ignore[assignment]
    return parsed


def read_records(
    docs: Sequence[Document], mapping: DocumentMapping, signal_input: SignalInput | None = None
) -> Records:
    """What ``to_candidates(docs, mapping)`` gives (same ids, signals, ``retrieval`` ranks, checks and
    errors), without building candidates; with ``signal_input``, also its value for each id."""
    plain_ids = mapping.id_key is None
    created_key = None if mapping.created_at_key == METADATA_KEY else mapping.created_at_key
    updated_key = None if mapping.updated_at_key == METADATA_KEY else mapping.updated_at_key
    field = signal_input.field if signal_input is not None else None
    raw_metadata = signal_input is not None and signal_input.key != METADATA_KEY
    if plain_ids:
        found = _read_plain(docs, created_key, updated_key, field, raw_metadata)
        if found is not None:
            return found
    ids: list[str] = []
    signals: list[dict[str, float]] = []
    firsts: list[Document] = []
    values: list[Any] = []
    index: dict[str, int] = {}
    foreign: list[int] = []
    names = _VALID_NAMES
    stamps = _STAMPS
    for doc in docs:
        state = doc.__dict__
        doc_id = state.get("id")
        if not (plain_ids and doc_id):
            doc_id = mapping.doc_id(doc)
        metadata = doc.metadata
        ns = metadata.get(METADATA_KEY)
        if ns is None:
            raw: Any = {}
        else:
            if type(ns) is not dict and not isinstance(ns, Mapping):
                raise InvalidInput(f"metadata[{METADATA_KEY!r}] must be a mapping, got {type(ns).__name__}")
            raw = ns.get("signals", {})
            if type(raw) is not dict and not isinstance(raw, Mapping):
                raise InvalidInput(f"document {doc_id!r}: metadata[{METADATA_KEY!r}]['signals'] must be a mapping")
        own: dict[str, float] | None = None
        if type(raw) is dict:
            for name, v in raw.items():
                if type(v) is not float or not 0.0 <= v <= 1.0 or name not in names:
                    break
            else:
                own = raw.copy()
        if own is None:
            own = {name: check_signal(name, v) for name, v in raw.items()}
            if len(names) < 4096:
                names.update(n for n in own if type(n) is str)
        k = index.get(doc_id)
        if k is not None:
            merged = signals[k]
            if not merged:
                signals[k] = own
                continue
            for name, value in own.items():
                merged[name] = max(value, merged.get(name, value))
            continue
        index[doc_id] = len(ids)
        if not raw:
            foreign.append(len(ids))
        ids.append(doc_id)
        signals.append(own)
        firsts.append(doc)
    n = len(foreign)
    if n:
        check_signal(RETRIEVAL_SIGNAL, 0.0)  # the name; rank values are in (0, 1] by construction
    for rank, k in enumerate(foreign):
        own = signals[k]
        own[RETRIEVAL_SIGNAL] = max((n - rank) / n, own.get(RETRIEVAL_SIGNAL, 0.0))
    # What to_graphfuse checks for each id's first document (after all signals, as to_candidates does):
    # the id and content, and both timestamps.
    valid_ids = _VALID_IDS
    # The timestamps read, kept for the next runnable (owned_input: unchanged values need no parsing again).
    raws_created: list[Any] = []
    all_created: list[datetime | None] = []
    raws_updated: list[Any] = []
    all_updated: list[datetime | None] = []
    for doc_id, doc in zip(ids, firsts, strict=True):
        metadata = doc.metadata
        if type(doc.page_content) is not str or (
            doc_id not in valid_ids and (type(doc_id) is not str or not doc_id.strip() or len(doc_id) > 512)
        ):
            to_graphfuse(doc_id, doc, mapping)  # raises, naming the problem
        if doc_id not in valid_ids and len(valid_ids) < _MAX_STAMPS:
            valid_ids.add(doc_id)
        created = None
        raw_created = None if created_key is None else metadata.get(created_key)
        if raw_created is not None:
            created = stamps.get(raw_created) if type(raw_created) is str else None
            if created is None:
                created = _parsed_stamp(doc_id, created_key, raw_created)  # type: ignore[arg-type]
        updated = None
        raw_updated = None if updated_key is None else metadata.get(updated_key)
        if raw_updated is not None:
            updated = stamps.get(raw_updated) if type(raw_updated) is str else None
            if updated is None:
                updated = _parsed_stamp(doc_id, updated_key, raw_updated)  # type: ignore[arg-type]
        raws_created.append(raw_created)
        all_created.append(created)
        raws_updated.append(raw_updated)
        all_updated.append(updated)
        if field is None:
            continue
        if field == "created_at":
            values.append(created)
        elif field == "updated_at":
            values.append(updated)
        elif field == "id":
            values.append(doc_id)
        elif raw_metadata:
            values.append(metadata)
        else:  # the stage reads our namespace key, which a converted document never holds
            values.append({key: v for key, v in metadata.items() if key != METADATA_KEY})
    read = Stamps(
        None if created_key is None else raws_created,
        all_created,
        None if updated_key is None else raws_updated,
        all_updated,
    )
    return Records(ids, signals, firsts, values, read)


def _read_plain(
    docs: Sequence[Document], created_key: str | None, updated_key: str | None, field: str | None, raw_metadata: bool
) -> Records | None:
    """:func:`read_records` in one pass for what most retrievers return: documents without GraphFuse signals,
    each with its own valid ``Document.id``, str contents and readable timestamps. The same records; ``None``
    at the first document that is not like that (the general reading then gives the records, or the error)."""
    ids: list[str] = []
    firsts: list[Document] = []
    values: list[Any] = []
    raws_created: list[Any] = []
    all_created: list[datetime | None] = []
    raws_updated: list[Any] = []
    all_updated: list[datetime | None] = []
    valid_ids = _VALID_IDS
    stamps = _STAMPS
    for doc in docs:
        doc_id = doc.__dict__.get("id")
        metadata = doc.metadata
        if (
            not doc_id
            or metadata.get(METADATA_KEY) is not None
            or type(doc.page_content) is not str
            or (doc_id not in valid_ids and (type(doc_id) is not str or not doc_id.strip() or len(doc_id) > 512))
        ):
            return None
        created = None
        raw_created = None if created_key is None else metadata.get(created_key)
        if raw_created is not None:
            created = stamps.get(raw_created) if type(raw_created) is str else None
            if created is None:
                try:
                    created = _parsed_stamp(doc_id, created_key, raw_created)  # type: ignore[arg-type]
                except InvalidInput:
                    return None  # the general reading raises it, in its order
        updated = None
        raw_updated = None if updated_key is None else metadata.get(updated_key)
        if raw_updated is not None:
            updated = stamps.get(raw_updated) if type(raw_updated) is str else None
            if updated is None:
                try:
                    updated = _parsed_stamp(doc_id, updated_key, raw_updated)  # type: ignore[arg-type]
                except InvalidInput:
                    return None  # the general reading raises it, in its order
        ids.append(doc_id)
        firsts.append(doc)
        raws_created.append(raw_created)
        all_created.append(created)
        raws_updated.append(raw_updated)
        all_updated.append(updated)
        if field is None:
            continue
        if field == "created_at":
            values.append(created)
        elif field == "updated_at":
            values.append(updated)
        elif field == "id":
            values.append(doc_id)
        elif raw_metadata:
            values.append(metadata)
        else:  # the stage reads our namespace key, which a converted document never holds
            values.append({key: v for key, v in metadata.items() if key != METADATA_KEY})
    n = len(ids)
    if len(set(ids)) != n:  # an id listed twice: its signals merge
        return None
    if n:
        check_signal(RETRIEVAL_SIGNAL, 0.0)  # the name; rank values are in (0, 1] by construction
        if len(valid_ids) < _MAX_STAMPS:
            valid_ids.update(ids)
    read = Stamps(
        None if created_key is None else raws_created,
        all_created,
        None if updated_key is None else raws_updated,
        all_updated,
    )
    # Every document is from elsewhere: its rank gives its retrieval signal, (n - rank) / n.
    signals = [{RETRIEVAL_SIGNAL: (n - rank) / n} for rank in range(n)]
    return Records(ids, signals, firsts, values, read)


def record_documents(
    records: Records,
    order: Sequence[int] | None = None,
    *,
    query: str | None,
    filter: MetadataFilter | None,
    scores: Sequence[float] | None = None,
    contributions: Sequence[Mapping[str, float]] | None = None,
    mapping: DocumentMapping | None = None,
    fresh_contributions: bool = False,
) -> list[Document]:
    """The first document of each record (``order``: which records, in which order; default all),
    copied with its signals (taken over, not copied), and ``scores[i]``/``contributions[i]`` for the
    i-th output: what :func:`to_documents` returns for candidates with those ids and signals.

    With ``mapping``, the copies are GraphFuse's own: the list returned remembers them, so that the next
    GraphFuse runnable given that list updates them in place (:func:`owned_input`). ``fresh_contributions``:
    each ``contributions[i]`` is a new dict nobody else holds, so it is taken instead of copied."""
    namespaces: list[dict[str, Any]] = []
    out: list[Document] = []
    all_signals = records.signals
    firsts = records.firsts
    new = object.__new__
    set_dict, set_fields, set_extra, set_private = _set_dict, _set_fields, _set_extra, _set_private
    if order is None and scores is None and filter is None:  # a signal stage's common case
        namespaces = (
            [{"signals": own} for own in all_signals]
            if query is None
            else [{"query": query, "signals": own} for own in all_signals]
        )
        for written, original in zip(namespaces, firsts, strict=True):
            metadata = original.metadata.copy()
            metadata[METADATA_KEY] = written
            if type(original) is not Document or original.__pydantic_extra__ or original.__pydantic_private__:
                out.append(_with_metadata(original, metadata))
                continue
            # _with_metadata, inline (this runs per document per step).
            state = original.__dict__.copy()
            state["metadata"] = metadata
            doc = new(Document)
            set_dict(doc, state)
            set_fields(doc, original.__pydantic_fields_set__ | _METADATA)  # a new set, with "metadata"
            set_extra(doc, None)
            set_private(doc, None)
            out.append(doc)
        if mapping is None or not out:
            return out
        return _remember_owned(out, namespaces, all_signals, records.ids, mapping, query, filter, records.stamps)
    for i, k in enumerate(range(len(firsts)) if order is None else order):
        ns: dict[str, Any]
        if query is None and filter is None:
            ns = {"signals": all_signals[k]}
        else:
            ns = {}
            if query is not None:
                ns["query"] = query
            if filter is not None:
                ns["filter"] = filter.to_dict()
            ns["signals"] = all_signals[k]
        if scores is not None:
            ns["score"] = scores[i]
            ns["contributions"] = (
                {} if contributions is None else (contributions[i] if fresh_contributions else dict(contributions[i]))  # type: ignore[misc]
            )
        namespaces.append(ns)
        original = firsts[k]
        metadata = original.metadata.copy()
        metadata[METADATA_KEY] = ns
        if type(original) is not Document or original.__pydantic_extra__ or original.__pydantic_private__:
            out.append(_with_metadata(original, metadata))
            continue
        # _with_metadata, inline (this runs per document per step).
        state = original.__dict__.copy()
        state["metadata"] = metadata
        doc = new(Document)
        set_dict(doc, state)
        fields_set = original.__pydantic_fields_set__
        set_fields(doc, fields_set.copy() if "metadata" in fields_set else fields_set | _METADATA)
        set_extra(doc, None)
        set_private(doc, None)
        out.append(doc)
    if mapping is None or not out:
        return out
    stamps = records.stamps
    if order is None:
        return _remember_owned(out, namespaces, all_signals, records.ids, mapping, query, filter, stamps)
    ids = records.ids
    return _remember_owned(
        out,
        namespaces,
        [all_signals[k] for k in order],
        [ids[k] for k in order],
        mapping,
        query,
        filter,
        None if stamps is None else stamps.pick(order),
    )


_METADATA = frozenset({"metadata"})


# Ownership. The documents a GraphFuse runnable made (copies carrying metadata["graphfuse"]) and returned are
# GraphFuse's own: the next GraphFuse runnable that gets that very list (as a chain passes it) updates them
# in place (their metadata["graphfuse"]) instead of copying them again, and takes what it needs from what
# the previous runnable read, after checking in one pass over the list that nothing it read changed: the
# same documents in the same order, each still holding the namespace dict and signals dict the runnable
# wrote with the same values, the same id objects, str contents, and the same timestamp objects it parsed
# before. Anything else (documents from any other retriever, a copy or a slice of the list, an edited
# document) is read and copied as before; documents GraphFuse did not make are never mutated. What the
# runnable knew travels with the list it returned (an _OwnedDocuments list), so it lives exactly as long as
# that list.


class _Batch(NamedTuple):
    mapping: DocumentMapping
    docs: list[Document]  # the runnable's output (the caller gets a copy of the list)
    namespaces: list[dict[str, Any]]  # metadata["graphfuse"] of each
    namespace_snapshots: list[dict[str, Any]]  # a copy of it (signals compared separately)
    signals: list[dict[str, float]]  # its "signals" dict
    snapshots: list[dict[str, float]]  # a copy of it
    ids: list[str]
    query: str | None
    filter: MetadataFilter | None
    # The timestamp values read from each document's metadata (compared by identity: the same object parses
    # to the same time) and what they parsed to; for a timestamp key that is the graphfuse key (never read),
    # the namespaces stand in for the raw values (they are checked anyway).
    raw_created: list[Any]
    created: list[datetime | None]
    raw_updated: list[Any]
    updated: list[datetime | None]


class _OwnedDocuments(list):  # type: ignore[type-arg]
    """The list a GraphFuse runnable returns: a ``list`` of documents that also carries what the runnable
    knew about them, for the next runnable. Copies, slices and pickles are plain lists."""

    __slots__ = ("batch",)
    batch: _Batch

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return (list, (list(self),))


class Owned(NamedTuple):
    """A runnable's input that is the unchanged output of a GraphFuse runnable (:func:`owned_input`)."""

    query: str | None
    filter: MetadataFilter | None
    docs: list[Document]
    batch: _Batch
    metadata: list[dict[str, Any]]


def owned_input(value: object, mapping: DocumentMapping) -> Owned | None:
    """``value`` as GraphFuse's own documents, when it is the list a GraphFuse runnable returned (with the same
    mapping) and nothing the runnable wrote or read changed since; else ``None``."""
    if type(value) is not _OwnedDocuments or mapping.id_key is not None:  # ids read from metadata: read afresh
        return None
    batch = value.batch
    docs = batch.docs
    if batch.mapping is not mapping or len(value) != len(docs):
        return None
    created_key, updated_key = mapping.created_at_key, mapping.updated_at_key
    metadata: list[dict[str, Any]] = []
    keep = metadata.append
    # One pass over the documents for what is checked by identity (the same objects as the runnable left)...
    for doc, given, namespace, own, doc_id, raw_created, raw_updated in zip(
        docs, value, batch.namespaces, batch.signals, batch.ids, batch.raw_created, batch.raw_updated, strict=True
    ):
        state = doc.__dict__
        meta = state.get("metadata")
        if (
            doc is not given
            or (ns := meta.get(METADATA_KEY)) is not namespace
            or ns.get("signals") is not own
            or state.get("id") is not doc_id
            or type(state.get("page_content")) is not str
            or meta.get(created_key) is not raw_created
            or meta.get(updated_key) is not raw_updated
        ):
            return None
        keep(meta)
    # ... then the namespace and signal dicts (the very ones written) against their copies, by value, in C.
    if batch.namespaces != batch.namespace_snapshots or batch.signals != batch.snapshots:
        return None
    return Owned(batch.query, batch.filter, list(docs), batch, metadata)


def owned_records(owned: Owned, mapping: DocumentMapping, signal_input: SignalInput | None = None) -> Records | None:
    """What :func:`read_records` gives for GraphFuse's own documents, from what the runnable that made them
    read (:func:`owned_input` checked that it still holds)."""
    batch = owned.batch
    field = signal_input.field if signal_input is not None else None
    values: list[Any]
    if field is None:
        values = []
    elif field == "id":
        values = list(batch.ids)
    elif field == "created_at":
        values = list(batch.created)
    elif field == "updated_at":
        values = list(batch.updated)
    elif signal_input is not None and signal_input.key != METADATA_KEY:
        values = owned.metadata
    else:
        return None
    created_read = mapping.created_at_key != METADATA_KEY
    updated_read = mapping.updated_at_key != METADATA_KEY
    stamps = Stamps(
        batch.raw_created if created_read else None,
        batch.created,
        batch.raw_updated if updated_read else None,
        batch.updated,
    )
    # The signals are the batch's private copies: they are taken over (the documents get new namespaces, so
    # the list they came in is no longer seen as unchanged).
    return Records(list(batch.ids), batch.snapshots, owned.docs, values, stamps)


def _remember_owned(
    out: list[Document],
    namespaces: list[dict[str, Any]],
    signals: list[dict[str, float]],
    ids: list[str],
    mapping: DocumentMapping,
    query: str | None,
    filter: MetadataFilter | None,
    stamps: Stamps | None,
) -> list[Document]:
    if stamps is None:  # what was read is not known: the next runnable reads the documents afresh
        return out
    owned = _OwnedDocuments(out)
    owned.batch = _Batch(
        mapping,
        out,
        namespaces,
        list(map(dict.copy, namespaces)),
        signals,
        list(map(dict.copy, signals)),
        ids,
        query,
        filter,
        namespaces if stamps.raw_created is None else stamps.raw_created,
        stamps.created,
        namespaces if stamps.raw_updated is None else stamps.raw_updated,
        stamps.updated,
    )
    return owned


def owned_documents(
    owned: Owned,
    records: Records,
    order: Sequence[int] | None = None,
    *,
    query: str | None,
    filter: MetadataFilter | None,
    scores: Sequence[float] | None = None,
    contributions: Sequence[Mapping[str, float]] | None = None,
    fresh_contributions: bool = False,
) -> list[Document]:
    """What :func:`record_documents` returns, for GraphFuse's own documents: each updated in place (a new
    ``metadata["graphfuse"]``) and returned itself (``fresh_contributions`` as for :func:`record_documents`)."""
    ids = records.ids
    all_signals = records.signals
    docs = owned.docs
    metadata = owned.metadata
    mapping = owned.batch.mapping
    stamps = records.stamps
    namespaces_made: list[dict[str, Any]]
    if order is None and scores is None and filter is None:  # a signal stage's common case, in passes
        namespaces_made = (
            [{"signals": own} for own in all_signals]
            if query is None
            else [{"query": query, "signals": own} for own in all_signals]
        )
        list(map(setitem, metadata, repeat(METADATA_KEY), namespaces_made))
        return _remember_owned(list(docs), namespaces_made, all_signals, ids, mapping, query, filter, stamps)
    picked_stamps = None if stamps is None or order is None else stamps.pick(order)
    if order is not None and scores is not None and filter is None:  # fusion's common case, in passes
        take = picker(order)
        picked = take(all_signals)
        shares = (
            [{} for _ in order]
            if contributions is None
            else (contributions if fresh_contributions else list(map(dict, contributions)))
        )
        namespaces_made = (
            [
                {"signals": own, "score": score, "contributions": parts}
                for own, score, parts in zip(picked, scores, shares, strict=True)
            ]
            if query is None
            else [
                {"query": query, "signals": own, "score": score, "contributions": parts}
                for own, score, parts in zip(picked, scores, shares, strict=True)
            ]
        )
        list(map(setitem, take(metadata), repeat(METADATA_KEY), namespaces_made))
        return _remember_owned(
            take(docs),
            namespaces_made,
            picked,
            take(ids),
            mapping,
            query,
            filter,
            picked_stamps,
        )
    out: list[Document] = []
    namespaces: list[dict[str, Any]] = []
    signals: list[dict[str, float]] = []
    out_ids: list[str] = []
    for i, k in enumerate(range(len(docs)) if order is None else order):
        own = all_signals[k]
        ns: dict[str, Any]
        if query is None and filter is None:
            ns = {"signals": own}
        else:
            ns = {}
            if query is not None:
                ns["query"] = query
            if filter is not None:
                ns["filter"] = filter.to_dict()
            ns["signals"] = own
        if scores is not None:
            ns["score"] = scores[i]
            ns["contributions"] = (
                {} if contributions is None else (contributions[i] if fresh_contributions else dict(contributions[i]))  # type: ignore[misc]
            )
        metadata[k][METADATA_KEY] = ns
        out.append(docs[k])
        namespaces.append(ns)
        signals.append(own)
        out_ids.append(ids[k])
    return _remember_owned(
        out, namespaces, signals, out_ids, mapping, query, filter, stamps if order is None else picked_stamps
    )
