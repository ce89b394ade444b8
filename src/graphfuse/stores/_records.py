"""Validation and JSON encoding shared by the embedded stores.

Both graph stores (SQLite and in-memory) and the vector store run every batch through these
checks *before* writing anything, so a bad batch raises without a partial write and both
graph stores reject exactly the same input.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from .._core._encoding import check_numbers, check_text, first_surrogate
from .._core._errors import InvalidInput, StoreCorrupted
from .._core._filters import FilterLike, MetadataFilter
from .._core._types import Document, Relation

__all__ = [
    "CHECK_HINT",
    "DocumentRow",
    "check_depth",
    "check_ids",
    "check_limit",
    "check_relation_types",
    "check_relations",
    "decode_metadata",
    "document_rows",
    "encode_metadata",
    "parse_filter",
    "row_to_document",
]

CHECK_HINT = "the store is damaged: run `graphfuse check --store DIR` on its directory for every damaged row and file"

# (id, content, metadata JSON, created_at ISO, updated_at ISO)
DocumentRow = tuple[str, "str | None", str, "str | None", "str | None"]


def _batch(value: object, what: str) -> Sequence[Any]:
    if type(value) is list or type(value) is tuple:  # the usual batch, without the ABC check
        return value
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise InvalidInput(f"{what} must be a sequence, got {type(value).__name__}")
    return value


def encode_metadata(metadata: Mapping[str, Any], owner: str) -> str:
    """Metadata as canonical JSON; ``InvalidInput`` naming ``owner`` when it is not JSON data
    (or holds a number no store keeps: NaN, infinity, an integer beyond 64 bits)."""
    if not metadata:
        return "{}"
    for key in metadata:
        if not isinstance(key, str):
            raise InvalidInput(f"{owner}: metadata keys must be strings, got {key!r}")
    check_numbers(metadata, owner)
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{owner}: metadata is not JSON-serialisable ({exc})") from None
    if first_surrogate(text) is not None:
        raise InvalidInput(f"{owner}: metadata holds a string that is not valid Unicode (a lone surrogate)")
    return text


def decode_metadata(text: str, where: str = "a stored record") -> dict[str, Any]:
    """Stored metadata back as a dict; :class:`StoreCorrupted` naming ``where`` when it is not a JSON object.

    Everything a store writes went through :func:`encode_metadata`, so a row that does not
    decode was damaged or written by something else.
    """
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StoreCorrupted(f"{where}: stored metadata is not JSON ({exc}); {CHECK_HINT}") from None
    if not isinstance(value, dict):
        raise StoreCorrupted(f"{where}: stored metadata is not a JSON object; {CHECK_HINT}")
    return value


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def document_rows(documents: Sequence[Document]) -> list[DocumentRow]:
    """Validate a batch of documents (types, unique ids, JSON metadata) and encode it."""
    rows: list[DocumentRow] = []
    seen: set[str] = set()
    for doc in _batch(documents, "documents"):
        if not isinstance(doc, Document):
            raise InvalidInput(f"documents must be Document objects, got {type(doc).__name__}")
        if doc.id in seen:
            raise InvalidInput(f"document id {doc.id!r} appears twice in one batch")
        seen.add(doc.id)
        metadata = encode_metadata(doc.metadata, f"document {doc.id!r}")
        if doc.content is not None:
            check_text(doc.content, f"document {doc.id!r}: content")
        rows.append((doc.id, doc.content, metadata, _iso(doc.created_at), _iso(doc.updated_at)))
    return rows


def row_to_document(row: Sequence[Any], where: str = "a stored document") -> Document:
    """The inverse of one :func:`document_rows` row (``where`` names the store in errors)."""
    doc_id, content, metadata, created, updated = row
    owner = f"{where}: document {doc_id!r}"
    if not isinstance(doc_id, str) or not (content is None or isinstance(content, str)):
        raise StoreCorrupted(f"{owner}: stored id or content is not text; {CHECK_HINT}")
    try:
        created_at = None if created is None else datetime.fromisoformat(created)
        updated_at = None if updated is None else datetime.fromisoformat(updated)
    except (TypeError, ValueError) as exc:
        raise StoreCorrupted(f"{owner}: stored timestamp is not ISO 8601 ({exc}); {CHECK_HINT}") from None
    # Built as trusted: what is stored is read back as it is, so a value no writer lets in (an
    # integer beyond 64 bits, written into the file by other means) never makes a document unreadable.
    return Document.trusted(doc_id, content, decode_metadata(metadata, owner), _utc(created_at), _utc(updated_at))


def _utc(value: datetime | None) -> datetime | None:
    if value is None or value.tzinfo is None:
        return None if value is None else value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def check_relations(relations: Sequence[Relation]) -> dict[tuple[str, str, str], tuple[Relation, str]]:
    """Validate a batch of relations, with their metadata as JSON.

    Duplicates by (source, target, type) collapse (the last wins).
    """
    out: dict[tuple[str, str, str], tuple[Relation, str]] = {}
    for rel in _batch(relations, "relations"):
        if not isinstance(rel, Relation):
            raise InvalidInput(f"relations must be Relation objects, got {type(rel).__name__}")
        if rel.source == rel.target:
            raise InvalidInput(f"relation {rel.source!r} -[{rel.type}]-> {rel.target!r} is a self-loop")
        metadata = encode_metadata(rel.metadata, f"relation {rel.source!r} -[{rel.type}]-> {rel.target!r}")
        out[(rel.source, rel.target, rel.type)] = (rel, metadata)
    return out


def check_ids(ids: Sequence[str], what: str = "ids") -> list[str]:
    """A list of ids, rejecting a bare string (a common slip for a one-element list)."""
    values = list(_batch(ids, what))
    for value in values:
        if not isinstance(value, str):
            raise InvalidInput(f"{what} must be strings, got {type(value).__name__}")
    return values


def check_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= 3:
        raise InvalidInput(f"depth must be an integer from 1 to 3, got {depth!r}")
    return depth


def check_limit(limit: int | None) -> int | None:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidInput(f"limit must be a non-negative integer or None, got {limit!r}")
    return limit


def check_relation_types(types: Sequence[str] | None) -> frozenset[str] | None:
    if types is None:
        return None
    values = _batch(types, "relation_types")
    for value in values:
        if not isinstance(value, str):
            raise InvalidInput(f"relation_types must be strings, got {type(value).__name__}")
    return frozenset(values)


def parse_filter(spec: FilterLike | None) -> MetadataFilter | None:
    return MetadataFilter.parse(spec)
