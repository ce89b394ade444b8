"""Records from documents that another library loaded (LlamaIndex readers, LangChain loaders)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .._encoding import as_json_data
from .._errors import InvalidInput
from .._timestamps import parse_timestamp
from ._records import SourceRecord

__all__ = ["records_from_loaded"]


def records_from_loaded(
    documents: Iterable[tuple[str | None, str, Mapping[str, Any]]],
    *,
    title_key: str | None = "title",
    created_at_key: str | None = "created_at",
    links_key: str | None = "links",
    on_skip: Callable[[str, str], None] | None = None,
) -> list[SourceRecord]:
    """:class:`SourceRecord` s from ``(id, text, metadata)`` of documents a loader produced.

    From the metadata, ``metadata[title_key]`` (text) becomes the title,
    ``metadata[created_at_key]`` (a datetime, an ISO 8601 string or POSIX seconds) the
    ``created_at`` and ``metadata[links_key]`` (a list of other documents' ids) the links;
    those keys leave the metadata, and ``None`` turns one off. The rest stays metadata, made
    JSON data: dates and times as ISO 8601 strings, paths as text, tuples as lists. A document
    whose text is blank (a PDF's empty page) is skipped, and ``on_skip(id, reason)`` called.

    Raises :class:`~graphfuse.InvalidInput` naming the document (its position and id) for a
    missing id, a title that is not text, an unreadable timestamp, links that are not a list of
    ids, metadata that cannot be stored, and ids that repeat (all listed; nothing is returned).
    """
    out: list[SourceRecord] = []
    seen: set[str] = set()
    repeated: list[str] = []
    for n, (doc_id, text, metadata) in enumerate(documents):
        what = f"document {n}" + (f" ({doc_id!r})" if doc_id else "")
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InvalidInput(f"{what}: no id; give the documents ids (or read the id from a metadata key)")
        if not isinstance(text, str):
            raise InvalidInput(f"{what}: text must be a string, got {type(text).__name__}")
        if not text.strip():
            if on_skip is not None:
                on_skip(doc_id, "no text")
            continue
        if not isinstance(metadata, Mapping):
            raise InvalidInput(f"{what}: metadata must be a mapping, got {type(metadata).__name__}")
        meta = dict(metadata)
        title = meta.pop(title_key, None) if title_key is not None else None
        if title is not None and not isinstance(title, str):
            raise InvalidInput(f"{what}: metadata {title_key!r} (the title) must be text, got {title!r}")
        stamp = meta.pop(created_at_key, None) if created_at_key is not None else None
        created = parse_timestamp(stamp, f"{what}: metadata {created_at_key!r}")
        links = meta.pop(links_key, None) if links_key is not None else None
        if links is None:
            links = []
        if isinstance(links, str) or not isinstance(links, list | tuple) or not all(isinstance(x, str) for x in links):
            raise InvalidInput(
                f"{what}: metadata {links_key!r} (the links) must be a list of document ids, got {links!r:.80}; "
                f"if the loader keeps something else under {links_key!r}, pass links_key=None"
            )
        if doc_id in seen:
            repeated.append(doc_id)
            continue
        seen.add(doc_id)
        try:
            record = SourceRecord(
                doc_id,
                text,
                title=(title.strip() or None) if title else None,
                metadata=as_json_data(meta),
                created_at=created,
                links=tuple(links),
            )
        except InvalidInput as exc:
            raise InvalidInput(f"{what}: {exc}") from None
        out.append(record)
    if repeated:
        shown = ", ".join(map(repr, sorted(set(repeated))[:20]))
        raise InvalidInput(
            f"{len(repeated)} document id(s) given twice: {shown}; ids name documents in the graph, give each "
            "its own (chunks split from one document share its id: pass the documents, GraphFuse chunks them)"
        )
    return out
