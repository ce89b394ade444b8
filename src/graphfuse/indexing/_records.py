"""Source records and the readers that turn files into them."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from .._core._encoding import check_json_data, check_metadata_size, check_text
from .._core._errors import InvalidInput
from .._core._jsonl import read_json_objects
from .._core._types import ENTITY_PREFIX, check_id
from ._chunking import Chunk
from ._formats import RST_SUFFIXES, SPHINX_MACHINERY
from ._markdown import MARKDOWN_SUFFIXES, EmptyNote, NoteLinks, note_text, read_note
from ._reading import MAX_FILE_BYTES, SourceReader, not_a_file
from ._reading import Unreadable as _Unreadable
from ._titles import file_title, heading_title, qualified_titles

if TYPE_CHECKING:
    from ._rst import RstSite

__all__ = ["EXCLUDED_KEYS", "SourceRecord", "excluded_keys", "read_sources"]

_TEXT_SUFFIXES = (".txt", ".md", ".markdown", *RST_SUFFIXES)
_SUFFIXES = (*_TEXT_SUFFIXES, ".jsonl")
RESERVED_KEYS = frozenset({"parent_id"})
"""Metadata keys the indexer writes itself (besides every key starting with ``graphfuse_``)."""
RESERVED_PREFIX = "graphfuse_"


EXCLUDED_KEYS = "graphfuse_excluded_keys"
"""The one ``graphfuse_`` metadata key a record may carry: the metadata keys its host keeps out of LLM
prompts and out of embeddings, ``{"llm": [...], "embed": [...]}`` (LlamaIndex's
``excluded_llm_metadata_keys`` / ``excluded_embed_metadata_keys``). Stored on the document and its
chunks, never shown as user metadata; read back with :func:`excluded_keys`."""


def excluded_keys(metadata: Mapping[str, Any], what: str = "metadata") -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys ``metadata[EXCLUDED_KEYS]`` keeps out of LLM prompts and out of embeddings, as
    ``(llm, embed)`` (empty without it); :class:`~graphfuse.InvalidInput` naming ``what`` for any
    other shape than ``{"llm": [str, ...], "embed": [str, ...]}`` (either list may be left out)."""
    value = metadata.get(EXCLUDED_KEYS)
    if value is None:
        return (), ()
    if not isinstance(value, Mapping) or set(value) - {"llm", "embed"}:
        raise InvalidInput(f"{what}: {EXCLUDED_KEYS!r} must be a mapping with 'llm' and 'embed' lists, got {value!r}")
    out: list[tuple[str, ...]] = []
    for side in ("llm", "embed"):
        keys = value.get(side, ())
        if isinstance(keys, (str, bytes)) or not isinstance(keys, Sequence) or any(type(k) is not str for k in keys):
            raise InvalidInput(f"{what}: {EXCLUDED_KEYS!r}[{side!r}] must be a list of metadata keys, got {keys!r}")
        out.append(tuple(dict.fromkeys(keys)))
    return out[0], out[1]


def check_record_id(value: object, what: str = "record id") -> str:
    """``value`` if it can be a document's id: :func:`~graphfuse.validation.check_id`, and not in the
    namespace of the entity nodes the indexer writes (:data:`~graphfuse.indexing.ENTITY_PREFIX`, which a
    document would overwrite, or delete). Raises :class:`~graphfuse.InvalidInput` naming the id."""
    doc_id = check_id(value, what)
    if doc_id.startswith(ENTITY_PREFIX):
        raise InvalidInput(
            f"{what} {doc_id!r} is reserved: ids starting with {ENTITY_PREFIX!r} name the entity nodes "
            "GraphFuse writes; give the document another id"
        )
    return doc_id


def reserved_key(key: str) -> bool:
    """True when ``key`` belongs to GraphFuse's own bookkeeping (``parent_id``, ``graphfuse_*``)."""
    return key in RESERVED_KEYS or key.startswith(RESERVED_PREFIX)


