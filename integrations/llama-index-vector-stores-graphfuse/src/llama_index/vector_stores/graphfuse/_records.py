"""LlamaIndex nodes as GraphFuse source records, and back.

The nodes of one source document (``ref_doc_id``) are one GraphFuse page, as ``graphfuse index``
makes of a file: its text the document's (rebuilt from the nodes' spans), its title, links and
dates read from that text and the reader's metadata as
:func:`graphfuse.indexing.records_from_loaded` reads them (a markdown file's front matter, first
heading and links to the other files), and its nodes as its chunks
(:attr:`graphfuse.indexing.SourceRecord.chunks`: LlamaIndex's node parser already chunked it),
each stored with the whole node (LlamaIndex's own serialisation, ``_node_content``) so the query
returns the node that was added. A source document of one node is that node, stored whole.
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
from graphfuse.indexing import EXCLUDED_KEYS, Chunk, SourceRecord, TokenChunker, records_from_loaded

__all__ = [
    "NODE_CONTENT",
    "NODE_TYPE",
    "PASSAGES",
    "canonical",
    "is_host_document",
    "is_host_page",
    "node_of",
    "pages_of",
    "parts_of",
    "records_of",
    "scored_node",
    "source_of",
    "unit_texts",
]

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
    return (source_of(node), start if isinstance(start, int) else 0, node.node_id)


def source_of(node: BaseNode) -> str:
    """The id of the GraphFuse page holding ``node``: its source document's (``ref_doc_id``), or
    its own for a node without one."""
    return node.ref_doc_id or node.node_id


def is_host_page(document: Document) -> bool:
    """True for a page :class:`GraphFuseVectorStore` wrote for a source document of several nodes
    (the nodes are its chunks; the page holds no node of its own)."""
    return not is_host_document(document) and document.metadata.get("ref_doc_id") == document.id


def _span(node: BaseNode) -> tuple[object, object]:
    # A TextNode's place in its source document (other nodes have none).
    return getattr(node, "start_char_idx", None), getattr(node, "end_char_idx", None)


def _page_text(members: list[BaseNode]) -> str:
    """The source document's text, rebuilt from its nodes' spans (``start_char_idx``), overlaps
    once; nodes without spans are joined by blank lines."""
    texts = [m.get_content(metadata_mode=MetadataMode.NONE) for m in members]
    spans = [_span(m) for m in members]
    exact = [
        (a, b)
        for (a, b), t in zip(spans, texts, strict=True)
        if isinstance(a, int) and isinstance(b, int) and b - a == len(t)
    ]
    if len(exact) != len(texts):
        return "\n\n".join(texts)
    out: list[str] = []
    reached = 0
    for (start, end), text in zip(exact, texts, strict=True):
        if out and start > reached:
            out.append("\n")
        out.append(text[max(0, reached - start) :] if out else text)
        reached = max(reached, end)
    return "".join(out)


def _metadata(node: BaseNode) -> dict[str, Any]:
    metadata = node_to_metadata_dict(node, remove_text=False, flat_metadata=False)
    llm, embed = node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys
    if llm or embed:
        metadata[EXCLUDED_KEYS] = {"llm": list(llm), "embed": list(embed)}
    return metadata


def pages_of(nodes: Iterable[BaseNode]) -> dict[str, list[BaseNode]]:
    """The nodes by the page holding them (:func:`source_of`), each page's in their order in it."""
    groups: dict[str, list[BaseNode]] = {}
    for node in sorted(nodes, key=_order):
        groups.setdefault(source_of(node), []).append(node)
    return groups


PASSAGES = TokenChunker()
"""How a node's text is cut into passages for the graph and BM25: ``graphfuse index``'s chunker
(256 tokens, 32 shared), so a node is searched by words as a CLI-built store's passages are."""


def _pieces(node: BaseNode, chunker: TokenChunker) -> list[tuple[str, int, int]]:
    """``node``'s passages: (text, start, end) in its source document (its own offsets when it has none)."""
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    start, end = _span(node)
    base = start if isinstance(start, int) and isinstance(end, int) and end - start == len(text) else None
    out = []
    for c in chunker.split(text):
        offset = base if base is not None else 0
        out.append((c.text, offset + c.start, offset + c.end))
    return out


