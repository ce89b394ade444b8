"""Source records and the readers that turn files into them."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._encoding import check_json_data, check_text
from .._errors import InvalidInput
from .._jsonl import read_json_objects
from .._types import check_id

__all__ = ["SourceRecord", "read_sources"]

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_TEXT_SUFFIXES = (".txt", ".md", ".markdown")
_SUFFIXES = (*_TEXT_SUFFIXES, ".jsonl")
RESERVED_KEYS = frozenset({"parent_id"})
"""Metadata keys the indexer writes itself (besides every key starting with ``graphfuse_``)."""
RESERVED_PREFIX = "graphfuse_"


def reserved_key(key: str) -> bool:
    """True when ``key`` belongs to GraphFuse's own bookkeeping (``parent_id``, ``graphfuse_*``)."""
    return key in RESERVED_KEYS or key.startswith(RESERVED_PREFIX)


@dataclass(frozen=True)
class SourceRecord:
    """One document to index.

    ``links`` are ids of other documents this one points to (``LINKS_TO`` relations);
    ``title`` feeds the title linker (other passages that mention it get a ``MENTIONS``
    relation to this document). Naive ``created_at`` is taken as UTC.
    """

    id: str
    text: str
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    links: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_id(self.id)
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidInput(f"record {self.id!r}: text must be a non-empty string")
        if self.title is not None and not isinstance(self.title, str):
            raise InvalidInput(f"record {self.id!r}: title must be a string or None")
        if not isinstance(self.metadata, Mapping):
            raise InvalidInput(f"record {self.id!r}: metadata must be a mapping")
        check_text(self.id, "record id")
        check_text(self.text, f"record {self.id!r}: text")
        if self.title is not None:
            check_text(self.title, f"record {self.id!r}: title")
        for key in self.metadata:
            if isinstance(key, str) and reserved_key(key):
                raise InvalidInput(
                    f"record {self.id!r}: metadata key {key!r} is reserved for GraphFuse's own bookkeeping "
                    f"('parent_id' and keys starting with {RESERVED_PREFIX!r}); rename it"
                )
        check_json_data(self.metadata, f"record {self.id!r}")
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))
        if self.created_at is not None:
            if not isinstance(self.created_at, datetime):
                raise InvalidInput(f"record {self.id!r}: created_at must be a datetime")
            if self.created_at.tzinfo is None:
                object.__setattr__(self, "created_at", self.created_at.replace(tzinfo=timezone.utc))
        if isinstance(self.links, (str, bytes)) or not all(isinstance(x, str) for x in self.links):
            raise InvalidInput(f"record {self.id!r}: links must be a sequence of document ids")
        object.__setattr__(self, "links", tuple(check_id(x, f"record {self.id!r} link") for x in self.links))
        for link in self.links:
            check_text(link, f"record {self.id!r}: link")


def read_sources(paths: Sequence[str | os.PathLike[str]]) -> Iterator[SourceRecord]:
    """Read records from ``.txt``/``.md`` files, ``.jsonl`` files and directories of them.

    A text file becomes one record: its id is its path relative to the directory given (or
    its file name when the file itself was given), its title the first markdown heading or the
    file stem. A ``.jsonl`` line is ``{"id", "text", "title"?, "metadata"?, "created_at"?,
    "links"?}`` (``created_at`` in ISO 8601). An empty file (``.txt`` or ``.jsonl``, blank lines
    only) raises :class:`~graphfuse.InvalidInput` naming it. A malformed line raises
    :class:`~graphfuse.InvalidInput` naming ``file:line``; an id seen twice raises
    ``InvalidInput`` listing the repeated ids (after the whole input was read, so every
    duplicate is named at once; nothing is yielded past the first duplicate).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    seen: set[str] = set()
    repeated: list[str] = []
    for path in _expand(paths):
        for record in _read_file(*path):
            if record.id in seen:
                repeated.append(record.id)
                continue
            seen.add(record.id)
            if not repeated:
                yield record
    if repeated:
        shown = ", ".join(map(repr, sorted(set(repeated))[:20]))
        raise InvalidInput(f"{len(repeated)} duplicate document id(s) in the sources: {shown}")


def _expand(paths: Sequence[str | os.PathLike[str]]) -> Iterator[tuple[Path, str]]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in _SUFFIXES)
            for f in files:
                yield f, f.relative_to(path).as_posix()
        elif path.is_file():
            if path.suffix.lower() not in _SUFFIXES:
                raise InvalidInput(f"{path}: unsupported file type (use .txt, .md or .jsonl)")
            yield path, path.name
        else:
            raise InvalidInput(f"{path}: no such file or directory")


def _read_file(path: Path, rel: str) -> Iterator[SourceRecord]:
    if path.suffix.lower() == ".jsonl":
        yield from _read_jsonl(path)
        return
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InvalidInput(
            f"{path}:{line}: not valid UTF-8 (byte {data[exc.start]:#04x} at column {column}); "
            "convert the file to UTF-8"
        ) from None
    if not text.strip():
        raise InvalidInput(f"{path}: the file is empty")
    heading = _HEADING.search(text)
    title = heading.group(1).strip() if heading else path.stem
    yield SourceRecord(id=rel, text=text, title=title, metadata={"source": str(path)})


def _read_jsonl(path: Path) -> Iterator[SourceRecord]:
    empty = True
    for where, obj in read_json_objects(path):
        empty = False
        yield record_from_json(obj, where)
    if empty:  # like an empty text file
        raise InvalidInput(f"{path}: the file is empty")


def record_from_json(obj: Mapping[str, Any], where: str) -> SourceRecord:
    """Build a record from one decoded JSONL object; errors name ``where``."""
    for key in ("id", "text"):
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{where}: missing or empty {key!r}")
    created: datetime | None = None
    raw_created = obj.get("created_at")
    if raw_created is not None:
        try:
            created = datetime.fromisoformat(str(raw_created).replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"{where}: created_at {raw_created!r} is not an ISO 8601 timestamp") from exc
    metadata = obj.get("metadata") or {}
    links = obj.get("links") or []
    title = obj.get("title")
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}: metadata must be an object")
    if isinstance(links, str) or not isinstance(links, list):
        raise InvalidInput(f"{where}: links must be a list of ids")
    if title is not None and not isinstance(title, str):
        raise InvalidInput(f"{where}: title must be a string")
    try:
        return SourceRecord(
            id=obj["id"],
            text=obj["text"],
            title=title or None,
            metadata=metadata,
            created_at=created,
            links=tuple(links),
        )
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc}") from exc