@dataclass(frozen=True)
class SourceRecord:
    """One document to index.

    ``links`` are ids of other documents this one points to (``LINKS_TO`` relations);
    ``title`` feeds the title linker (other passages that mention it get a ``MENTIONS``
    relation to this document). Naive ``created_at`` is taken as UTC. An id starting with
    :data:`~graphfuse.indexing.ENTITY_PREFIX` is reserved for entity nodes (``InvalidInput``).

    ``chunks``: the document's passages as its host already split it (a LlamaIndex node parser's
    nodes), at least two, :class:`Chunk` ``index`` 0, 1, ... in order, each with its own
    ``metadata`` (checked as the record's: JSON, size, no reserved key). The
    :class:`~graphfuse.indexing.Indexer` stores them as the document's chunk nodes (ids
    ``<id>#<index>``, ``PART_OF`` the document, metadata the record's with the chunk's over it)
    instead of splitting ``text`` with its chunker; ``text`` stays the whole document's (the
    page's BM25 text and subject). Empty (the default): the indexer's chunker splits ``text``.
    """

    id: str
    text: str
    title: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    links: tuple[str, ...] = ()
    chunks: tuple[Chunk, ...] = ()

    def __post_init__(self) -> None:
        check_record_id(self.id)
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
        excluded_keys(self.metadata, f"record {self.id!r}")
        for key in self.metadata:
            if isinstance(key, str) and reserved_key(key) and key != EXCLUDED_KEYS:
                raise InvalidInput(
                    f"record {self.id!r}: metadata key {key!r} is reserved for GraphFuse's own bookkeeping "
                    f"('parent_id' and keys starting with {RESERVED_PREFIX!r}'); rename it"
                )
        check_metadata_size(self.metadata, f"record {self.id!r}")
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
        self._check_chunks()

    def _check_chunks(self) -> None:
        if isinstance(self.chunks, (str, bytes, Mapping)) or not isinstance(self.chunks, Sequence):
            raise InvalidInput(
                f"record {self.id!r}: chunks must be a sequence of Chunk, got {type(self.chunks).__name__}"
            )
        chunks = tuple(self.chunks)
        if len(chunks) == 1:
            raise InvalidInput(
                f"record {self.id!r}: one chunk is the document itself: give its text without chunks (or two or more)"
            )
        checked: list[Chunk] = []
        for n, chunk in enumerate(chunks):
            what = f"record {self.id!r}: chunk {n}"
            if not isinstance(chunk, Chunk):
                raise InvalidInput(f"{what}: expected a graphfuse.indexing.Chunk, got {type(chunk).__name__}")
            if chunk.index != n:
                raise InvalidInput(f"{what}: has index {chunk.index!r}; chunks are numbered 0, 1, ... in order")
            if not isinstance(chunk.text, str) or not chunk.text.strip():
                raise InvalidInput(f"{what}: text must be a non-empty string")
            check_text(chunk.text, f"{what}: text")
            if not isinstance(chunk.metadata, Mapping):
                raise InvalidInput(f"{what}: metadata must be a mapping")
            for key in chunk.metadata:
                if not isinstance(key, str) or (reserved_key(key) and key != EXCLUDED_KEYS):
                    raise InvalidInput(
                        f"{what}: metadata key {key!r} is reserved for GraphFuse's own bookkeeping "
                        f"('parent_id' and keys starting with {RESERVED_PREFIX!r}'); rename it"
                    )
            excluded_keys(chunk.metadata, what)
            check_metadata_size({**self.metadata, **chunk.metadata}, what)
            check_json_data(chunk.metadata, what)
            checked.append(replace(chunk, metadata=MappingProxyType(dict(chunk.metadata))))
        object.__setattr__(self, "chunks", tuple(checked))


