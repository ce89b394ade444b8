"""LlamaIndex nodes on GraphFuse's records layer (:mod:`graphfuse.records`): the LlamaIndex side only.

Shared by this package's retrievers, ``llama-index-postprocessor-graphfuse`` and any LlamaIndex
component built on GraphFuse: :func:`read_nodes` reads ``NodeWithScore`` lists as a
:class:`graphfuse.records.Batch`, :func:`nodes_from_hits` builds the nodes back (copies: the
caller's nodes are never changed). See ``docs/integrations/llama-index.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, NodeWithScore, RelatedNodeInfo, TextNode

from graphfuse import Document, GraphStore, InvalidInput, Query, Result, Stage
from graphfuse.indexing import excluded_keys
from graphfuse.records import Batch, Hit, RecordReader, check_known, run_stages
from graphfuse.validation import check_id, check_signal

__all__ = [
    "BOOKKEEPING_KEYS",
    "CONTRIBUTIONS_KEY",
    "INTERNAL_PREFIX",
    "PARENT_KEY",
    "SIGNALS_KEY",
    "GraphFuseNode",
    "NodeMapping",
    "graph_id",
    "node_from_document",
    "node_from_result",
    "nodes_from_hits",
    "read_nodes",
    "run_on_nodes",
    "user_metadata",
]

SIGNALS_KEY = "graphfuse_signals"
"""Node metadata key of the signals GraphFuse computed for a node (kept out of prompts and embeddings)."""
CONTRIBUTIONS_KEY = "graphfuse_contributions"
"""Node metadata key of each signal's share of the node's score (kept out of prompts and embeddings)."""
INTERNAL_PREFIX = "graphfuse_"
"""Metadata keys starting with this are GraphFuse's own (indexer bookkeeping): never copied onto nodes."""
PARENT_KEY = "parent_id"
"""Metadata key naming the document a chunk belongs to (what the GraphFuse indexer writes)."""
BOOKKEEPING_KEYS: tuple[str, ...] = (PARENT_KEY, "chunk_index", "file_path", "source")
"""Metadata keys that are bookkeeping, not content: the indexer's ``parent_id`` and ``chunk_index``,
the path a reader recorded (LlamaIndex readers' ``file_path``; ``source``, where ``graphfuse index``
and LangChain's loaders put it). Every node GraphFuse builds keeps them (metadata filters
read them) but hides them from the LLM and the embedder, as LlamaIndex's readers hide their file
metadata (``file_name``, ``file_size``, dates)."""


def user_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata`` without GraphFuse's internal keys (those starting with ``graphfuse_``)."""
    return {k: v for k, v in metadata.items() if not (isinstance(k, str) and k.startswith(INTERNAL_PREFIX))}


class GraphFuseNode(TextNode):
    """A ``TextNode`` for a GraphFuse document, whose ``hash`` leaves out GraphFuse's keys.

    The same text with the same user metadata hashes the same whether it came from GraphFuse or
    from any other LlamaIndex retriever (``QueryFusionRetriever`` de-duplicates by hash); its
    graph id is its ``id_`` (a chunk keeps its own id, ``ref_doc_id`` names its parent).
    """

    _graphfuse_keys: frozenset[str] = PrivateAttr(default=frozenset({SIGNALS_KEY, CONTRIBUTIONS_KEY}))

    @property
    def hash(self) -> str:
        shown = {k: v for k, v in self.metadata.items() if k not in self._graphfuse_keys}
        return str(sha256((str(self.text) + str(shown)).encode("utf-8", "surrogatepass")).hexdigest())


def graph_id(node: BaseNode, id_key: str | None) -> str:
    """A node's graph id: ``metadata[id_key]`` when ``id_key`` is set, else its source document's id
    (``ref_doc_id``) for a chunk of one, else its ``node_id`` (a :class:`GraphFuseNode`: its ``node_id``)."""
    what = f"node {node.node_id!r} metadata {id_key!r}" if id_key is not None else f"node {node.node_id!r} id"
    return check_id(_unchecked_graph_id(node, id_key), what)


