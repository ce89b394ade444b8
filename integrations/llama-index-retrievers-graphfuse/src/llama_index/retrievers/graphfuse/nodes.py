"""Conversion between LlamaIndex nodes and GraphFuse candidates: the one place it happens.

This module is public: ``llama-index-postprocessor-graphfuse`` and any third-party LlamaIndex
component built on GraphFuse use it to turn ``NodeWithScore`` lists into GraphFuse
:class:`~graphfuse.Candidate` objects (:func:`to_candidates`), run GraphFuse code on them, and
map the output back onto the nodes (:func:`from_candidates`), copy-on-write; :class:`Expansion`
is the graph expansion of nodes shared by ``GraphExpansionRetriever`` and
``GraphExpansionPostprocessor``.

A node's GraphFuse identity and data come from the node itself:

- graph id: ``node.metadata[id_key]`` when ``id_key`` is set, else ``node.ref_doc_id`` when
  the node has a source document, else ``node.node_id``;
- content: ``node.get_content(MetadataMode.NONE)``;
- ``created_at`` / ``updated_at``: ``node.metadata[<key>]`` as a ``datetime``, an ISO 8601
  string or a POSIX timestamp (naive values are UTC);
- signals: ``node.metadata[signals_key]`` (a ``{name: float}`` mapping GraphFuse writes; the
  key is added to the node's excluded embed and LLM metadata keys, so signals never reach an
  embedding model or an LLM prompt).

Nodes GraphFuse builds for its documents (:class:`GraphFuseNode`, a ``TextNode``) carry the
document id as ``id_``, the parent document as ``ref_doc_id`` (the document itself when it was
not split into chunks), the user metadata (GraphFuse's internal ``graphfuse_*`` bookkeeping
keys never leave the store) and the signals under ``signals_key``. Their ``hash`` (what
LlamaIndex de-duplicates by, e.g. in ``QueryFusionRetriever``) is computed like a
``TextNode``'s over the text and the user metadata only, so the same passage from GraphFuse and
from a plain vector index is one node.

The first time GraphFuse sees a node (no signals under ``signals_key`` yet) its retriever
score becomes the ``score_signal`` signal (``semantic`` by default). A score of 0.0 stays
0.0; a negative score (cosine below zero) becomes 0.0, as in the semantic stage; a score
above 1 is refused, since a signal lives in [0, 1].

Stages that only set one signal from one part of each document (a :class:`graphfuse.SignalStage`:
temporal decay, access popularity, PageRank) and the built-in scorers (a
:class:`graphfuse.SignalScorer`) run on the nodes without candidates: :func:`read_records` reads
each distinct graph id's signals and the one value the stage needs, :func:`apply_signal_stage`
and :func:`fuse_nodes` give the same nodes, signals and order as converting to candidates,
running the stage or scorer, and mapping back with :func:`from_candidates`.

Ownership: nodes from anywhere else are never mutated (a step returns copies carrying the new
signals). The nodes a GraphFuse step made and returned are GraphFuse's own: when the list that
step returned is passed, as it was returned, to :func:`apply_signal_stage` or :func:`fuse_nodes`
(what the postprocessors run), those nodes are updated in place (their signals and, in fusion,
their ``NodeWithScore.score``) and come back themselves instead of as new copies. So the earlier
list sees the update: passing one returned list to two GraphFuse steps gives the second step's
signals to both. A copy of the list (``list(nodes)``, a slice, ``copy.copy``) is a plain list:
its nodes are copied as before. A node whose signals were edited since the step wrote them is
read and copied like any other; other edits (timestamps, text, id, excluded keys) are read afresh.
The results (ids, order, scores, signals, metadata) are those of copying.
"""

from __future__ import annotations

import math
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from itertools import repeat
from operator import attrgetter, contains, is_, itemgetter, methodcaller, neg, setitem
from typing import Any, NamedTuple, cast

from llama_index.core.bridge.pydantic import BaseModel, PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from graphfuse import (
    Candidate,
    Document,
    FilterLike,
    GraphStore,
    InvalidInput,
    MetadataFilter,
    NotFound,
    Query,
    Result,
    SignalInput,
    SignalScorer,
    SignalStage,
    parse_timestamp,
    run_signal_stage,
)
from graphfuse.validation import (
    check_choice,
    check_id,
    check_positive_int,
    check_relation_types,
    check_signal,
    check_unit,
)

__all__ = [
    "CONTRIBUTIONS_KEY",
    "INTERNAL_PREFIX",
    "PARENT_KEY",
    "SIGNALS_KEY",
    "UNKNOWN_CHOICES",
    "Converted",
    "Expansion",
    "GraphFuseNode",
    "NodeRecords",
    "user_metadata",
    "NodeMapping",
    "apply_signal_stage",
    "from_candidates",
    "fuse_nodes",
    "graph_id",
    "node_from_document",
    "node_from_result",
    "node_with_signals",
    "parse_timestamp",
    "carries_signals",
    "read_records",
    "score_as_signal",
    "scored",
    "to_candidates",
    "with_record_signals",
]

SIGNALS_KEY = "graphfuse_signals"
CONTRIBUTIONS_KEY = "graphfuse_contributions"
INTERNAL_PREFIX = "graphfuse_"
"""Metadata keys starting with this are GraphFuse's own (indexer bookkeeping): never copied onto nodes."""
PARENT_KEY = "parent_id"
"""Metadata key naming the document a chunk belongs to (what the GraphFuse indexer writes)."""