def read_sources(
    paths: Sequence[str | os.PathLike[str]],
    *,
    on_skip: Callable[[str, str], None] | None = None,
    raw_markdown: bool = False,
    max_file_bytes: int = MAX_FILE_BYTES,
    follow_symlinks: bool = False,
    on_unsupported: Callable[[str], None] | None = None,
) -> Iterator[SourceRecord]:
    """Read records from ``.txt``/``.md``/``.rst`` files, ``.jsonl`` files and directories of them.

    A directory is read recursively, leaving out hidden files and folders (a name starting with
    a dot: ``.trash``, ``.git``, ``.venv``; name such a file itself to read it) and, in a Sphinx
    folder (one holding ``conf.py``), its ``_build``, ``_static`` and ``_templates`` folders.
    ``on_unsupported(path)`` is called for every other file of a directory not read for its type
    (an image, ``conf.py``). A text file becomes one record: its id is its path relative to the
    directory given (or its file name when the file itself was given), its title the page's own
    (a markdown file's front matter ``title`` or first heading, ``# Title`` or ``Title``
    underlined with ``===``; a reStructuredText file's title; a plain text file's first heading
    at the margin, never a line of code), else its file name made readable (``quick_start.md`` as
    ``quick start``, ``deploying/index.rst`` as ``deploying``); a title that several files share is
    qualified by each file's folder (``Api: Overview``, ``Guide: Overview``: a title naming several
    pages names none).
    A reStructuredText file (``.rst``, ``.rest``) is read with docutils, Sphinx's roles and
    directives leniently: its text is written as markdown (headings, lists, fenced code; a role
    shows its text, an API role its name as code), and its ``:doc:``, ``:ref:`` (through the
    folder's ``.. _label:`` targets), ``toctree``, ``include`` and `` `text <page.html>`_ ``
    links to the other files read become its ``links``. A markdown file (``.md``,
    ``.markdown``) may open with front matter (YAML between
    ``---`` lines, or TOML between ``+++`` lines): its ``title`` is the record's title, its
    ``created_at``, ``date`` or ``created`` (the first present; ISO 8601) the record's
    ``created_at``, and its other keys go into the metadata (dates as ISO strings); the text
    indexed is what follows the block. The metadata's ``source`` is the file's path unless the
    front matter sets one. A markdown file's links to the other notes read in the same call
    become the record's ``links``: ``[[Name]]``, ``[[Name|shown]]``, ``[[Name#Heading]]`` and
    ``![[Name]]`` by file name (case aside; the note in the same folder first, then the shortest
    path) or by path (``[[folder/Name]]``), and ``[text](other.md)``, ``[text](<other note.md>)``
    and ``[ref]: other.md`` relative to the note; links in code are left out, and so are links
    to files that were not read. The text indexed shows each link as its text
    (:func:`~graphfuse.indexing.links_as_text`: ``[the maps](../maps.md#api)`` as ``the maps``,
    ``[[Name|shown]]`` as ``shown``): targets would cost context tokens and blur embeddings.
    The markup of documentation tools (MkDocs attribute lists, admonitions, tabs, mkdocstrings
    lines, snippet includes, Docusaurus / MyST directives, HTML comments and tags, diagram
    fences) is left out of the text and the title, code left as written.
    ``raw_markdown=True`` keeps the markdown as written.

    A ``.jsonl`` line is ``{"id", "text", "title"?, "metadata"?, "created_at"?, "links"?}``
    (``created_at`` in ISO 8601). An empty file (blank lines only, or front matter only), or a
    text file that is not UTF-8 text (binary, Latin-1), named itself raises
    :class:`~graphfuse.InvalidInput` naming it; one found in a directory is skipped, and
    ``on_skip(path, reason)`` is called (a folder of notes has empty notes). A
    malformed line or front matter raises :class:`~graphfuse.InvalidInput` naming
    ``file:line``; an id seen twice raises ``InvalidInput`` listing the repeated ids (after the
    whole input was read, so every duplicate is named at once; nothing is yielded past the
    first duplicate). The records of a directory are yielded once it is read (its titles are
    qualified together); a JSONL file named on its own streams its records.

    Every input is bounded. A file larger than ``max_file_bytes`` (:data:`MAX_FILE_BYTES`, 8 MiB)
    and a ``.jsonl`` line longer than it are refused before they are read; a text file is
    binary when its first 8 KiB hold a NUL byte (the rest is not read); a record's metadata
    (front matter included) holds at most :data:`MAX_METADATA_VALUES` values and
    :data:`MAX_METADATA_BYTES` bytes as JSON, and may not refer to itself (a YAML alias bomb
    fails at once, naming the file). A directory's symbolic links are followed while they stay
    inside it (a link to a file or folder read already is skipped; loops are walked once); one
    that leads out of it is skipped unless ``follow_symlinks=True``. Only regular files are
    opened (a named pipe or a device is never read). Found in a directory, a file that is too
    large, a link, a named pipe, a file or folder that may not be read, or one removed or
    replaced after the directory was listed is skipped with ``on_skip(path, reason)``; named
    itself, it raises :class:`~graphfuse.InvalidInput` (:class:`~graphfuse.PermissionDenied`
    when the system refused to open it) naming it.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    reader = SourceReader(max_bytes=max_file_bytes, follow_symlinks=follow_symlinks)
    files = list(_expand(paths, reader, on_skip, on_unsupported))
    notes = NoteLinks(
        ((p, rel) for p, rel, _, _ in files if p.suffix.lower() in MARKDOWN_SUFFIXES),
        raw_markdown=raw_markdown,
        read=reader.read,
    )
    site = _rst_site(files, reader)
    seen: set[str] = set()
    repeated: list[str] = []
    # The records of one directory are held until it is read, to qualify the titles its files
    # share (a JSONL file named on its own streams).
    held: list[SourceRecord] = []
    pages: dict[str, str] = {}  # a held text file's record id -> its title
    folder: tuple[Path, bool] | None = None
    for path, rel, found, top in files:
        if folder != (top, found):
            if not repeated:
                yield from _qualified(held, pages)
            held, pages, folder = [], {}, (top, found)
        try:
            # (_Empty comes before any record of the file.)
            for record in _read_file(path, rel, notes, site, raw_markdown, reader):
                if record.id in seen:
                    repeated.append(record.id)
                    continue
                seen.add(record.id)
                if not found and path.suffix.lower() == ".jsonl":
                    if not repeated:
                        yield record
                    continue
                held.append(record)
                if record.title is not None and path.suffix.lower() in _TEXT_SUFFIXES:
                    pages[record.id] = record.title
        except _Unreadable as bad:
            if not found:
                raise bad.error(path) from None
            if on_skip is not None:
                on_skip(f"{path}{bad.where}", bad.why)
        except _Empty as empty:
            if not found:
                raise InvalidInput(f"{path}: {empty}") from None
            if on_skip is not None:
                on_skip(str(path), str(empty))
    if not repeated:
        yield from _qualified(held, pages)
    if repeated:
        shown = ", ".join(map(repr, sorted(set(repeated))[:20]))
        raise InvalidInput(f"{len(repeated)} duplicate document id(s) in the sources: {shown}")


def _qualified(records: list[SourceRecord], pages: Mapping[str, str]) -> Iterator[SourceRecord]:
    """``records`` with the titles that several of ``pages`` share qualified by their folders."""
    titles = qualified_titles(pages)
    for record in records:
        title = titles.get(record.id, record.title)
        yield record if title == record.title else replace(record, title=title)


class _Empty(Exception):
    """A source file without text (what it holds instead is the message)."""


def _expand(
    paths: Sequence[str | os.PathLike[str]],
    reader: SourceReader,
    on_skip: Callable[[str, str], None] | None,
    on_unsupported: Callable[[str], None] | None = None,
) -> Iterator[tuple[Path, str, bool, Path]]:
    """``(file, record id, found in a directory, the directory)`` for each file to read."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            listed = reader.folder(
                path, _SUFFIXES, on_skip, on_unsupported=on_unsupported, prune=partial(_sphinx_machinery, path, {})
            )
            for f, rel in listed:
                yield f, rel, True, path
        elif path.is_file():
            if path.suffix.lower() not in _SUFFIXES:
                raise InvalidInput(f"{path}: unsupported file type (use .txt, .md, .rst or .jsonl)")
            yield path, path.name, False, path.parent
        else:
            raise not_a_file(path)


