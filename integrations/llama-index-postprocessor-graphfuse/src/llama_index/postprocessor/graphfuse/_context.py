"""ContextPostprocessor: pack the nodes into a token budget with graphfuse.context, sources kept for citation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from hashlib import sha256
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.retrievers.graphfuse.nodes import graph_id, user_metadata

from graphfuse import GraphFuseError, GraphStore, InvalidInput, Result
from graphfuse.context import Context, ContextAssembler, TokenCounter, citations, context_parts

from ._base import GraphFusePostprocessor
from ._history import history_from_chat

__all__ = ["CONTEXT_KEY", "OUTPUTS", "ContextPostprocessor", "ContextSourceNode"]

CONTEXT_KEY = "graphfuse_context"
"""Node metadata key of the context information (excluded from embedding and LLM text)."""

OUTPUTS = ("nodes", "context")
"""What :class:`ContextPostprocessor` returns: one node per source, or one context node plus the cited nodes."""


class ContextSourceNode(TextNode):
    """A node cited by a context node: it keeps the source's id, text, metadata and score for citation,
    and shows the LLM nothing (its LLM content is empty), since the context node already carries its part.

    Response synthesizers read ``node.get_content(metadata_mode=MetadataMode.LLM)``; the compact
    (default), ``simple_summarize`` and ``tree_summarize`` modes skip empty chunks, so the prompt
    is the context node's text alone while ``response.source_nodes`` lists every source.
    """

    @classmethod
    def class_name(cls) -> str:
        return "ContextSourceNode"

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        if metadata_mode == MetadataMode.LLM:
            return ""
        return super().get_content(metadata_mode)

    def get_content_blocks(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> list[Any]:
        if metadata_mode == MetadataMode.LLM:
            return []
        return list(super().get_content_blocks(metadata_mode))


class ContextPostprocessor(GraphFusePostprocessor):
    """Pack the nodes, after any retriever, into a token budget with :mod:`graphfuse.context`.

    The nodes are taken best first, in the order they come (what LlamaIndex retrievers and
    rerankers hand on); each becomes a GraphFuse result (chunks of one document, i.e. nodes
    sharing a graph id or a ``parent_id``, are merged into one passage). ``budget`` is the
    number of context tokens by ``counter`` (a :class:`~graphfuse.context.TokenCounter` or a
    registered counter name; default: :func:`~graphfuse.context.get_token_counter`).
    ``format``: ``"passages"``, ``"evidence"`` or ``"graph"`` (``graph`` needs ``graph_store``;
    neighbours are read within ``filter`` only). The query text is needed (``query_bundle``).

    ``output="nodes"`` (passages and evidence): the nodes whose source made it into the
    context, one per source in context order, each a copy whose text is its part of the context
    (``"[n] Title..."``, shortened when it did not fit whole), keeping its id, metadata and
    score; joined with blank lines, the texts are the context's text. The LLM reads exactly
    that: the returned nodes hide their metadata from the LLM (a title is in its part's head). ``output="context"`` (any
    format): first one node whose text is the whole context, then every input node the context
    cites as a :class:`ContextSourceNode` (its LLM content is empty, so a response synthesizer
    reads the context once, and ``response.source_nodes`` keeps the sources). Every returned
    node has ``metadata["graphfuse_context"]`` (excluded from embedding and LLM text): the
    marker ``[n]`` and source id for a source, the context's tokens, counter, format, budget,
    sources and dropped results for the context node. Nodes that did not fit are not returned.

    Bad settings (a budget below 1, an unknown format or output, the graph format without a graph
    store or with ``output="nodes"``) raise :class:`~graphfuse.InvalidInput` when it is built.
    :meth:`context` / :meth:`acontext` return the :class:`~graphfuse.context.Context` itself,
    and take the conversation history (``history=``, ``ChatMessage`` objects). As a
    postprocessor it takes none: LlamaIndex hands a postprocessor the nodes and the query only,
    and a chat engine sends its memory's messages to the LLM itself.
    """

    budget: int = Field(description="Context tokens, by the counter.")
    format: str = Field(default="passages", description="'passages', 'evidence' or 'graph'.")
    output: str = Field(default="nodes", description="'nodes': one node per source; 'context': one context node.")
    filter: dict[str, Any] | None = Field(default=None, description="GraphFuse metadata filter.")

    _assembler: ContextAssembler = PrivateAttr()

    def __init__(
        self,
        budget: int | None = None,
        *,
        counter: TokenCounter | str | None = None,
        graph_store: GraphStore | None = None,
        **data: Any,
    ) -> None:
        if budget is None:
            raise InvalidInput("ContextPostprocessor needs budget= (the number of context tokens)")
        if isinstance(budget, bool) or not isinstance(budget, int):  # (pydantic would coerce True or 2.0)
            raise InvalidInput(f"budget must be a positive number of tokens, got {budget!r}")
        assembler = ContextAssembler(
            budget=budget,
            format=data.get("format", "passages"),
            counter=counter,
            graph_store=graph_store,
            filter=data.get("filter"),
        )
        super().__init__(budget=budget, **data)
        if self.output not in OUTPUTS:
            raise InvalidInput(f"output must be one of {', '.join(map(repr, OUTPUTS))}, got {self.output!r}")
        if self.format == "graph" and self.output == "nodes":
            raise InvalidInput(
                "a 'graph' context is one text (entities, relationships, supporting text), not one part per "
                "node: use output='context'"
            )
        self._assembler = assembler

    @classmethod
    def class_name(cls) -> str:
        return "ContextPostprocessor"

    # -- the Context itself -------------------------------------------------------------------

    def context(
        self, nodes: Sequence[NodeWithScore], query_str: str, *, history: Sequence[Any] | None = None
    ) -> Context:
        """The :class:`~graphfuse.context.Context` the nodes make for ``query_str`` (sync form of :meth:`acontext`)."""
        turns = history_from_chat(history)
        return self._assembler.build(self._query(query_str), self._results(list(nodes)), history=turns)

    async def acontext(
        self, nodes: Sequence[NodeWithScore], query_str: str, *, history: Sequence[Any] | None = None
    ) -> Context:
        """The :class:`~graphfuse.context.Context` the nodes make for ``query_str``.

        ``history`` is the conversation so far, oldest first: LlamaIndex ``ChatMessage`` objects
        (a chat memory's ``get()``), ``{"role", "content"}`` dicts or
        :class:`graphfuse.context.Turn`. Its last five turns go newest first into their share of
        the budget; :attr:`Context.prompt_text <graphfuse.context.Context.prompt_text>` is the
        history block, oldest turn first, then the context. A tool message raises
        :class:`~graphfuse.InvalidInput` naming ``history[i]``.
        """
        turns = history_from_chat(history)
        return await self._assembler.abuild(self._query(query_str), self._results(list(nodes)), history=turns)

    @staticmethod
    def _query(query_str: str | None) -> str:
        if not isinstance(query_str, str) or not query_str.strip():
            raise InvalidInput(
                "ContextPostprocessor needs the query text to build a context: pass query_bundle= or "
                "query_str= to postprocess_nodes"
            )
        return query_str

    def _results(self, nodes: list[NodeWithScore]) -> list[Result]:
        """One result per node (id = node id; the graph id as ``parent_id`` when it differs)."""
        for i, nws in enumerate(nodes):
            if not isinstance(nws, NodeWithScore):
                raise InvalidInput(f"expected NodeWithScore objects, got {type(nws).__name__} at position {i}")
        mapping = self._mapping()
        signals_key = mapping.signals_key
        return self._assembler.results(
            nodes,
            id=lambda nws: nws.node.node_id,
            content=lambda nws: nws.node.get_content(metadata_mode=MetadataMode.NONE),
            metadata=lambda nws: {k: v for k, v in user_metadata(nws.node.metadata).items() if k != signals_key},
            score=lambda nws: nws.score,
            parent=lambda nws: graph_id(nws.node, mapping.id_key),
            unscored="zero",
        )

    # -- the nodes returned -------------------------------------------------------------------

    async def _process(self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None) -> list[NodeWithScore]:
        query = self._query(query_bundle.query_str if query_bundle is not None else None)
        results = self._results(nodes)
        ctx = await self._assembler.abuild(query, results)
        if self.output == "nodes":
            return self._source_nodes(ctx, nodes, results)
        return self._context_nodes(ctx, nodes, results)

    def _source_nodes(self, ctx: Context, nodes: list[NodeWithScore], results: list[Result]) -> list[NodeWithScore]:
        out = []
        for cited, part in zip(citations(ctx, results), context_parts(ctx), strict=True):
            group = cited.indices
            if not group:  # pragma: no cover - passages and evidence cite input documents only
                raise GraphFuseError(f"context source {cited.source.id!r} matches no input node")
            best = max(group, key=lambda i: (_score(nodes[i]), -i))
            info = {
                "marker": cited.marker,
                "source_id": cited.source.id,
                "shortened": cited.source.shortened,
                "node_ids": [nodes[i].node.node_id for i in group],
            }
            node = _tagged(nodes[best].node, info)
            node.set_content(part)
            out.append(NodeWithScore(node=node, score=nodes[best].score))
        return out

    def _context_nodes(self, ctx: Context, nodes: list[NodeWithScore], results: list[Result]) -> list[NodeWithScore]:
        if ctx.is_empty:
            return []
        info = ctx.to_dict()
        del info["text"]
        digest = sha256(ctx.text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        context_node = TextNode(
            id_=f"graphfuse-context-{digest}",
            text=ctx.text,
            metadata={CONTEXT_KEY: info},
            excluded_embed_metadata_keys=[CONTEXT_KEY],
            excluded_llm_metadata_keys=[CONTEXT_KEY],
        )
        cited = [
            # (A graph neighbour the nodes did not hold is in the context node's metadata only.)
            NodeWithScore(
                node=_cited(
                    nodes[i].node, {"marker": c.marker, "source_id": c.source.id, "shortened": c.source.shortened}
                ),
                score=nodes[i].score,
            )
            for c in citations(ctx, results)
            for i in c.indices
        ]
        best = max((s.score for s in ctx.sources), default=None)
        return [NodeWithScore(node=context_node, score=best), *cited]


def _score(nws: NodeWithScore) -> float:
    s = nws.score
    return float(s) if isinstance(s, (int, float)) and math.isfinite(s) else -math.inf


def _hidden(node: BaseNode, metadata: dict[str, Any]) -> dict[str, Any]:
    """The update hiding :data:`CONTEXT_KEY` from embeddings and every metadata key from the LLM: the LLM
    reads the context's text exactly (a source's title is in its part's head)."""
    embed = node.excluded_embed_metadata_keys
    return {
        "metadata": metadata,
        "excluded_embed_metadata_keys": embed if CONTEXT_KEY in embed else [*embed, CONTEXT_KEY],
        "excluded_llm_metadata_keys": list(metadata),
    }


def _tagged(node: BaseNode, info: dict[str, Any]) -> BaseNode:
    """A copy of ``node`` carrying ``info`` under :data:`CONTEXT_KEY` (hidden from embed and LLM text)."""
    metadata = {**node.metadata, CONTEXT_KEY: info}
    return node.model_copy(update=_hidden(node, metadata))


def _cited(node: BaseNode, info: dict[str, Any]) -> ContextSourceNode:
    metadata = {**node.metadata, CONTEXT_KEY: info}
    hidden = _hidden(node, metadata)
    fields: dict[str, Any] = {
        "id_": node.node_id,
        "text": node.get_content(metadata_mode=MetadataMode.NONE),
        "metadata": metadata,
        "excluded_embed_metadata_keys": hidden["excluded_embed_metadata_keys"],
        "excluded_llm_metadata_keys": hidden["excluded_llm_metadata_keys"],
        "relationships": dict(node.relationships),
    }
    if isinstance(node, TextNode):
        fields.update(
            start_char_idx=node.start_char_idx,
            end_char_idx=node.end_char_idx,
            metadata_template=node.metadata_template,
            metadata_separator=node.metadata_separator,
            text_template=node.text_template,
        )
    return ContextSourceNode(**fields)