def _unchecked_graph_id(node: BaseNode, id_key: str | None) -> object:
    # What graph_id checks; the records reader checks the id itself (and names the node).
    if id_key is not None:
        if id_key not in node.metadata:
            raise InvalidInput(f"node {node.node_id!r} has no metadata key {id_key!r} (the configured id_key)")
        return node.metadata[id_key]
    source = None if isinstance(node, GraphFuseNode) else node.source_node
    return source.node_id if source is not None else node.node_id


@dataclass(frozen=True)
class NodeMapping:
    """Where GraphFuse reads and writes its data on a node.

    ``id_key``: see :func:`graph_id`. ``signals_key``: the metadata key holding the signals (kept
    out of embeddings and prompts). ``score_signal``: the signal a node's score becomes the first
    time GraphFuse sees it (``None``: none). ``created_at_key`` / ``updated_at_key``: timestamps.
    """

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

    def reader(self) -> RecordReader[NodeWithScore]:
        """The :class:`graphfuse.records.RecordReader` for ``NodeWithScore`` objects."""
        key = self.signals_key
        return RecordReader(
            id=lambda nws: _unchecked_graph_id(nws.node, self.id_key),
            content=lambda nws: nws.node.get_content(MetadataMode.NONE),
            # (The reader copies the metadata; the signals key is left out only where it is present.)
            metadata=lambda nws: (
                {k: v for k, v in nws.node.metadata.items() if k != key}
                if key in nws.node.metadata
                else nws.node.metadata
            ),
            signals=lambda nws: nws.node.metadata.get(key),
            score=lambda nws: nws.score,
            score_signal=self.score_signal,
            label=lambda nws: f"node {nws.node.node_id!r}",
            created_at_key=None if self.created_at_key == key else self.created_at_key,
            updated_at_key=None if self.updated_at_key == key else self.updated_at_key,
        )


def read_nodes(nodes: Sequence[NodeWithScore], mapping: NodeMapping) -> Batch[NodeWithScore]:
    """The nodes as a batch of records: one per graph id (see :class:`graphfuse.records.RecordReader`)."""
    for i, nws in enumerate(nodes):
        if type(nws) is not NodeWithScore and not isinstance(nws, NodeWithScore):
            raise InvalidInput(f"expected NodeWithScore objects, got {type(nws).__name__} at position {i}")
    return mapping.reader().read(nodes)


def _hidden(keys: Sequence[str], extra: Sequence[str]) -> list[str]:
    return [*keys, *(k for k in extra if k not in keys)]


def _with_signals(node: BaseNode, signals: Mapping[str, float], key: str) -> BaseNode:
    # A copy (pydantic's model_copy): the node the caller passed is left as it was. A node that carries
    # these signals already, hidden, is taken as it is (not changed, so not copied).
    if (
        node.metadata.get(key) == signals
        and key in node.excluded_embed_metadata_keys
        and key in node.excluded_llm_metadata_keys
    ):
        return node
    metadata = {**node.metadata, key: dict(signals)}
    embed, llm = node.excluded_embed_metadata_keys, node.excluded_llm_metadata_keys
    return node.model_copy(
        update={
            "metadata": metadata,
            "excluded_embed_metadata_keys": list(embed) if key in embed else [*embed, key],
            "excluded_llm_metadata_keys": list(llm) if key in llm else [*llm, key],
        }
    )


