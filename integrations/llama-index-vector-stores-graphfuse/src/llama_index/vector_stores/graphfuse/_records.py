"""LlamaIndex nodes as GraphFuse source records, and back.

Each node is one GraphFuse document (its id the node's id, never split again: LlamaIndex's
node parser already chunked it), stored with the whole node (LlamaIndex's own serialisation,
``_node_content``) so the query returns the node that was added. Titles, links and dates come
from the text and the reader's metadata as :func:`graphfuse.indexing.records_from_loaded` reads
them (a markdown file's front matter, first heading and links to the other files); the nodes of
one source document share its title, so a mention of the page links to the page's nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
from llama_index.retrievers.graphfuse.nodes import (
    BOOKKEEPING_KEYS,
    CONTRIBUTIONS_KEY,
    SIGNALS_KEY,
    NodeMapping,
    node_from_document,
    node_from_result,
)

from graphfuse import Document, InvalidInput, Result
from graphfuse.indexing import EXCLUDED_KEYS, SourceRecord, records_from_loaded

__all__ = ["NODE_CONTENT", "NODE_TYPE", "is_host_document", "node_of", "records_of", "scored_node"]

NODE_CONTENT = "_node_content"
"""Metadata key holding the node as LlamaIndex serialises it (what LlamaIndex's own stores keep)."""
NODE_TYPE = "_node_type"
"""Metadata key holding the node's class name."""

_MAPPING = NodeMapping()


def is_host_document(document: Document) -> bool:
    """True when ``document`` was written through :class:`GraphFuseVectorStore` (it holds its node)."""
    return isinstance(document.metadata.get(NODE_CONTENT), str)


def _order(node: BaseNode) -> tuple[str, int, str]:
    # One order whatever the batches were: by source document, then position in it.
    start = getattr(node, "start_char_idx", None)
    return (node.ref_doc_id or node.node_id, start if isinstance(start, int) else 0, node.node_id)


def records_of(nodes: Iterable[BaseNode]) -> list[SourceRecord]:
    """The nodes as records, in a canonical order (the same records whatever batches they came in)."""
    ordered = sorted(nodes, key=_order)

    def triple(node: BaseNode) -> tuple[str, str, dict[str, Any]]:
        metadata = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
        llm, embed = node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys
        if llm or embed:
            metadata[EXCLUDED_KEYS] = {"llm": list(llm), "embed": list(embed)}
        return node.node_id, node.get_content(metadata_mode=MetadataMode.NONE), metadata

    records = records_from_loaded((triple(n) for n in ordered), path_key="file_path")
    own_title = {n.node_id for n in ordered if isinstance(n.metadata.get("title"), str)}
    source = {n.node_id: n.ref_doc_id for n in ordered}
    page_title: dict[str, str | None] = {}
    out: list[SourceRecord] = []
    for record in records:
        ref = source.get(record.id)
        if ref is None or record.id in own_title:
            out.append(record)
            continue
        if ref not in page_title:
            page_title[ref] = record.title  # the first node of the page (front matter, first heading)
            out.append(record)
        else:
            out.append(dataclasses.replace(record, title=page_title[ref]))
    return out


def node_of(document: Document) -> BaseNode:
    """The node stored in ``document`` (as it was added), or a GraphFuse node for a document the
    CLI indexed; bookkeeping keys hidden from the LLM and the embedder."""
    if not is_host_document(document):
        return node_from_document(document, {}, None, _MAPPING).node
    try:
        node = metadata_dict_to_node(dict(document.metadata))
    except ValueError as exc:
        raise InvalidInput(f"document {document.id!r}: its stored LlamaIndex node does not parse ({exc})") from exc
    return _hide(node, [k for k in BOOKKEEPING_KEYS if k in node.metadata])


def _hide(node: BaseNode, keys: list[str]) -> BaseNode:
    llm, embed = list(node.excluded_llm_metadata_keys), list(node.excluded_embed_metadata_keys)
    node.excluded_llm_metadata_keys = [*llm, *(k for k in keys if k not in llm)]
    node.excluded_embed_metadata_keys = [*embed, *(k for k in keys if k not in embed)]
    return node


def scored_node(result: Result) -> NodeWithScore:
    """A pipeline result as the node LlamaIndex gets back: the node that was added (or a GraphFuse
    node), its signals and their shares in metadata hidden from the LLM and the embedder."""
    if not is_host_document(result.document):
        return node_from_result(result, _MAPPING)
    node = node_of(result.document)
    extra: Mapping[str, Any] = {SIGNALS_KEY: dict(result.signals), CONTRIBUTIONS_KEY: dict(result.contributions)}
    node.metadata.update(extra)
    return NodeWithScore(node=_hide(node, list(extra)), score=result.score)
