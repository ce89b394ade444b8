"""The data model: documents, candidates, results, queries, relations and vector records."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Literal

from ._encoding import check_numbers, check_text
from ._errors import InvalidInput
from ._filters import FilterLike, MetadataFilter

__all__ = [
    "CHUNKS_KEY",
    "ENTITY_PREFIX",
    "KIND_KEY",
    "RELATED_TO",
    "STATE_KEY",
    "Candidate",
    "Document",
    "Generation",
    "Mention",
    "Query",
    "RelatedDocument",
    "Relation",
    "Result",
    "UsageSource",
    "VectorHit",
    "VectorRecord",
    "check_id",
    "check_signal",
]

ENTITY_PREFIX = "graphfuse:entity:"
"""Ids of entity nodes (``Indexer(entity_graph=True)``) are this prefix and the entity key."""

KIND_KEY = "graphfuse_kind"
"""The metadata key the indexer marks every stored node's kind under: ``"document"``, ``"chunk"`` or ``"entity"``."""

CHUNKS_KEY = "graphfuse_chunks"
"""The metadata key of a page the indexer split: how many chunks it has (ids ``<page id>#<i>``)."""

STATE_KEY = "graphfuse_state"
"""The metadata key of a node's indexing state: ``"pending"`` while its writes are under way, then ``"indexed"``."""

RELATED_TO = "RELATED_TO"
"""Relation type between entity nodes an LLM related (metadata ``relation_type``, ``confidence``, ``context``)."""

_RELATION_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_SIGNAL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


def check_id(value: object, what: str = "document id") -> str:
    """Return ``value`` if it is a usable id (a non-empty string of at most 512 characters)."""
    if not isinstance(value, str) or not value.strip() or len(value) > 512:
        raise InvalidInput(f"{what} must be a non-empty string of at most 512 characters, got {value!r}")
    return check_text(value, what)


_VALID_SIGNAL_NAMES: set[str] = set()


def check_signal(name: str, value: float) -> float:
    """Validate a signal: a known-shaped name and a finite float in [0, 1]."""
    if name not in _VALID_SIGNAL_NAMES:
        if not isinstance(name, str) or not _SIGNAL_NAME.match(name):
            raise InvalidInput(f"signal name {name!r} is not valid")
        if len(_VALID_SIGNAL_NAMES) < 4096:  # bounded: names are a small vocabulary in practice
            _VALID_SIGNAL_NAMES.add(name)
    if type(value) is float and 0.0 <= value <= 1.0:  # the common case; NaN fails the range test
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"signal {name!r} must be a float, got {type(value).__name__}")
    v = float(value)
    if not math.isfinite(v) or v < 0.0 or v > 1.0:
        raise InvalidInput(f"signal {name!r} must be in [0, 1], got {value!r}")
    return v