def node_from_document(
    document: Document,
    signals: Mapping[str, float],
    score: float | None,
    mapping: NodeMapping,
    extra: Mapping[str, Any] | None = None,
) -> NodeWithScore:
    """A new :class:`GraphFuseNode` (id = document id, ``ref_doc_id`` = its parent document or itself)
    for a GraphFuse document; the keys the document was indexed with as excluded
    (:func:`source_records` stores a LlamaIndex document's ``excluded_*_metadata_keys``) and GraphFuse's
    own keys and the bookkeeping keys (:data:`BOOKKEEPING_KEYS`) are kept out of prompts and embeddings."""
    llm, embed = excluded_keys(document.metadata, f"document {document.id!r}")
    metadata = user_metadata(document.metadata)
    if document.created_at is not None:
        metadata.setdefault(mapping.created_at_key, document.created_at.isoformat())
    if document.updated_at is not None:
        metadata.setdefault(mapping.updated_at_key, document.updated_at.isoformat())
    parent = metadata.get(PARENT_KEY)
    source = parent if isinstance(parent, str) and parent else document.id
    metadata.update(extra or {})
    metadata[mapping.signals_key] = dict(signals)
    ours = [mapping.signals_key, *(extra or {})]
    hidden = [*ours, *(k for k in BOOKKEEPING_KEYS if k in metadata)]
    # mypy's view of TextNode's (pydantic) constructor misses the inherited fields on a subclass.
    node = GraphFuseNode(  # type: ignore[call-arg]
        id_=document.id,
        text=document.content or "",
        metadata=metadata,
        excluded_embed_metadata_keys=_hidden(embed, hidden),
        excluded_llm_metadata_keys=_hidden(llm, hidden),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
    )
    node._graphfuse_keys = frozenset(ours)
    return NodeWithScore(node=node, score=score)


def node_from_result(result: Result, mapping: NodeMapping, score_signal: str | None = None) -> NodeWithScore:
    """A node for a pipeline result: the fused score (or ``score_signal``'s value, 0.0 when missing),
    the signals and score contributions in excluded metadata."""
    score = result.score if score_signal is None else result.signals.get(score_signal, 0.0)
    return node_from_document(
        result.document, result.signals, score, mapping, {CONTRIBUTIONS_KEY: dict(result.contributions)}
    )


def nodes_from_hits(
    hits: Sequence[Hit[NodeWithScore]],
    mapping: NodeMapping,
    *,
    fused: bool = False,
    new_score_signal: str | None = None,
) -> list[NodeWithScore]:
    """Nodes for hits, in order: a hit's own nodes (each a copy carrying the hit's signals; with
    ``fused``, scored with the hit's fused score, else keeping its score), then a new
    :class:`GraphFuseNode` for a hit without nodes (scored by ``new_score_signal``, else ``None``)."""
    out: list[NodeWithScore] = []
    for hit in hits:
        if not hit.items:
            score = hit.score if fused else (hit.signals.get(new_score_signal) if new_score_signal else None)
            out.append(node_from_document(hit.document, hit.signals, score, mapping))
            continue
        for nws in hit.items:
            node = _with_signals(nws.node, hit.signals, mapping.signals_key)
            out.append(NodeWithScore(node=node, score=hit.score if fused else nws.score))
    return out


async def run_on_nodes(
    stages: Sequence[Stage],
    query: Query,
    nodes: Sequence[NodeWithScore],
    mapping: NodeMapping,
    *,
    graph_store: GraphStore | None = None,
    unknown: str = "keep",
    new_score_signal: str | None = None,
) -> list[NodeWithScore]:
    """Run core stages over nodes and build the nodes back (:func:`graphfuse.records.run_stages`).

    A stage's failure raises :class:`~graphfuse.StageFailed` naming the stage; a GraphFuse error
    it raised (bad node data, a provider's ``RateLimited``) keeps its class too
    (``StageFailed[InvalidInput]``), so ``except InvalidInput`` and ``except StageFailed`` both
    catch it. With ``unknown="error"``, nodes ``graph_store`` does not hold raise
    :class:`~graphfuse.NotFound`."""
    batch = read_nodes(nodes, mapping)
    if unknown == "error" and graph_store is not None:
        await check_known(graph_store, batch.ids, "GraphFuse")
    hits = await run_stages(stages, query, batch)
    return nodes_from_hits(hits, mapping, new_score_signal=new_score_signal)
