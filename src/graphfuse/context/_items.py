"""From ranked results to context items: one per document, chunks merged, best score first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import timezone
from typing import Any

from .._core._errors import InvalidInput
from .._core._types import KIND_KEY, Document, Result
from ._paragraphs import join_paragraphs, title_lines

__all__ = ["Item", "chunked_pages", "item_body", "item_label", "item_title", "items_from_results"]


@dataclass(frozen=True, slots=True)
class Item:
    """One document of a context: its id (the parent for chunks), title, merged text, best score."""

    id: str
    title: str | None
    text: str
    score: float
    metadata: Mapping[str, Any]
    parts: tuple[str, ...]  # the result ids merged into this item


def item_title(metadata: Mapping[str, Any]) -> str | None:
    """A document's title from its metadata (an entity node's name), ``None`` when it has none."""
    title = metadata.get("title")
    if not isinstance(title, str):
        # (An entity node of an entity graph has no title: its name says what it is.)
        title = metadata.get("name") if metadata.get(KIND_KEY) == "entity" else None
    return title.strip() or None if isinstance(title, str) else None


def item_label(document: Document) -> str | None:
    """The head of a document in a context: its title, else, for a dated document, its date.

    An untitled dated passage (a chat conversation, a note, a ticket) would otherwise reach the
    model without the one thing that places it; a question about what was said when, or
    before what, needs it."""
    title = item_title(document.metadata)
    if title is None and document.created_at is not None:
        return document.created_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return title


def item_body(text: str, title: str | None) -> str:
    """``text`` as a context reads it: without the first lines that only say ``title`` (a markdown
    heading, an underlined title: the context's head shows the title already), its paragraphs'
    lines joined (:func:`~graphfuse.context._paragraphs.join_paragraphs`: a hard-wrapped
    paragraph is one line, so a line break never cuts a sentence)."""
    n = title_lines(text, title) if title else 0
    if n:
        rest = "\n".join(text.split("\n", 3)[n:])
        if rest.strip():
            text = rest.lstrip()
    return join_paragraphs(text)


def _overlap(left: str, right: str, limit: int = 2000) -> int:
    """Length of the longest suffix of ``left`` that is a prefix of ``right`` (chunk overlap)."""
    best = 0
    upper = min(len(left), len(right), limit)
    for n in range(upper, 0, -1):
        if left.endswith(right[:n]):
            best = n
            break
    return best


def _join_chunks(texts: Sequence[str]) -> str:
    out = texts[0]
    for nxt in texts[1:]:
        n = _overlap(out, nxt)
        if n >= 20 or n == len(nxt):
            out += nxt[n:]
        else:  # (pieces of a page that do not meet: not one paragraph)
            out = f"{out.rstrip()}\n\n{nxt.lstrip()}"
    return out


def _chunk_index(result: Result) -> int:
    value = result.document.metadata.get("chunk_index")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def items_from_results(results: Sequence[Result]) -> tuple[list[Item], list[Result]]:
    """``(items, results without content)``: chunks of one document (``parent_id``) merged in order.

    Items come in the order of each document's best result; a document's score is its best
    chunk's. Overlapping text between consecutive chunks is written once.
    """
    groups: dict[str, list[Result]] = {}
    missing: list[Result] = []
    for r in results:
        if not isinstance(r, Result):
            raise InvalidInput(f"context assembly takes graphfuse.Result objects, got {type(r).__name__}")
        if r.document.content is None:
            missing.append(r)
            continue
        parent = r.document.metadata.get("parent_id")
        key = parent if isinstance(parent, str) and parent else r.id
        groups.setdefault(key, []).append(r)
    items = []
    for key, members in groups.items():
        if len(members) == 1:  # (most often: a whole document, or one chunk of one)
            r = members[0]
            doc = r.document
            title = item_label(doc)
            items.append(Item(key, title, item_body(doc.content or "", title), float(r.score), doc.metadata, (doc.id,)))
            continue
        best = max(members, key=lambda r: r.score)
        whole = next((r for r in members if r.id == key), None)
        if whole is not None:
            text = whole.document.content or ""
            lead = whole.document
        else:
            ordered = sorted(members, key=_chunk_index)
            text = _join_chunks([r.document.content or "" for r in ordered])
            lead = best.document
        metadata = lead.metadata
        title = item_title(metadata) or next((t for r in members if (t := item_title(r.document.metadata))), None)
        title = title or item_label(lead)
        parts = tuple(r.id for r in members)
        items.append(Item(key, title, item_body(text, title), float(best.score), metadata, parts))
    return items, missing


def chunked_pages(results: Sequence[Result]) -> dict[str, set[str]]:
    """``{page id: ids of its chunks among results}`` for the results that are chunks of a page
    (``parent_id``) with the indexer's ids (``<page id>#<chunk index>``)."""
    out: dict[str, set[str]] = {}
    for r in results:
        parent = r.document.metadata.get("parent_id")
        index = r.document.metadata.get("chunk_index")
        if isinstance(parent, str) and parent and r.id == f"{parent}#{index}" and r.document.content is not None:
            out.setdefault(parent, set()).add(r.id)
    return out