def _sphinx_machinery(top: Path, known: dict[Path, bool], rel: str) -> bool:
    """Whether the folder ``rel`` is the ``_build``, ``_static`` or ``_templates`` folder of a
    Sphinx folder (one holding ``conf.py``) under ``top``."""
    folder_rel = Path(rel)
    if folder_rel.name not in SPHINX_MACHINERY:
        return False
    folder = top / folder_rel.parent
    if folder not in known:
        known[folder] = (folder / "conf.py").is_file()
    return known[folder]


def _rst_site(files: Sequence[tuple[Path, str, bool, Path]], reader: SourceReader) -> RstSite | None:
    """The reStructuredText pages among ``files``, parsed, to resolve links between them (a page
    that cannot be read is left for its own read to report); ``None`` without any."""
    if not any(p.suffix.lower() in RST_SUFFIXES for p, _, _, _ in files):
        return None
    from ._rst import RstError, RstSite, read_rst  # (docutils, only for a folder with reStructuredText)

    pages = {}
    errors: dict[str, str] = {}
    for path, rel, _, _ in files:
        if path.suffix.lower() in RST_SUFFIXES:
            try:
                text = _text_of(path, reader)
                if text.strip():
                    pages[rel] = read_rst(text, str(path))
            except (_Unreadable, InvalidInput):
                continue  # (its own read says why)
            except RstError as exc:
                errors[rel] = str(exc)
    texts = ((p, rel, top) for p, rel, _, top in files if p.suffix.lower() in _TEXT_SUFFIXES)
    return RstSite(texts, pages, errors)


