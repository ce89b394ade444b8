"""LlamaIndex documents into GraphFuse's indexer: the graph that the retrievers then walk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode

from graphfuse import InvalidInput
from graphfuse.indexing import EXCLUDED_KEYS, SourceRecord, records_from_loaded

__all__ = ["source_records"]


def source_records(
    documents: Iterable[BaseNode],
    *,
    id_key: str | None = None,
    title_key: str | None = "title",
    created_at_key: str | None = "created_at",
    links_key: str | None = "links",
    path_key: str | None = "file_path",
    raw_markdown: bool = False,
    on_skip: Callable[[str, str], None] | None = None,
) -> list[SourceRecord]:
    """GraphFuse :class:`~graphfuse.indexing.SourceRecord` s from LlamaIndex documents (or nodes).

    Index what a reader loaded (``SimpleDirectoryReader(...).load_data()``) with
    ``graphfuse.indexing.Indexer`` to build the graph (title mentions, links, entities) that
    :class:`GraphFuseRetriever` and the graph postprocessors read. The id is the node's id
    (``doc_id``; give readers stable ids, e.g. ``SimpleDirectoryReader(..., filename_as_id=True)``,
    or the same files get new ids at every load) or ``metadata[id_key]``; the text is the node's
    content without metadata. ``title_key``, ``created_at_key`` (``"last_modified_date"`` for
    ``SimpleDirectoryReader``'s file dates), ``links_key`` and ``on_skip`` are as in
    :func:`graphfuse.indexing.records_from_loaded`, which names bad input (``InvalidInput``).
    GraphFuse chunks long documents itself: pass documents rather than split nodes. The keys a
    document keeps out of prompts and embeddings (``excluded_llm_metadata_keys``,
    ``excluded_embed_metadata_keys``: a reader's file metadata, your own) are stored with it
    (:data:`graphfuse.indexing.EXCLUDED_KEYS`), and the nodes GraphFuse builds from it hide them too.

    Markdown, reStructuredText and text files are read as ``graphfuse index`` reads them (the same
    documents, titles and links; files that are not text skipped with one warning): ``metadata[path_key]`` (the
    reader's ``file_path``) tells a document read from a ``.md`` file, whose front matter gives
    its title, whose links to the other documents' files become ``LINKS_TO`` relations, and
    whose text is indexed without the markup of documentation tools (``raw_markdown=True``
    keeps it); see ``records_from_loaded``. Index them with
    ``Indexer.for_records(records, graph, vectors, embedder)`` for the CLI's graph.
    """
    if isinstance(documents, BaseNode):
        raise InvalidInput("documents must be a list of LlamaIndex documents or nodes, got a single node")

    def triple(n: int, node: Any) -> tuple[str | None, str, dict[str, Any]]:
        if not isinstance(node, BaseNode):
            raise InvalidInput(f"document {n}: expected a LlamaIndex Document or node, got {type(node).__name__}")
        metadata = dict(node.metadata)
        llm, embed = node.excluded_llm_metadata_keys, node.excluded_embed_metadata_keys
        if llm or embed:  # kept with the document, so the nodes built from it hide the same keys
            metadata[EXCLUDED_KEYS] = {"llm": list(llm), "embed": list(embed)}
        return node.node_id, node.get_content(metadata_mode=MetadataMode.NONE), metadata

    return records_from_loaded(
        (triple(n, node) for n, node in enumerate(documents)),
        id_key=id_key,
        title_key=title_key,
        created_at_key=created_at_key,
        links_key=links_key,
        path_key=path_key,
        raw_markdown=raw_markdown,
        on_skip=on_skip,
    )
