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
import re
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
from graphfuse.indexing import (
    EXCLUDED_KEYS,
    Chunk,
    SourceRecord,
    TokenChunker,
    embedding_text,
    records_from_loaded,
)

__all__ = [
    "NODE_CONTENT",
    "NODE_TYPE",
    "PASSAGES",
    "canonical",
    "embed_texts",
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
    return _page_layout(members)[0]


def _page_layout(members: list[BaseNode], gaps: bool = False) -> tuple[str, list[tuple[int, int]]]:
    """:func:`_page_text` and where each node's text is in it (start, end). ``gaps``: the
    characters between two nodes (the whitespace a node parser strips at their ends) are a
    blank line and the indentation, as long as the gap, rather than one line break."""
    texts = [m.get_content(metadata_mode=MetadataMode.NONE) for m in members]
    spans = [_span(m) for m in members]
    exact = [
        (a, b)
        for (a, b), t in zip(spans, texts, strict=True)
        if isinstance(a, int) and isinstance(b, int) and b - a == len(t)
    ]
    places: list[tuple[int, int]] = []
    if len(exact) != len(texts):
        at = 0
        for text in texts:
            places.append((at, at + len(text)))
            at += len(text) + 2
        return "\n\n".join(texts), places
    out: list[str] = []
    size = reached = 0
    for (start, end), text in zip(exact, texts, strict=True):
        if out and start > reached:
            gap = "\n\n" + " " * (start - reached - 2) if gaps and start - reached > 1 else "\n"
            out.append(gap)
            size += len(gap)
        part = text[max(0, reached - start) :] if out else text
        begin = size - (len(text) - len(part))
        places.append((begin, begin + len(text)))
        out.append(part)
        size += len(part)
        reached = max(reached, end)
    return "".join(out), places


_WORD = re.compile(r"\w+")
_ANCHOR_WORDS = 4  # consecutive words of a passage looked for in its nodes' text
_LOOKAHEAD = 50_000  # characters of the nodes' text searched past the previous passage's place


def _anchors(chunks: list[Chunk], raw: str) -> list[int]:
    """Where each passage of a page's indexed text (``chunks``: the text ``graphfuse index``
    reads, documentation-tool markup removed) is in its nodes' own text ``raw``: the place of a
    few consecutive words of its middle, looked for after the previous passage's (kept when
    none of the tries is found)."""
    at, out = 0, []
    for chunk in chunks:
        words = _WORD.findall(chunk.text)
        middle = max(0, len(words) // 2 - _ANCHOR_WORDS // 2)
        for shift in (0, _ANCHOR_WORDS, -_ANCHOR_WORDS, 2 * _ANCHOR_WORDS, -2 * _ANCHOR_WORDS):
            window = words[max(0, middle + shift) : max(0, middle + shift) + _ANCHOR_WORDS]
            if not window:
                continue
            pattern = r"\b" + r"\W+".join(re.escape(w) for w in window) + r"\b"
            match = re.compile(pattern).search(raw, at, at + _LOOKAHEAD)
            if match is not None:
                at = match.start()
                break
        out.append(at)
    return out


def _owners(chunks: list[Chunk], raw: str, places: list[tuple[int, int]]) -> list[int] | None:
    """For each passage of a page (``chunks``), the node it comes from (an index in ``places``,
    each node's span in ``raw``, in order): the passages in order, each node holding one at
    least, each passage's place (:func:`_anchors`) inside its node and as far from the node's
    ends as can be (the sum of those distances most), or else near enough that the passage
    reaches into it. ``None`` when that cannot be (the nodes outnumber the passages, or a short
    node is out of every passage's reach)."""
    n_chunks, n_nodes = len(chunks), len(places)
    if n_nodes > n_chunks:
        return None
    anchors = _anchors(chunks, raw)
    outside = 2.0 * (len(raw) + 1) * n_chunks  # more than all the distances inside together

    def cost(c: int, n: int) -> float:
        at, (a, b) = anchors[c], places[n]
        if a <= at < b:
            return float(-min(at - a, b - at))
        off = max(a - at, at - b)  # a passage reaches half its length either side of its middle
        return float(off if off <= len(chunks[c].text) // 2 else outside + off)

    inf = float("inf")
    # best[n]: least cost of the passages so far, the last one held by node n; came[c][n]: node of c-1.
    best = [cost(0, 0)] + [inf] * (n_nodes - 1)
    came: list[list[int]] = [[0] * n_nodes]
    for c in range(1, n_chunks):
        row, back = [inf] * n_nodes, [0] * n_nodes
        for n in range(min(c + 1, n_nodes)):
            stay, step = best[n], best[n - 1] if n else inf
            prev = n if stay <= step else n - 1
            if min(stay, step) < inf:
                row[n], back[n] = min(stay, step) + cost(c, n), prev
        best = row
        came.append(back)
    if best[-1] >= outside / 2:
        return None  # a passage whose place is in none of the nodes it could be held by
    owners, node = [0] * n_chunks, n_nodes - 1
    for c in range(n_chunks - 1, -1, -1):
        owners[c] = node
        node = came[c][node]
    return owners


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
    nodes: Iterable[BaseNode],
    chunker: TokenChunker = PASSAGES,
    memo: dict[str, Parts] | None = None,
    *,
    page_passages: bool = False,
) -> list[tuple[SourceRecord, list[str]]]:
    """The nodes as GraphFuse pages, in a canonical order (the same records whatever batches
    they came in), each with the node id of each of its units (its chunks', or its own).

    One page per source document (``ref_doc_id``), read as ``graphfuse index`` reads its file
    (title, links, front matter: :func:`~graphfuse.indexing.records_from_loaded`) from the text
    its nodes span. Each node is cut into passages by ``chunker`` (a node no longer than its
    ``max_tokens`` is one); a page of several passages has them as its chunks (each holding its
    node, whose embedding stands for each of its passages; the page the metadata its nodes
    share), a page of one passage is that node. ``memo`` keeps each node's :func:`parts_of` by
    node id, so that a write reads again only the nodes it brings.

    ``page_passages``: a page's passages are ``chunker``'s cut of its indexed text, as
    ``graphfuse index`` cuts a file (the nodes' overlaps once, without documentation-tool
    markup), each holding the node it comes from (:func:`_owners`); a page whose text is one
    passage, or whose nodes cannot each hold a passage of their own (nodes shorter than the
    passages), keeps its nodes' own."""
    groups = pages_of(nodes)
    layouts: dict[str, tuple[str, list[tuple[int, int]]]] = {}
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
        layouts[source] = _page_layout(members, gaps=page_passages)
        triples.append((source, layouts[source][0], shared))
    out: list[tuple[SourceRecord, list[str]]] = []
    for record in records_from_loaded(triples, path_key="file_path"):
        mine = own.get(record.id)
        if mine is None:
            out.append((record, [groups[record.id][0].node_id]))
            continue
        chunks: list[Chunk] = []
        ids: list[str] = []
        cut = chunker.split(record.text) if page_passages else []
        owners = _owners(cut, *layouts[record.id]) if len(cut) > 1 else None
        if owners is not None:
            for chunk, owner in zip(cut, owners, strict=True):
                node, meta, _ = mine[owner]
                chunks.append(dataclasses.replace(chunk, metadata=meta))
                ids.append(node.node_id)
            out.append((dataclasses.replace(record, chunks=tuple(chunks)), ids))
            continue
        for node, meta, node_pieces in mine:
            for text, start, end in node_pieces:
                chunks.append(Chunk(len(chunks), text, start, end, metadata=meta))
                ids.append(node.node_id)
        out.append((dataclasses.replace(record, chunks=tuple(chunks)), ids))
    return out


def unit_texts(record: SourceRecord) -> list[str]:
    """The texts the indexer embeds for ``record`` (its chunks', or its own), in order."""
    return [c.text for c in record.chunks] if record.chunks else [record.text]


def embed_texts(record: SourceRecord) -> list[str]:
    """The texts ``graphfuse index`` embeds for ``record``'s units: each with its page's title on
    a line of its own before it (unless it starts with the title), in :func:`unit_texts`' order."""
    return [embedding_text(record.title, t) for t in unit_texts(record)]


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