def _text_of(path: Path, reader: SourceReader) -> str:
    data = reader.read(path)  # (bounded: size, binary sniff, a regular file, the one listed)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _Unreadable(
            f":{line}", f"not valid UTF-8 (byte {data[exc.start]:#04x} at column {column}); convert the file to UTF-8"
        ) from None
    return text


def _read_file(
    path: Path, rel: str, notes: NoteLinks, site: RstSite | None, raw_markdown: bool, reader: SourceReader
) -> Iterator[SourceRecord]:
    if path.suffix.lower() == ".jsonl":
        yield from _read_jsonl(path, reader)
        return
    # A reStructuredText page the site parsed is not read again: its text is the site's.
    parsed = site is not None and path.suffix.lower() in RST_SUFFIXES and rel in site
    text = "" if parsed else _text_of(path, reader)
    if not parsed and not text.strip():
        raise _Empty("the file is empty")
    metadata: dict[str, Any] = {}
    title: str | None = None
    created: datetime | None = None
    links: tuple[str, ...] = ()
    if path.suffix.lower() in MARKDOWN_SUFFIXES:
        try:
            note = read_note(text, str(path))
            text, cleaned = note_text(note.body, raw_markdown=raw_markdown)
        except EmptyNote as empty:
            raise _Empty(str(empty)) from None
        metadata, title, created = note.metadata, note.title, note.created_at
        links = notes.resolve(path, cleaned)
        title = title or heading_title(text)
    elif site is not None and parsed:
        text = _rst_text(site, rel)
        if not text.strip():
            raise _Empty("the file has no text besides its markup")
        title, links = site.title(rel), site.links(rel)
    else:
        title = heading_title(text, plain=True)
    if title is None:
        title = file_title(rel)
    metadata.setdefault("source", str(path))
    try:
        yield SourceRecord(id=rel, text=text, title=title, metadata=metadata, created_at=created, links=links)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from None


def _rst_text(site: RstSite, rel: str) -> str:
    """A page's text from ``site``, or why docutils cannot read it (:class:`_Unreadable`)."""
    from ._rst import RstError

    if rel in site.errors:
        raise _Unreadable("", site.errors[rel])
    try:
        return site.text(rel)
    except RstError as exc:
        raise _Unreadable("", str(exc)) from None


def _read_jsonl(path: Path, reader: SourceReader) -> Iterator[SourceRecord]:
    empty = True
    with reader.open(path) as fh:
        for where, obj in read_json_objects(path, lines=reader.lines(fh, str(path))):
            empty = False
            yield record_from_json(obj, where)
    if empty:  # like an empty text file
        raise _Empty("the file is empty")


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
