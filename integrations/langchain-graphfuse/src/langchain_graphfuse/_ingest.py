"""LangChain documents into GraphFuse's indexer: the graph that the retrievers then walk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from langchain_core.documents import Document as LCDocument

from graphfuse import InvalidInput
from graphfuse.indexing import SourceRecord, records_from_loaded

__all__ = ["source_records"]


def source_records(
    documents: Iterable[LCDocument],
    *,
    id_key: str | None = None,
    title_key: str | None = "title",
    created_at_key: str | None = "created_at",
    links_key: str | None = "links",
    path_key: str | None = "source",
    raw_markdown: bool = False,
    on_skip: Callable[[str, str], None] | None = None,
) -> list[SourceRecord]:
    """GraphFuse :class:`~graphfuse.indexing.SourceRecord` s from LangChain documents.

    Index what a loader loaded with ``graphfuse.indexing.Indexer`` to build the graph (title
    mentions, links, entities) that :class:`GraphFuseRetriever` and the graph runnables read.
    The id is ``metadata[id_key]`` when given; else ``Document.id``; else the loader's
    ``metadata["source"]`` (a path or URL), with ``#page=N`` when the metadata has a ``page``
    (a PDF loader's pages share their source). ``title_key``, ``created_at_key``,
    ``links_key`` and ``on_skip`` are as in :func:`graphfuse.indexing.records_from_loaded`,
    which names bad input (``InvalidInput``). GraphFuse chunks long documents itself: pass
    loaded documents rather than split ones. ``documents`` may be any iterable
    (``loader.lazy_load()``).

    Markdown, reStructuredText and text files are read as ``graphfuse index`` reads them (the same
    documents, titles and links; files that are not text skipped with one warning): ``metadata[path_key]`` (the
    loader's ``source``) tells a document read from a ``.md`` file, whose front matter gives its
    title, whose links to the other documents' files become ``LINKS_TO`` relations, and whose
    text is indexed without the markup of documentation tools (``raw_markdown=True`` keeps it);
    see ``records_from_loaded``. Index them with
    ``Indexer.for_records(records, graph, vectors, embedder)`` for the CLI's graph.
    """
    if isinstance(documents, LCDocument):
        raise InvalidInput("documents must be a list of LangChain documents, got a single Document")

    def triple(n: int, doc: Any) -> tuple[str | None, str, Mapping[str, Any]]:
        if not isinstance(doc, LCDocument):
            raise InvalidInput(f"document {n}: expected a LangChain Document, got {type(doc).__name__}")
        metadata = doc.metadata
        if doc.id:
            return doc.id, doc.page_content, metadata
        source = metadata.get("source")
        if not isinstance(source, str) or not source:
            return None, doc.page_content, metadata
        page = metadata.get("page")
        return (source if page is None else f"{source}#page={page}"), doc.page_content, metadata

    return records_from_loaded(
        (triple(n, doc) for n, doc in enumerate(documents)),
        id_key=id_key,
        title_key=title_key,
        created_at_key=created_at_key,
        links_key=links_key,
        path_key=path_key,
        raw_markdown=raw_markdown,
        on_skip=on_skip,
    )