Parts = tuple[dict[str, Any], list[tuple[str, int, int]]]
"""What a page takes from one node: its metadata as stored, and its passages."""


def parts_of(node: BaseNode, chunker: TokenChunker = PASSAGES) -> Parts:
    """``node``'s metadata as stored (LlamaIndex's serialisation included) and its passages."""
    return _metadata(node), _pieces(node, chunker)


def _parts(node: BaseNode, chunker: TokenChunker, memo: dict[str, Parts] | None) -> Parts:
    if memo is None:
        return parts_of(node, chunker)
    found = memo.get(node.node_id)
    if found is None:
        found = memo[node.node_id] = parts_of(node, chunker)
    return found


def records_of(
    nodes: Iterable[BaseNode], chunker: TokenChunker = PASSAGES, memo: dict[str, Parts] | None = None
) -> list[tuple[SourceRecord, list[str]]]:
    """The nodes as GraphFuse pages, in a canonical order (the same records whatever batches
    they came in), each with the node id of each of its units (its chunks', or its own).

    One page per source document (``ref_doc_id``), read as ``graphfuse index`` reads its file
    (title, links, front matter: :func:`~graphfuse.indexing.records_from_loaded`) from the text
    its nodes span. Each node is cut into passages by ``chunker`` (a node no longer than its
    ``max_tokens`` is one); a page of several passages has them as its chunks (each holding its
    node, whose embedding stands for each of its passages; the page the metadata its nodes
    share), a page of one passage is that node. ``memo`` keeps each node's :func:`parts_of` by
    node id, so that a write reads again only the nodes it brings."""
    groups = pages_of(nodes)
    own: dict[str, list[tuple[BaseNode, dict[str, Any], list[tuple[str, int, int]]]]] = {}
    triples: list[tuple[str, str, dict[str, Any]]] = []
    for source, members in groups.items():
        parts = [_parts(m, chunker, memo) for m in members]
        metas = [meta for meta, _ in parts]
        pieces = [p for _, p in parts]
        if len(members) == 1 and len(pieces[0]) == 1:
            triples.append((source, members[0].get_content(metadata_mode=MetadataMode.NONE), metas[0]))
            continue
        first = metas[0]
        shared = {
            k: v
            for k, v in first.items()
            if k not in (NODE_CONTENT, NODE_TYPE) and all(k in m and m[k] == v for m in metas[1:])
        }
        own[source] = [
            (node, {k: v for k, v in m.items() if k not in shared}, p)
            for node, m, p in zip(members, metas, pieces, strict=True)
        ]
        triples.append((source, _page_text(members), shared))
    out: list[tuple[SourceRecord, list[str]]] = []
    for record in records_from_loaded(triples, path_key="file_path"):
        mine = own.get(record.id)
        if mine is None:
            out.append((record, [groups[record.id][0].node_id]))
            continue
        chunks: list[Chunk] = []
        ids: list[str] = []
        for node, meta, node_pieces in mine:
            for text, start, end in node_pieces:
                chunks.append(Chunk(len(chunks), text, start, end, metadata=meta))
                ids.append(node.node_id)
        out.append((dataclasses.replace(record, chunks=tuple(chunks)), ids))
    return out


def unit_texts(record: SourceRecord) -> list[str]:
    """The texts the indexer embeds for ``record`` (its chunks', or its own), in order."""
    return [c.text for c in record.chunks] if record.chunks else [record.text]


def node_of(document: Document) -> BaseNode:
    """The node stored in ``document`` (as it was added), or a GraphFuse node for a document the
    CLI indexed; bookkeeping keys hidden from the LLM and the embedder."""
    if not is_host_document(document):
        return node_from_document(document, {}, None, _MAPPING).node
    try:
        node = metadata_dict_to_node(dict(document.metadata))
    except ValueError as exc:
        raise InvalidInput(f"document {document.id!r}: its stored LlamaIndex node does not parse ({exc})") from exc
    return canonical(node)


def canonical(node: BaseNode) -> BaseNode:
    """``node`` as the store reads it back (its bookkeeping keys hidden from the LLM and the
    embedder): a page reads the same from a node just added and from one stored before."""
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