def _utc(value: datetime | None, what: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime, got {type(value).__name__}")
    # Naive datetimes are taken as UTC (documented in docs/concepts.md).
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


@dataclass(frozen=True, slots=True)
class Document:
    """A stored document.

    ``content`` is ``None`` when only the id is known (for example straight after vector
    search, before the hydrate stage). Naive timestamps are taken as UTC. A metadata number no
    store keeps (NaN, infinity, an integer beyond 64 bits), at any depth, raises
    :class:`~graphfuse.InvalidInput` naming the document and the key.
    """

    id: str
    content: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    updated_at: datetime | None = None

    def __post_init__(self) -> None:
        check_id(self.id)
        if self.content is not None and not isinstance(self.content, str):
            raise InvalidInput(f"document {self.id!r}: content must be a string or None")
        if not isinstance(self.metadata, Mapping):
            raise InvalidInput(f"document {self.id!r}: metadata must be a mapping")
        if self.metadata:
            check_numbers(self.metadata, f"document {self.id!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        object.__setattr__(self, "created_at", _utc(self.created_at, f"document {self.id!r} created_at"))
        object.__setattr__(self, "updated_at", _utc(self.updated_at, f"document {self.id!r} updated_at"))

    @classmethod
    def trusted(
        cls,
        id: str,
        content: str | None,
        metadata: dict[str, Any],
        created_at: datetime | None = None,
        updated_at: datetime | None = None,
    ) -> Document:
        """A document built without re-validation, for hosts that validated the parts once already.

        The caller guarantees what ``Document(...)`` would check: ``id`` a valid id
        (:func:`graphfuse.validation.check_id`), ``content`` a ``str`` or ``None``, ``metadata`` a
        fresh ``dict`` nobody else holds (it is wrapped read-only, not copied), timestamps UTC
        (:func:`graphfuse.parse_timestamp` returns them so). Integrations convert every node
        of every call: this keeps that cost to one allocation.
        """
        doc = object.__new__(cls)
        _set = object.__setattr__
        _set(doc, "id", id)
        _set(doc, "content", content)
        _set(doc, "metadata", MappingProxyType(metadata))
        _set(doc, "created_at", created_at)
        _set(doc, "updated_at", updated_at)
        return doc

    @property
    def is_hydrated(self) -> bool:
        """True when the content is loaded."""
        return self.content is not None


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document travelling through a pipeline with its named signals, each in [0, 1]."""

    document: Document
    signals: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.document, Document):
            raise InvalidInput(f"candidate document must be a Document, got {type(self.document).__name__}")
        checked = {name: check_signal(name, v) for name, v in self.signals.items()}
        object.__setattr__(self, "signals", MappingProxyType(checked))

    @property
    def id(self) -> str:
        """The document id."""
        return self.document.id

    @classmethod
    def trusted(cls, document: Document, signals: dict[str, float]) -> Candidate:
        """A candidate built without re-validation: ``signals`` already checked
        (:func:`graphfuse.validation.check_signal`) and a fresh ``dict`` nobody else holds."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "document", document)
        object.__setattr__(obj, "signals", MappingProxyType(signals))
        return obj

    def with_signal(self, name: str, value: float) -> Candidate:
        """A copy with ``name`` set to ``value``."""
        return Candidate.trusted(self.document, {**self.signals, name: check_signal(name, value)})

    def with_signals(self, values: Mapping[str, float]) -> Candidate:
        """A copy with several signals set."""
        new = {name: check_signal(name, v) for name, v in values.items()}
        return Candidate.trusted(self.document, {**self.signals, **new})

    def with_document(self, document: Document) -> Candidate:
        """A copy carrying ``document`` (same id) and the same signals."""
        if not isinstance(document, Document):
            raise InvalidInput(f"candidate document must be a Document, got {type(document).__name__}")
        if document.id != self.document.id:
            raise InvalidInput(f"cannot replace document {self.document.id!r} with {document.id!r}")
        return Candidate.trusted(document, dict(self.signals))


@dataclass(frozen=True, slots=True)
class Result:
    """A ranked result: the document, its final score, its signals and each signal's share."""

    document: Document
    score: float
    signals: Mapping[str, float]
    contributions: Mapping[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The result's own id: a passage's (``<document>#<n>`` for a chunk) or a document's."""
        return self.document.id

    @property
    def document_id(self) -> str:
        """The id of the document this result belongs to: a chunk's ``parent_id``, else :attr:`id`."""
        parent = self.document.metadata.get("parent_id")
        return parent if isinstance(parent, str) and parent else self.document.id

    @property
    def document_title(self) -> str | None:
        """The title of that document (metadata ``title``, which the indexer copies onto chunks), or ``None``."""
        title = self.document.metadata.get("title")
        return title if isinstance(title, str) and title.strip() else None


@dataclass(frozen=True, slots=True)
class Query:
    """A query: text, an optional metadata filter, and per-call stage options.

    ``options`` maps a stage name to keyword options for that stage on this call only,
    e.g. ``{"semantic": {"limit": 20}, "graph": {"depth": 1}}``.
    """

    text: str
    filter: MetadataFilter | None = None
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidInput("query text must be a non-empty string")
        check_text(self.text, "query text")
        object.__setattr__(self, "filter", MetadataFilter.parse(self.filter))
        if not isinstance(self.options, Mapping):
            raise InvalidInput("query options must be a mapping of stage name to options")
        for stage, opts in self.options.items():
            if not isinstance(opts, Mapping):
                raise InvalidInput(f"query options for stage {stage!r} must be a mapping")
        object.__setattr__(
            self, "options", MappingProxyType({k: MappingProxyType(dict(v)) for k, v in self.options.items()})
        )

    @classmethod
    def of(
        cls,
        query: str | Query,
        *,
        filter: FilterLike | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Query:
        """Build a query from text, or refine an existing one (filters ANDed, options merged by stage)."""
        if isinstance(query, Query):
            if filter is None and not options:
                return query
            merged = {**query.options, **(options or {})}
            extra = MetadataFilter.parse(filter)
            # Refining narrows: the new filter is ANDed with the query's own (a tenant filter set
            # by an integration must survive a per-call filter).
            if extra is not None and query.filter is not None:
                extra = MetadataFilter(query.filter.conditions + extra.conditions)
            return Query(query.text, extra or query.filter, merged)
        return Query(query, MetadataFilter.parse(filter), dict(options or {}))

    def option(self, stage: str, name: str, default: Any) -> Any:
        """The per-call option ``name`` for ``stage``, or ``default``."""
        return self.options.get(stage, {}).get(name, default)


@dataclass(frozen=True, slots=True)
class Relation:
    """A typed, directed relation between two documents (traversed in both directions)."""

    source: str
    target: str
    type: str = "RELATED"
    weight: float = 1.0
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_id(self.source, "relation source")
        check_id(self.target, "relation target")
        if not isinstance(self.type, str) or not _RELATION_TYPE.match(self.type):
            raise InvalidInput(
                f"relation type {self.type!r} is not valid: letters, digits and '_', "
                "starting with a letter or '_', at most 64 characters"
            )
        if (
            isinstance(self.weight, bool)
            or not isinstance(self.weight, (int, float))
            or not (math.isfinite(self.weight) and self.weight > 0)
        ):
            raise InvalidInput(f"relation weight must be a positive finite number, got {self.weight!r}")
        if not isinstance(self.metadata, Mapping):
            raise InvalidInput(f"relation {self.source!r} -[{self.type}]-> {self.target!r}: metadata must be a mapping")
        if self.metadata:
            check_numbers(self.metadata, f"relation {self.source!r} -[{self.type}]-> {self.target!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))


@dataclass(frozen=True, slots=True)
class RelatedDocument:
    """A document reached by graph traversal: its id, hop distance and the seed it came from."""

    id: str
    distance: int
    seed: str


@dataclass(frozen=True, slots=True)
class VectorRecord:
    """A vector to store, with the metadata filters run against.

    A metadata number no store keeps (NaN, infinity, an integer beyond 64 bits) raises
    :class:`~graphfuse.InvalidInput` naming the id and the key; vector stores check the vector
    itself (finite, of their dimension) when it is written.
    """

    id: str
    vector: Sequence[float]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_id(self.id, "vector id")
        if not isinstance(self.metadata, Mapping):
            raise InvalidInput(f"vector {self.id!r}: metadata must be a mapping")
        if self.metadata:
            check_numbers(self.metadata, f"vector {self.id!r}")


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A vector search hit: the id and its cosine similarity in [-1, 1].

    The semantic stage turns it into the ``semantic`` signal as ``max(0, score)``.
    """

    id: str
    score: float


UsageSource = Literal["provider", "counted"]
"""Where a generation's token counts come from: the provider's own usage report, or counted locally."""


@dataclass(frozen=True)
class Generation:
    """One completion: the text, its token usage and how long it took.

    ``usage_source`` says where the token numbers come from: ``"provider"`` (the API reported
    them) or ``"counted"`` (GraphFuse counted them with a tokenizer, because the provider did
    not). ``latency_s`` is the wall time of the call, retries included.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    usage_source: UsageSource
    latency_s: float

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidInput(f"Generation.text must be a string, got {type(self.text).__name__}")
        for name in ("prompt_tokens", "completion_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidInput(f"Generation.{name} must be an int >= 0, got {value!r}")
        if self.usage_source not in ("provider", "counted"):
            raise InvalidInput(f"Generation.usage_source must be 'provider' or 'counted', got {self.usage_source!r}")
        latency = self.latency_s
        if isinstance(latency, bool) or not isinstance(latency, (int, float)) or not math.isfinite(latency):
            raise InvalidInput(f"Generation.latency_s must be a finite number, got {latency!r}")
        if latency < 0:
            raise InvalidInput(f"Generation.latency_s must be >= 0, got {latency!r}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "usage_source": self.usage_source,
            "latency_s": self.latency_s,
        }


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity mentioned in a text.

    ``entity`` is the normalised entity key (passages sharing one are co-mentions);
    ``start``/``end`` the character span in the text (``-1`` when the extractor cannot say);
    ``targets`` the ids of documents *about* the entity (a ``MENTIONS`` relation goes to each).
    """

    entity: str
    start: int = -1
    end: int = -1
    targets: tuple[str, ...] = ()