def user_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` without GraphFuse's internal keys (those starting with ``graphfuse_``)."""
    return {k: v for k, v in metadata.items() if not (isinstance(k, str) and k.startswith(INTERNAL_PREFIX))}


class GraphFuseNode(TextNode):
    """A ``TextNode`` for a GraphFuse document.

    Its ``hash`` leaves out the metadata keys GraphFuse adds (signals, contributions), so the
    same text with the same user metadata hashes the same whether it came from GraphFuse or
    from any other LlamaIndex retriever; its graph id is its ``id_`` (a chunk keeps its own id,
    while ``ref_doc_id`` names its parent document).
    """

    _graphfuse_keys: frozenset[str] = PrivateAttr(default=frozenset({SIGNALS_KEY, CONTRIBUTIONS_KEY}))

    @property
    def hash(self) -> str:
        shown = {k: v for k, v in self.metadata.items() if k not in self._graphfuse_keys}
        return str(sha256((str(self.text) + str(shown)).encode("utf-8", "surrogatepass")).hexdigest())


@dataclass(frozen=True)
class NodeMapping:
    """Where GraphFuse reads and writes its data on a node (see the module docstring)."""

    id_key: str | None = None
    signals_key: str = SIGNALS_KEY
    score_signal: str | None = "semantic"
    created_at_key: str = "created_at"
    updated_at_key: str = "updated_at"

    def __post_init__(self) -> None:
        if self.id_key is not None and (not isinstance(self.id_key, str) or not self.id_key):
            raise InvalidInput(f"id_key must be None or a non-empty string, got {self.id_key!r}")
        for what in ("signals_key", "created_at_key", "updated_at_key"):
            value = getattr(self, what)
            if not isinstance(value, str) or not value:
                raise InvalidInput(f"{what} must be a non-empty string, got {value!r}")
        if self.score_signal is not None:
            check_signal(self.score_signal, 0.0)


def graph_id(node: BaseNode, id_key: str | None) -> str:
    """The graph id of ``node`` (see the module docstring)."""
    if id_key is None and isinstance(node, GraphFuseNode):
        return check_id(node.node_id, f"node {node.node_id!r} id")
    if id_key is not None:
        if id_key not in node.metadata:
            raise InvalidInput(f"node {node.node_id!r} has no metadata key {id_key!r} (the configured id_key)")
        return check_id(node.metadata[id_key], f"node {node.node_id!r} metadata {id_key!r}")
    source = node.source_node  # what the deprecated ``ref_doc_id`` reads
    ref = source.node_id if source is not None else None
    return check_id(ref if ref is not None else node.node_id, f"node {node.node_id!r} id")


def score_as_signal(nws: NodeWithScore, name: str) -> float:
    """The node score as a signal value (see the module docstring)."""
    score = nws.score
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise InvalidInput(f"node {nws.node.node_id!r} has score {score!r}; expected a finite number")
    if score > 1.0:
        raise InvalidInput(
            f"node {nws.node.node_id!r} has score {score!r} > 1, which cannot be the {name!r} signal "
            "(signals are in [0, 1]): normalise the scores first, fuse with FusionRetriever, "
            "or set score_signal=None"
        )
    return max(0.0, float(score))


def _stored_signals(node: BaseNode, key: str) -> dict[str, float] | None:
    raw = node.metadata.get(key)
    if raw is None:
        return None
    return _signals_from(node, raw, key)


def _signals_from(node: BaseNode, raw: object, key: str) -> dict[str, float]:
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"node {node.node_id!r} metadata {key!r} must be a mapping of signals, got {raw!r}")
    checked: dict[str, float] = {}
    for name, value in raw.items():
        key = name if type(name) is str else str(name)
        checked[key] = check_signal(key, value)
    return checked


def _document(nws: NodeWithScore, doc_id: str, mapping: NodeMapping) -> Document:
    node = nws.node
    metadata = node.metadata.copy()
    metadata.pop(mapping.signals_key, None)
    # A TextNode's content without metadata is its text: read it directly (this runs for every node).
    content = cast("TextNode", node).text if type(node) in _PLAIN_TYPES else node.get_content(MetadataMode.NONE)
    created = _node_timestamp(node, metadata, mapping.created_at_key)
    updated = _node_timestamp(node, metadata, mapping.updated_at_key)
    if type(content) is not str:
        return Document(doc_id, content, metadata, created, updated)  # let Document name the problem
    # Everything Document() would check already holds (id checked by graph_id, content a str, a fresh
    # metadata dict nobody else references, UTC timestamps): the trusted constructor skips re-checking.
    return Document.trusted(doc_id, content, metadata, created, updated)


def _node_timestamp(node: BaseNode, metadata: Mapping[str, Any], key: str) -> datetime | None:
    value = metadata.get(key)
    if value is None:
        return None
    return parse_timestamp(value, f"node {node.node_id!r} {key!r}")


def node_with_signals(node: BaseNode, signals: Mapping[str, float], signals_key: str) -> BaseNode:
    """A shallow copy of ``node`` carrying ``signals`` (hidden from embed and LLM text); ``node`` is not mutated.

    Copy-on-write: the copy gets a new metadata dict; the excluded-key lists are copied only when
    the signals key must be added to them, else shared with the input node. The copy is what
    ``node.model_copy(update=...)`` returns, built without pydantic's generic copy machinery
    (postprocessors copy every node of every call).
    """
    metadata = node.metadata.copy()
    metadata[signals_key] = dict(signals)
    embed_keys: list[str] = node.excluded_embed_metadata_keys
    llm_keys: list[str] = node.excluded_llm_metadata_keys
    if signals_key not in embed_keys:
        embed_keys = [*embed_keys, signals_key]
    if signals_key not in llm_keys:
        llm_keys = [*llm_keys, signals_key]
    return _shallow_copy(node, metadata, embed_keys, llm_keys)


_set = object.__setattr__


def _slot_setter(name: str) -> Callable[[object, object], None]:
    """``object.__setattr__(obj, name, value)`` for a pydantic model's own slot, as a direct call of the slot's
    descriptor (a quarter cheaper; copies set four per object); the plain call if pydantic has no such slot."""
    descriptor = BaseModel.__dict__.get(name)
    setter = getattr(descriptor, "__set__", None)
    if setter is None:  # pragma: no cover - a pydantic without this slot

        def fallback(obj: object, value: object) -> None:
            _set(obj, name, value)

        return fallback
    return cast("Callable[[object, object], None]", setter)


_set_dict = _slot_setter("__dict__")
_set_fields = _slot_setter("__pydantic_fields_set__")
_set_extra = _slot_setter("__pydantic_extra__")
_set_private = _slot_setter("__pydantic_private__")
_COPIED_FIELDS = frozenset({"metadata", "excluded_embed_metadata_keys", "excluded_llm_metadata_keys"})


def _shallow_copy(node: BaseNode, metadata: dict[str, Any], embed_keys: list[str], llm_keys: list[str]) -> BaseNode:
    # pydantic's own shallow copy (BaseModel.__copy__), with the three fields replaced.
    copy = object.__new__(type(node))
    state = node.__dict__.copy()
    state["metadata"] = metadata
    state["excluded_embed_metadata_keys"] = embed_keys
    state["excluded_llm_metadata_keys"] = llm_keys
    _set_dict(copy, state)
    _set_fields(copy, node.__pydantic_fields_set__ | _COPIED_FIELDS)
    extra = node.__pydantic_extra__
    _set_extra(copy, None if extra is None else dict(extra))
    private = node.__pydantic_private__
    _set_private(copy, None if private is None else dict(private))
    return copy


# NodeWithScore is a plain two-field model (no private attributes, no extras): when that holds,
# scored() builds one without re-validating a node and a score that are already valid.
_PLAIN_NWS = not NodeWithScore.__private_attributes__ and NodeWithScore.model_config.get("extra") != "allow"


def scored(node: BaseNode, score: float | None) -> NodeWithScore:
    """``NodeWithScore(node=node, score=score)`` for a valid node and a float or ``None`` score, built
    without re-validating them."""
    if not _PLAIN_NWS:  # pragma: no cover - a future LlamaIndex with a richer NodeWithScore
        return NodeWithScore(node=node, score=score)
    nws = object.__new__(NodeWithScore)
    _set_dict(nws, {"node": node, "score": score})
    _set_fields(nws, {"node", "score"})
    _set_extra(nws, None)
    _set_private(nws, None)
    return nws


def carries_signals(node: BaseNode, signals: Mapping[str, float], signals_key: str) -> bool:
    """Whether ``node`` already carries exactly ``signals``, hidden from embed and LLM text."""
    return (
        node.metadata.get(signals_key) == signals
        and signals_key in node.excluded_embed_metadata_keys
        and signals_key in node.excluded_llm_metadata_keys
    )


def node_from_document(
    document: Document,
    signals: Mapping[str, float],
    score: float | None,
    mapping: NodeMapping,
    extra: Mapping[str, Any] | None = None,
) -> NodeWithScore:
    """A new :class:`GraphFuseNode` (id = document id) for a document GraphFuse found."""
    metadata = user_metadata(document.metadata)
    if document.created_at is not None:
        metadata.setdefault(mapping.created_at_key, document.created_at.isoformat())
    if document.updated_at is not None:
        metadata.setdefault(mapping.updated_at_key, document.updated_at.isoformat())
    parent = metadata.get(PARENT_KEY)
    source = parent if isinstance(parent, str) and parent else document.id
    metadata.update(extra or {})
    metadata[mapping.signals_key] = dict(signals)
    hidden = [mapping.signals_key, *(extra or {})]
    # mypy's view of TextNode's (pydantic) constructor misses the inherited fields on a subclass.
    node = GraphFuseNode(  # type: ignore[call-arg]
        id_=document.id,
        text=document.content or "",
        metadata=metadata,
        excluded_embed_metadata_keys=hidden,
        excluded_llm_metadata_keys=hidden,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
    )
    node._graphfuse_keys = frozenset(hidden)
    return NodeWithScore(node=node, score=score)


def node_from_result(result: Result, mapping: NodeMapping, score_signal: str | None = None) -> NodeWithScore:
    """A ``NodeWithScore`` for a pipeline result: signals and score contributions in excluded metadata.

    The score is the pipeline's fused score, or with ``score_signal`` that signal's value (0.0
    when the result lacks it).
    """
    score = result.score if score_signal is None else result.signals.get(score_signal, 0.0)
    return node_from_document(
        result.document,
        result.signals,
        score,
        mapping,
        {CONTRIBUTIONS_KEY: dict(result.contributions)},
    )


@dataclass(frozen=True)
class Converted:
    """Nodes turned into candidates: one candidate per graph id, and which nodes share it."""

    candidates: list[Candidate]
    groups: dict[str, list[int]]


# Nodes from_candidates made (copies carrying signals), with what to_candidates would build from
# them: the next postprocessor of a chain reuses it instead of converting the node again. Keyed by
# id(node) and cleared when the node is collected (nodes are not hashable); an entry is used only
# while the node still holds the metadata, text and source it was made with (compared by value,
# so a caller editing a returned node in place gets it converted afresh).
class _Ref(weakref.ref):  # type: ignore[type-arg]
    __slots__ = ("key",)
    key: int


def _drop(ref: _Ref) -> None:
    _MADE.pop(ref.key, None)


class _Made(NamedTuple):
    ref: _Ref
    mapping: NodeMapping
    doc_id: str
    document: Document
    signals: dict[str, float]
    metadata: dict[str, Any]  # the node's metadata dict when it was made
    snapshot: dict[str, Any]  # a copy of it (signals copied too), to notice edits in place
    text: object
    source: object


_MADE: dict[int, _Made] = {}
_PLAIN_TYPES: tuple[type, ...] = (TextNode, GraphFuseNode)
_SOURCE = NodeRelationship.SOURCE


def _remember(node: BaseNode, doc_id: str, document: Document, signals: dict[str, float], mapping: NodeMapping) -> None:
    if type(node) not in _PLAIN_TYPES:
        return  # other node types may compute their content from more than their text
    metadata = node.metadata
    snapshot = metadata.copy()
    snapshot[mapping.signals_key] = signals.copy()
    key = id(node)
    ref = _Ref(node, _drop)
    ref.key = key
    state = node.__dict__
    source = state["relationships"].get(_SOURCE)
    _MADE[key] = _Made(ref, mapping, doc_id, document, signals, metadata, snapshot, state.get("text"), source)


def _same_reading(a: NodeMapping, b: NodeMapping) -> bool:
    # The conversion depends on where the id, signals and timestamps are read (not on score_signal:
    # a node made here carries its signals).
    return a is b or (
        a.id_key == b.id_key
        and a.signals_key == b.signals_key
        and a.created_at_key == b.created_at_key
        and a.updated_at_key == b.updated_at_key
    )


def _made(node: BaseNode, mapping: NodeMapping) -> _Made | None:
    made = _MADE.get(id(node))
    if made is None:
        return None
    state = node.__dict__
    metadata = state.get("metadata")
    if (
        made.ref() is not node
        or not _same_reading(made.mapping, mapping)
        or metadata is not made.metadata
        or state.get("text") is not made.text
        or state["relationships"].get(_SOURCE) is not made.source
        or metadata != made.snapshot
    ):
        return None
    return made


def to_candidates(nodes: Sequence[NodeWithScore], mapping: NodeMapping) -> Converted:
    """One candidate per distinct graph id (nodes sharing an id are one document, first node's content).

    Signals of nodes sharing an id are merged, keeping each signal's largest value.
    """
    docs: dict[str, Document] = {}
    signals: dict[str, dict[str, float]] = {}
    groups: dict[str, list[int]] = {}
    for i, nws in enumerate(nodes):
        if not isinstance(nws, NodeWithScore):
            raise InvalidInput(f"expected NodeWithScore objects, got {type(nws).__name__} at position {i}")
        node = nws.node
        made = _made(node, mapping) if _MADE else None
        if made is not None:
            doc_id = made.doc_id
            own = made.signals.copy()
        else:
            doc_id = graph_id(node, mapping.id_key)
            stored = _stored_signals(node, mapping.signals_key)
            if stored is None:
                own = {}
                if mapping.score_signal is not None and nws.score is not None:
                    own[mapping.score_signal] = score_as_signal(nws, mapping.score_signal)
            else:
                own = stored
        if doc_id not in docs:
            docs[doc_id] = made.document if made is not None else _document(nws, doc_id, mapping)
            signals[doc_id] = own  # a fresh dict either way
            groups[doc_id] = [i]
            continue
        merged = signals[doc_id]
        for name, value in own.items():
            merged[name] = max(value, merged.get(name, value))
        groups[doc_id].append(i)
    # Every signal was checked on the way in (stored ones and scores): skip re-validation.
    return Converted([Candidate.trusted(docs[i], signals[i]) for i in docs], groups)


def from_candidates(
    out: Sequence[Candidate],
    nodes: Sequence[NodeWithScore],
    converted: Converted,
    mapping: NodeMapping,
    scores: Mapping[str, float | None] | None = None,
) -> list[NodeWithScore]:
    """Nodes in the order of ``out``: known ids map back to their nodes (all nodes sharing the
    id, carrying the candidate's signals); new ids become new nodes with ``scores[id]`` (or
    ``None``). Candidates ``out`` dropped are dropped."""
    result: list[NodeWithScore] = []
    documents: dict[str, Document] | None = None
    for c in out:
        members = converted.groups.get(c.id)
        if members is None:
            score = None if scores is None else scores.get(c.id)
            result.append(node_from_document(c.document, c.signals, score, mapping))
            continue
        for i in members:
            nws = nodes[i]
            node = nws.node
            if not carries_signals(node, c.signals, mapping.signals_key):
                node = node_with_signals(node, c.signals, mapping.signals_key)
                if len(members) == 1:  # the candidate's input document is this node's own
                    if documents is None:
                        documents = {k.id: k.document for k in converted.candidates}
                    _remember(node, c.id, documents[c.id], dict(c.signals), mapping)
            result.append(scored(node, nws.score))
    return result


# Graph expansion of nodes: shared by GraphExpansionRetriever and the postprocessor package's
# GraphExpansionPostprocessor.

UNKNOWN_CHOICES = ("keep", "error")
_MAX_DEPTH = 3


_INF = math.inf


@dataclass(frozen=True)
class Expansion:
    """Validated expansion settings and the expansion itself.

    Every node whose graph id the store knows (and whose document passes ``filter``) and whose
    score is at least ``min_seed_score`` (when one is set; a node without a score then is no
    seed) is a seed and gets the ``graph`` signal 1.0, so a weak hit neither spreads to its
    neighbours nor gets the graph boost of a fused score; the store's ``related`` adds documents within ``depth``
    hops, at most ``max_expansion``, nearest first, each with ``graph = decay ** distance`` and
    the score ``seed score * decay ** distance`` (``None`` when the seed had no score). The
    filter is applied on every hop, so a document outside it is never returned nor walked
    through. Nodes the store does not know are kept unexpanded (``unknown="keep"``) or raise
    :class:`~graphfuse.NotFound` (``unknown="error"``).
    """

    graph_store: GraphStore
    depth: int = 2
    max_expansion: int = 100
    relation_types: tuple[str, ...] | None = None
    decay: float = 0.5
    filter: MetadataFilter | None = None
    unknown: str = "keep"
    signal: str = "graph"
    min_seed_score: float | None = None

    @classmethod
    def build(
        cls,
        graph_store: GraphStore,
        *,
        depth: int,
        max_expansion: int,
        relation_types: Sequence[str] | None,
        decay: float,
        filter: FilterLike | None,
        unknown: str,
        signal: str,
        min_seed_score: float | None = None,
    ) -> Expansion:
        """Validate the settings (raises :class:`~graphfuse.InvalidInput` naming the argument)."""
        for method in ("related", "get_documents"):
            if not callable(getattr(graph_store, method, None)):
                raise InvalidInput(f"graph_store must be a GraphStore (with {method!r}), got {graph_store!r}")
        return cls(
            graph_store,
            check_positive_int(depth, "depth", high=_MAX_DEPTH),
            check_positive_int(max_expansion, "max_expansion"),
            check_relation_types(relation_types, "relation_types"),
            check_unit(decay, "decay", open_low=True),
            MetadataFilter.parse(filter),
            check_choice(unknown, "unknown", UNKNOWN_CHOICES),
            signal,
            None if min_seed_score is None else check_unit(min_seed_score, "min_seed_score", low=-_INF, high=_INF),
        )

    async def expand(self, nodes: Sequence[NodeWithScore], mapping: NodeMapping) -> list[NodeWithScore]:
        """The input nodes (seeds carrying ``graph`` 1.0), then the related documents as new nodes."""
        if not nodes:
            return []
        converted = to_candidates(nodes, mapping)
        ids = list(converted.groups)
        existing = await self.graph_store.get_documents(ids)
        unknown = [i for i in ids if i not in existing]
        if unknown and self.unknown == "error":
            shown = ", ".join(map(repr, unknown[:5])) + (" ..." if len(unknown) > 5 else "")
            raise NotFound(
                f"{len(unknown)} node(s) are not in the graph store ({shown}); "
                "pass unknown='keep' to keep them unexpanded, or set id_key to the metadata key holding graph ids"
            )
        seeds = [i for i in ids if i in existing and (self.filter is None or self.filter.matches(existing[i].metadata))]
        if self.min_seed_score is not None:
            strength = _seed_scores(nodes, converted.groups)
            threshold = self.min_seed_score
            seeds = [i for i in seeds if (value := strength.get(i)) is not None and value >= threshold]
        seed_set = set(seeds)
        out = [c.with_signal(self.signal, 1.0) if c.id in seed_set else c for c in converted.candidates]
        if not seeds:
            return from_candidates(out, nodes, converted, mapping)
        related = await self.graph_store.related(
            seeds, depth=self.depth, filter=self.filter, relation_types=self.relation_types, limit=self.max_expansion
        )
        best: dict[str, tuple[int, str]] = {}
        for r in related:
            if r.id in converted.groups:
                continue
            if isinstance(r.distance, bool) or not isinstance(r.distance, int) or not 1 <= r.distance <= self.depth:
                raise InvalidInput(
                    f"graph store {type(self.graph_store).__name__} returned {r.id!r} at distance "
                    f"{r.distance!r} for depth {self.depth}"
                )
            if r.id not in best or (r.distance, r.seed) < best[r.id]:
                best[r.id] = (r.distance, r.seed)
        new_ids = sorted(best, key=lambda i: (best[i][0], i))[: self.max_expansion]
        docs = await self.graph_store.get_documents(new_ids, filter=self.filter) if new_ids else {}
        seed_scores = _seed_scores(nodes, converted.groups)
        scores: dict[str, float | None] = {}
        for doc_id in new_ids:
            if doc_id not in docs:
                continue
            distance, seed = best[doc_id]
            factor = self.decay**distance
            seed_score = seed_scores.get(seed)
            scores[doc_id] = None if seed_score is None else seed_score * factor
            out.append(Candidate(docs[doc_id], {self.signal: factor}))
        return from_candidates(out, nodes, converted, mapping, scores)


def _seed_scores(nodes: Sequence[NodeWithScore], groups: dict[str, list[int]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for doc_id, members in groups.items():
        values = [s for s in (nodes[i].score for i in members) if s is not None]
        out[doc_id] = max(values) if values else None
    return out


# Signal stages and scorers on nodes, without candidates.


class NodeRecords(NamedTuple):
    """What :func:`read_records` read from nodes: one entry per distinct graph id, first-seen order.

    ``signals[k]`` is a fresh dict (the signals of the nodes sharing ``ids[k]``, merged keeping
    each signal's largest value, or their incoming score as ``score_signal``), ``groups[k]`` the
    positions of those nodes, ``values[k]`` the ``SignalInput`` value of the first of them (empty
    when no input was asked for).
    """

    ids: list[str]
    signals: list[dict[str, float]]
    groups: list[list[int]]
    values: list[Any]


# Checked once per process, so that a chain checks each once (bounded): graph ids (check_id),
# signal names (check_signal) and parsed timestamp strings (parse_timestamp).
_VALID_IDS: set[str] = set()
_VALID_NAMES: set[str] = set()
_STAMPS: dict[str, datetime] = {}
_MAX_CACHED = 16384


def _checked_signals(node: BaseNode, raw: object, key: str) -> dict[str, float]:
    # _stored_signals for the common case (a dict of float signals with known names), inline.
    if type(raw) is dict:
        for name, value in raw.items():
            if type(value) is not float or not 0.0 <= value <= 1.0 or type(name) is not str or name not in _VALID_NAMES:
                break
        else:
            return raw.copy()
    checked = _signals_from(node, raw, key)
    if len(_VALID_NAMES) < 4096:
        _VALID_NAMES.update(n for n in checked if type(n) is str)
    return checked


def _stamp(node: BaseNode, key: str, value: object) -> datetime | None:
    # parse_timestamp, with ISO strings memoised here too (a dict lookup, no call, on the hot path).
    parsed = parse_timestamp(value, f"node {node.node_id!r} {key!r}")
    if type(value) is str and parsed is not None:
        if len(_STAMPS) >= _MAX_CACHED:
            _STAMPS.clear()
        _STAMPS[value] = parsed
    return parsed


def read_records(
    nodes: Sequence[NodeWithScore], mapping: NodeMapping, signal_input: SignalInput | None = None
) -> NodeRecords:
    """Read the nodes as :func:`to_candidates` does (same ids, groups, signals, checks and errors),
    without building candidates; with ``signal_input``, also its value for each graph id."""
    return _read(nodes, mapping, signal_input, None)


def _read(
    nodes: Sequence[NodeWithScore],
    mapping: NodeMapping,
    signal_input: SignalInput | None,
    reading: _Reading | None,
) -> NodeRecords:
    # read_records; with ``reading``, also what ownership needs (see _Reading): which nodes GraphFuse owns
    # (their signals are taken as the step that wrote them checked them) and each record's timestamps.
    batch = _batch_of(nodes, mapping) if reading is not None else None
    owned: set[int] | None = None
    b_len = 0
    if batch is not None:
        fast = _fast_read(nodes, batch, mapping, signal_input) if batch.ids is not None else None
        if fast is not None:
            reading.batch = batch  # type: ignore[union-attr]
            reading.fast = True  # type: ignore[union-attr]
            reading.metadata = fast[1]  # type: ignore[union-attr]
            reading.signals = fast[2]  # type: ignore[union-attr]
            reading.simple = True  # type: ignore[union-attr]
            reading.ids = fast[0].ids  # type: ignore[union-attr]
            return fast[0]
        b_nws, b_nodes, b_written, b_snapshots = batch.nws, batch.nodes, batch.signals, batch.snapshots
        b_len = len(b_nws)
    if reading is not None:
        owned = reading.owned
    simple = True  # every node plain, its graph id its id_
    id_key = mapping.id_key
    signals_key = mapping.signals_key
    score_signal = mapping.score_signal
    created_key = None if mapping.created_at_key == signals_key else mapping.created_at_key
    updated_key = None if mapping.updated_at_key == signals_key else mapping.updated_at_key
    field = signal_input.field if signal_input is not None else None
    raw_metadata = field == "metadata" and signal_input is not None and signal_input.key != signals_key
    ids: list[str] = []
    signals: list[dict[str, float]] = []
    groups: list[list[int]] = []
    values: list[Any] = []
    index: dict[str, int] = {}
    valid_ids = _VALID_IDS
    valid_names = _VALID_NAMES
    stamps = _STAMPS
    plain_types = _PLAIN_TYPES
    source_key = _SOURCE
    nws_type = NodeWithScore
    for i, nws in enumerate(nodes):
        if type(nws) is not nws_type and not isinstance(nws, NodeWithScore):
            raise InvalidInput(f"expected NodeWithScore objects, got {type(nws).__name__} at position {i}")
        node = nws.node
        plain = type(node) in plain_types
        state = node.__dict__
        # graph_id, inline for plain nodes; each id checked once.
        doc_id: str
        # (An empty relationships dict is tested first: hashing the enum key costs a Python call.)
        if (
            plain
            and id_key is None
            and (type(node) is GraphFuseNode or not (rels := state["relationships"]) or source_key not in rels)
        ):
            doc_id = state["id_"]
            if doc_id not in valid_ids:
                graph_id(node, id_key)
                if len(valid_ids) < _MAX_CACHED:
                    valid_ids.add(doc_id)
        else:
            doc_id = graph_id(node, id_key)
            simple = False
        metadata = state["metadata"] if plain else node.metadata
        raw = metadata.get(signals_key)
        own: dict[str, float]
        if (
            i < b_len
            and b_nws[i] is nws
            and nws.__dict__["node"] is b_nodes[i]
            and raw is b_written[i]
            and raw == b_snapshots[i]
        ):
            # GraphFuse wrote these signals (checked then) and nobody changed them since: GraphFuse's own node.
            own = cast("dict[str, float]", raw).copy()
            owned.add(i)  # type: ignore[union-attr]  # b_len > 0 only with a reading
        elif raw is None:
            own = {}
            if score_signal is not None:
                score = nws.score
                if score is not None:
                    own[score_signal] = (
                        score if type(score) is float and 0.0 < score <= 1.0 else score_as_signal(nws, score_signal)
                    )
        else:
            own = None  # type: ignore[assignment]
            if type(raw) is dict:  # _checked_signals' common case, inline
                for name, value in raw.items():
                    if (
                        type(value) is not float
                        or not 0.0 <= value <= 1.0
                        or type(name) is not str
                        or name not in valid_names
                    ):
                        break
                else:
                    own = raw.copy()
            if own is None:
                own = _checked_signals(node, raw, signals_key)
        k = index.get(doc_id)
        if k is not None:
            merged = signals[k]
            for name, value in own.items():
                merged[name] = max(value, merged.get(name, value))
            groups[k].append(i)
            continue
        index[doc_id] = len(ids)
        ids.append(doc_id)
        signals.append(own)
        groups.append([i])
        # What _document checks for the node standing for this id: its content and both timestamps.
        if type(state["text"] if plain else node.get_content(MetadataMode.NONE)) is not str:
            _document(nws, doc_id, mapping)  # raises, naming the problem
        created: datetime | None = None
        if created_key is not None and (raw_created := metadata.get(created_key)) is not None:
            cached = stamps.get(raw_created) if type(raw_created) is str else None
            created = cached if cached is not None else _stamp(node, created_key, raw_created)
        updated: datetime | None = None
        if updated_key is not None and (raw_updated := metadata.get(updated_key)) is not None:
            cached = stamps.get(raw_updated) if type(raw_updated) is str else None
            updated = cached if cached is not None else _stamp(node, updated_key, raw_updated)
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
        else:  # the stage reads the signals key, which a converted document never holds
            values.append({key: v for key, v in metadata.items() if key != signals_key})
    if reading is not None:
        reading.simple = simple
        reading.ids = ids
    return NodeRecords(ids, signals, groups, values)


_NWS_FIELDS = {"node", "score"}  # shared: NodeWithScore has no other field to add to it


def _copies(
    nodes: Sequence[NodeWithScore],
    order: Sequence[int],
    signals: Sequence[dict[str, float]],
    mapping: NodeMapping,
    scores: Sequence[float] | None = None,
    *,
    share: bool = False,
    reading: _Reading | None = None,
) -> list[NodeWithScore]:
    """For each ``i = order[j]``: ``scored(node_with_signals(nodes[i].node, signals[j], key), score)`` with
    ``score`` ``scores[j]`` (default ``nodes[i].score``), or the node itself when it carries ``signals[j]``
    already. The signal dicts are taken over (``share``: they may be shared, so a copy carries a copy).
    The copies are built inline (this runs per node per step).

    With ``reading`` (what :func:`_read` found), a node GraphFuse owns is updated in place (its signals,
    its score) and returned itself instead of a copy, and the result is remembered as GraphFuse's own."""
    key = mapping.signals_key
    owned = reading.owned if reading is not None else None  # positions of nodes GraphFuse owns
    out: list[NodeWithScore] = []
    append = out.append
    theirs: list[int] = []  # positions in the result holding a node GraphFuse does not own (rare)
    new = object.__new__
    set_dict, set_fields, set_extra, set_private = _set_dict, _set_fields, _set_extra, _set_private
    copied = _COPIED_FIELDS
    nws_fields = _NWS_FIELDS if _PLAIN_NWS else None
    for j, i in enumerate(order):
        nws = nodes[i]
        node = nws.node
        node_signals = signals[j]
        state = node.__dict__
        metadata = state["metadata"]
        embed_keys = state["excluded_embed_metadata_keys"]
        llm_keys = state["excluded_llm_metadata_keys"]
        if owned and i in owned and type(metadata) is dict:
            # GraphFuse's own node: updated in place to what a copy would carry.
            if metadata.get(key) != node_signals:
                metadata[key] = node_signals.copy() if share else node_signals
            if type(embed_keys) is not list or key not in embed_keys:
                state["excluded_embed_metadata_keys"] = [*(embed_keys or ()), key]
            if type(llm_keys) is not list or key not in llm_keys:
                state["excluded_llm_metadata_keys"] = [*(llm_keys or ()), key]
            if scores is not None:
                nws.__dict__["score"] = scores[j]
            append(nws)
            continue
        score = nws.score if scores is None else scores[j]
        if (
            type(metadata) is not dict
            or type(embed_keys) is not list
            or type(llm_keys) is not list
            or node.__pydantic_extra__ is not None
        ):
            if carries_signals(node, node_signals, key):
                theirs.append(j)  # the node itself
            else:
                node = node_with_signals(node, node_signals, key)
        elif not (metadata.get(key) == node_signals and key in embed_keys and key in llm_keys):
            metadata = metadata.copy()
            metadata[key] = node_signals.copy() if share else node_signals
            fresh = state.copy()
            fresh["metadata"] = metadata
            if key not in embed_keys:
                fresh["excluded_embed_metadata_keys"] = [*embed_keys, key]
            if key not in llm_keys:
                fresh["excluded_llm_metadata_keys"] = [*llm_keys, key]
            copy = new(type(node))
            set_dict(copy, fresh)
            set_fields(copy, node.__pydantic_fields_set__ | copied)
            set_extra(copy, None)
            private = node.__pydantic_private__
            set_private(copy, None if private is None else dict(private))
            node = copy
        else:
            theirs.append(j)  # the node itself
        if nws_fields is None:  # pragma: no cover - a future LlamaIndex with a richer NodeWithScore
            append(NodeWithScore(node=node, score=score))
            continue
        made = new(NodeWithScore)
        set_dict(made, {"node": node, "score": score})
        set_fields(made, nws_fields)
        set_extra(made, None)
        set_private(made, None)
        append(made)
    if reading is not None:
        nodes_out: list[BaseNode | None] = list(map(_NODE, out))
        for j in theirs:
            nodes_out[j] = None
        if share or theirs:
            written: Sequence[object] = [None if node is None else node.metadata.get(key) for node in nodes_out]
        else:
            written = signals  # taken over by the copies
        # The whole list may take the fast path next time: all GraphFuse's, plain nodes whose graph id is
        # their id_, each id once (so node i of the input is record i).
        record_ids = reading.ids
        ids: list[str] | None = None
        if not theirs and reading.simple and record_ids is not None and len(record_ids) == len(nodes):
            ids = record_ids if type(order) is range else [record_ids[i] for i in order]
        return _remember_batch(out, nodes_out, written, mapping, ids)
    return out


# Ownership. A node a GraphFuse step made (a copy carrying signals) and returned is GraphFuse's own: the
# next GraphFuse step that gets the list it came in, as it was returned, updates it in place (signals,
# score) instead of copying it again, and takes its signals without checking them again, as long as the
# node still holds the very signals dict the step wrote, with the same values (a node whose signals the
# caller changed, or one the caller put into the list, is read and copied like any other). Nodes from
# anywhere else are never mutated. When the whole list comes back (the same nodes, in the same order, each
# graph id once, plain nodes whose id is their id_), the step checks it with a few passes over the list
# instead of reading the nodes one by one: ids, texts, excluded keys, signals (against a copy) and
# timestamps (through the parsed-string memo) are compared, and any difference sends it down the
# node-by-node path. What the step knew travels with the list it returned (an _Owned list), so it lives
# exactly as long as that list: no registry, nothing kept alive.


class _Reading:
    """What :func:`_read` found besides the records."""

    __slots__ = ("batch", "fast", "ids", "metadata", "owned", "signals", "simple")

    def __init__(self) -> None:
        self.batch: _Batch | None = None
        self.fast = False  # the whole list was a remembered output, unchanged (_fast_read)
        self.metadata: list[dict[str, Any]] = []  # with fast: each node's metadata dict
        self.owned: set[int] = set()  # positions of the nodes GraphFuse owns
        self.simple = False  # every node plain, its graph id its id_
        self.ids: list[str] | None = None  # the records' ids
        self.signals: list[object] = []  # with fast: the signals dict each node holds


class _Batch(NamedTuple):
    mapping: NodeMapping
    nws: list[NodeWithScore]  # the step's output (a copy of the list)
    nodes: list[BaseNode | None]  # nws[k].node when GraphFuse owns it, else None
    signals: Sequence[Any]  # the signals dict in nodes[k]'s metadata
    snapshots: list[Any]  # a copy of it
    ids: Sequence[str] | None  # each node's graph id (its id_) when the whole list may take the fast path


class _Owned(list):  # type: ignore[type-arg]
    """The list a GraphFuse step returns: a ``list`` of ``NodeWithScore`` that also carries what the step
    knew about them (:class:`_Batch`), for the next step. Copies, slices and pickles are plain lists."""

    __slots__ = ("batch",)
    batch: _Batch

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return (list, (list(self),))


_SINGLETONS: list[list[int]] = [[k] for k in range(256)]


def _singletons(n: int) -> list[list[int]]:
    """``[[0], [1], ..., [n - 1]]``: the groups of a list whose every graph id is one node. The inner lists are
    shared between calls (read only: the records holding them never leave this module), so a step over a
    remembered list allocates no group lists."""
    global _SINGLETONS
    cached = _SINGLETONS
    if len(cached) < n:
        if n > _MAX_CACHED:
            return [[k] for k in range(n)]
        cached = [[k] for k in range(n)]
        _SINGLETONS = cached  # a new list replaces the old one whole: readers never see it half built
    return cached[:n]


_consume: Callable[[Iterable[Any]], None] = deque(maxlen=0).extend  # runs an iterator to its end, keeping nothing
_STATE_METADATA = itemgetter("metadata")
_STATE_ID = itemgetter("id_")
_STATE_EMBED_KEYS = itemgetter("excluded_embed_metadata_keys")
_STATE_LLM_KEYS = itemgetter("excluded_llm_metadata_keys")
_STATE_RELATIONSHIPS = itemgetter("relationships")
_FIRST = itemgetter(0)
_THIRD = itemgetter(2)
_NODE = attrgetter("node")
_STATE = attrgetter("__dict__")


def _remember_batch(
    out: list[NodeWithScore],
    nodes: list[BaseNode | None],
    signals: Sequence[Any],
    mapping: NodeMapping,
    ids: Sequence[str] | None,
) -> list[NodeWithScore]:
    """``out`` as an :class:`_Owned` list remembering the batch (``out`` itself is kept by it: the caller
    gets a copy it may reorder or edit)."""
    # All dicts when the fast path may follow (ids); else None where GraphFuse does not own the node.
    snapshots: list[Any] = (
        list(map(dict.copy, signals)) if ids is not None else [w.copy() if type(w) is dict else None for w in signals]
    )
    owned = _Owned(out)
    owned.batch = _Batch(mapping, out, nodes, signals, snapshots, ids)
    return owned


def _batch_of(nodes: Sequence[NodeWithScore], mapping: NodeMapping) -> _Batch | None:
    if type(nodes) is not _Owned:
        return None
    batch = nodes.batch
    return batch if _same_reading(batch.mapping, mapping) else None


def _fast_read(
    nodes: Sequence[NodeWithScore], batch: _Batch, mapping: NodeMapping, signal_input: SignalInput | None
) -> tuple[NodeRecords, list[dict[str, Any]], list[object]] | None:
    """The records of a remembered output passed back whole, checked in passes over the list (and each
    node's metadata dict); ``None`` when anything differs (the nodes are then read one by one)."""
    ids = batch.ids
    n = len(nodes)
    if ids is None or n != len(batch.nws) or not all(map(is_, nodes, batch.nws)):
        return None
    key = mapping.signals_key
    field = signal_input.field if signal_input is not None else None
    if field == "metadata" and signal_input is not None and signal_input.key == key:
        return None
    node_list = list(map(_NODE, nodes))
    if not all(map(is_, node_list, batch.nodes)):
        return None
    # The fields are read from each node's __dict__ (the remembered nodes are plain TextNode / GraphFuseNode
    # objects, whose fields live there): an item lookup instead of an attribute lookup through the class.
    states = list(map(_STATE, node_list))
    metadata = list(map(_STATE_METADATA, states))
    signals = list(map(methodcaller("get", key), metadata))
    if not all(map(is_, signals, batch.signals)) or signals != batch.snapshots:
        return None
    if (
        not all(map(is_, map(_STATE_ID, states), ids))
        # (The text of these nodes is a str: TextNode validates assignment.)
        or not all(map(contains, map(_STATE_EMBED_KEYS, states), repeat(key)))
        or not all(map(contains, map(_STATE_LLM_KEYS, states), repeat(key)))
        or (
            any(map(len, map(_STATE_RELATIONSHIPS, states)))
            and not all(map(is_, map(type, node_list), repeat(GraphFuseNode)))
        )
    ):
        return None
    stamps: dict[str, list[datetime | None]] = {}
    for which, stamp_key in (("created_at", mapping.created_at_key), ("updated_at", mapping.updated_at_key)):
        if stamp_key == key:
            stamps[which] = [None] * n
            continue
        raws = list(map(methodcaller("get", stamp_key), metadata))
        absent = raws.count(None)
        if absent == n:  # no such timestamp anywhere
            stamps[which] = raws
            continue
        # Every timestamp an ISO string parsed before (or absent): anything else is read one by one.
        try:
            parsed = list(map(_STAMPS.get, raws))
        except TypeError:  # an unhashable value: let the reading one by one name it
            return None
        if parsed.count(None) != absent:
            return None
        stamps[which] = parsed  # type: ignore[assignment]
    values: list[Any]
    if field is None:
        values = []
    elif field == "id":
        values = list(ids)
    elif field in stamps:
        values = stamps[field]
    else:
        values = metadata
    groups = _singletons(n)
    # The signals are the batch's private copies, taken over: a signal stage writes new dicts into the nodes,
    # so the list they came in is no longer seen as unchanged; fusion does not change them.
    return NodeRecords(list(ids), batch.snapshots, groups, values), metadata, signals


def with_record_signals(
    nodes: Sequence[NodeWithScore], records: NodeRecords, mapping: NodeMapping
) -> list[NodeWithScore]:
    """The nodes in record order (each id's nodes together), each carrying its id's ``records.signals``:
    what :func:`from_candidates` returns for candidates with those ids and signals, in that order.
    The signal dicts of ``records`` are taken over by the copies."""
    return _with_record_signals(nodes, records, mapping, None)


def _with_record_signals(
    nodes: Sequence[NodeWithScore], records: NodeRecords, mapping: NodeMapping, reading: _Reading | None
) -> list[NodeWithScore]:
    groups = records.groups
    if len(groups) == len(nodes):  # every id once: one node per record, its signals taken over
        if reading is not None and reading.fast and reading.batch is not None:
            # The whole list, GraphFuse's own and checked: the new signals go into the nodes in place.
            list(map(setitem, reading.metadata, repeat(mapping.signals_key), records.signals))
            return _remember_batch(list(nodes), reading.batch.nodes, records.signals, mapping, records.ids)
        # Each graph id once: record k is node k.
        return _copies(nodes, range(len(nodes)), records.signals, mapping, reading=reading)
    order: list[int] = []
    signals: list[dict[str, float]] = []
    for own, members in zip(records.signals, groups, strict=True):
        if len(members) == 1:
            order.append(members[0])
            signals.append(own)
        else:
            order.extend(members)
            signals.extend(dict(own) for _ in members)
    return _copies(nodes, order, signals, mapping, reading=reading)


async def apply_signal_stage(
    stage: SignalStage, query: Query, nodes: Sequence[NodeWithScore], mapping: NodeMapping
) -> list[NodeWithScore]:
    """Run a :class:`graphfuse.SignalStage` over the nodes (with :func:`graphfuse.run_signal_stage`'s
    logging, metrics, tracing and :class:`~graphfuse.StageFailed` wrapping): the nodes that
    ``from_candidates(run_stage(stage, query, to_candidates(nodes).candidates), ...)`` gives,
    built without candidates.

    Nodes from elsewhere are not mutated: each comes back as a copy carrying the new signal. Nodes a
    GraphFuse step made and returned, unchanged since, are GraphFuse's own: they are updated in place
    and come back themselves (see the module docstring)."""
    reading = _Reading()
    records = _read(nodes, mapping, stage.signal_input, reading)
    values = await run_signal_stage(stage, query, records.ids, records.values)
    signals = records.signals
    if len(values) != len(signals):  # pragma: no cover - run_signal_stage returns one value per id
        raise ValueError(f"{len(values)} signal values for {len(signals)} records")
    _consume(map(setitem, signals, repeat(stage.signal), values))
    return _with_record_signals(nodes, records, mapping, reading)


def fuse_nodes(
    nodes: Sequence[NodeWithScore], scorer: SignalScorer, mapping: NodeMapping, top_n: int | None = None
) -> list[NodeWithScore]:
    """Score the nodes' signals with ``scorer`` and sort them, best first (ties by graph id, then input
    position); nodes sharing a graph id get the same score and carry their merged signals. ``top_n``
    keeps the best ``top_n`` nodes.

    As in :func:`apply_signal_stage`, nodes from elsewhere are not mutated (each comes back in a new
    ``NodeWithScore``, the node copied when its signals change), and GraphFuse's own nodes get their
    score (and signals) in place."""
    reading = _Reading()
    records = _read(nodes, mapping, None, reading)
    ids = records.ids
    scores = scorer.score_signals(ids, records.signals)
    groups = records.groups
    if len(ids) == len(nodes):  # each graph id once: node i is record i; sorted as tuples, no key function
        ranked = sorted(zip(map(neg, map(float, scores)), ids, range(len(ids)), strict=True))
        if top_n is not None:
            ranked = ranked[:top_n]
        order = list(map(_THIRD, ranked))
        fused_scores = list(map(neg, map(_FIRST, ranked)))
        if reading.fast and reading.batch is not None:
            # The whole list, GraphFuse's own and checked: its nodes carry their signals; scores set in place.
            out = list(map(nodes.__getitem__, order))
            _consume(map(setitem, map(_STATE, out), repeat("score"), fused_scores))
            batch = reading.batch
            return _remember_batch(
                out,
                list(map(batch.nodes.__getitem__, order)),
                list(map(reading.signals.__getitem__, order)),
                mapping,
                list(map(ids.__getitem__, order)),
            )
        all_signals = records.signals
        return _copies(
            nodes, order, [all_signals[i] for i in order], mapping, fused_scores, share=True, reading=reading
        )
    fused: list[tuple[float, str, int, int]] = []
    for k, (doc_id, members) in enumerate(zip(ids, groups, strict=True)):
        score = float(scores[k])
        fused.extend((score, doc_id, i, k) for i in members)
    fused.sort(key=lambda t: (-t[0], t[1], t[2]))
    if top_n is not None:
        fused = fused[:top_n]
    all_signals = records.signals
    # A node carrying exactly its merged signals (every node a GraphFuse step returned) is not copied.
    return _copies(
        nodes,
        [t[2] for t in fused],
        [all_signals[t[3]] for t in fused],
        mapping,
        [t[0] for t in fused],
        share=True,
        reading=reading,
    )
