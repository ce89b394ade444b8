"""Records from documents that another library loaded (LlamaIndex readers, LangChain loaders)."""

from __future__ import annotations

import logging
import mimetypes
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core._encoding import as_json_data, check_metadata_size
from .._core._errors import InvalidInput
from .._core._timestamps import parse_timestamp
from ._formats import RST_SUFFIXES, SPHINX_MACHINERY
from ._markdown import MARKDOWN_SUFFIXES, EmptyNote, Note, NoteLinks, note_text, read_note
from ._records import SourceRecord
from ._titles import file_title, heading_title, qualified_titles

if TYPE_CHECKING:
    from ._rst import RstPage

_log = logging.getLogger("graphfuse.indexing")
# What a reader may bring in that is not text: an image, a sound, a video, a font.
_MEDIA = ("image/", "audio/", "video/", "font/")
_PLAIN_SUFFIXES = (".txt",)
_TEXT = (*_PLAIN_SUFFIXES, *MARKDOWN_SUFFIXES, *RST_SUFFIXES)  # (the files graphfuse index reads as pages)

__all__ = ["records_from_loaded"]


@dataclass
class _Loaded:
    what: str
    id: str
    text: str
    meta: dict[str, Any]
    title: str | None
    created: datetime | None
    links: list[str]
    path: Path | None = None  # the file's, when the path metadata names one
    note: Note | None = None
    page: RstPage | None = None
    prepared: tuple[str, str] | None = None  # (text to index, text to read links from)


def records_from_loaded(
    documents: Iterable[tuple[str | None, str, Mapping[str, Any]]],
    *,
    id_key: str | None = None,
    title_key: str | None = "title",
    created_at_key: str | None = "created_at",
    links_key: str | None = "links",
    path_key: str | None = None,
    raw_markdown: bool = False,
    on_skip: Callable[[str, str], None] | None = None,
) -> list[SourceRecord]:
    """:class:`SourceRecord` s from ``(id, text, metadata)`` of documents a loader produced.

    With ``id_key``, a document's id is ``metadata[id_key]`` (text; the key stays metadata) instead
    of the id given, and a document without it has none. From the metadata, ``metadata[title_key]``
    (text) becomes the title,
    ``metadata[created_at_key]`` (a datetime, an ISO 8601 string or POSIX seconds) the
    ``created_at`` and ``metadata[links_key]`` (a list of other documents' ids) the links;
    those keys leave the metadata, and ``None`` turns one off. The rest stays metadata, made
    JSON data: dates and times as ISO 8601 strings, paths as text, tuples as lists. A document
    whose text is blank (a PDF's empty page) is skipped, and ``on_skip(id, reason)`` called.

    ``metadata[path_key]`` is where the loader read the document (LlamaIndex readers'
    ``"file_path"``, LangChain loaders' ``"source"``; the integrations' ``source_records`` pass
    it). A document read from a markdown file (``.md``, ``.markdown``) is read as
    :func:`~graphfuse.indexing.read_sources` reads that file: its front matter gives the title,
    date and more metadata (the loader's own keys win); its links (``[text](other.md)``,
    ``[[Name]]``) to the other documents of the call become ``links`` (besides
    ``metadata[links_key]``), resolved through their paths; the text indexed is without the
    markup of documentation tools and shows links as their text (``raw_markdown=True`` keeps
    the markdown as written). A document read from a reStructuredText file (``.rst``, ``.rest``)
    is read as ``read_sources`` reads one: its text as markdown, its title, and its ``:doc:``,
    ``:ref:``, ``toctree``, ``include`` and file links to the other documents of the call. A
    document with no title is titled by its own (its first heading; a plain text file's at the
    margin), else by its file name made readable (``deploying/index.rst`` as ``deploying``); a
    title several files share is qualified by each file's folder (relative to the folder all
    paths share: ``Api: Overview``, ``Guide: Overview``). Several documents from one file (a
    reader's sections) are all read; links to the file go to its first.

    As in ``read_sources``, a Sphinx folder's ``conf.py`` (when ``.rst`` documents were loaded) and
    what is in its ``_build``, ``_static`` and ``_templates`` folders are no pages (``on_skip``).
    A document that is not text (its path names an image, or a sound, a video or a font and it
    has no text, or its text is a binary file's bytes: ``SimpleDirectoryReader`` loads a PNG so) is skipped:
    ``on_skip(id, reason)`` is called for each, or without ``on_skip`` one warning (logger
    ``graphfuse.indexing``) names them all (by path, else by id).

    Raises :class:`~graphfuse.InvalidInput` naming the document (its position and id) for a
    missing id, a title that is not text, an unreadable timestamp, links that are not a list of
    ids, front matter that does not parse, metadata that cannot be stored, and ids that repeat
    (all listed; nothing is returned).
    """
    loaded: list[_Loaded] = []
    seen: set[str] = set()
    repeated: list[str] = []
    not_text: list[str] = []
    for n, (doc_id, text, metadata) in enumerate(documents):
        if id_key is not None:
            found = metadata.get(id_key) if isinstance(metadata, Mapping) else None
            doc_id = found if isinstance(found, str) else None
        what = f"document {n}" + (f" ({doc_id!r})" if doc_id else "")
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InvalidInput(f"{what}: no id; give the documents ids (or read the id from a metadata key)")
        if not isinstance(text, str):
            raise InvalidInput(f"{what}: text must be a string, got {type(text).__name__}")
        if not text.strip():
            source = metadata.get(path_key) if path_key is not None and isinstance(metadata, Mapping) else None
            if isinstance(source, str) and _not_text(text, source):  # (an image a reader loaded without text)
                not_text.append(source)
                if on_skip is not None:
                    on_skip(doc_id, "not text (an image or a binary file)")
            elif on_skip is not None:
                on_skip(doc_id, "no text")
            continue
        if not isinstance(metadata, Mapping):
            raise InvalidInput(f"{what}: metadata must be a mapping, got {type(metadata).__name__}")
        check_metadata_size(metadata, what)  # (before any copy: a cycle or an expanding value)
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
        doc = _Loaded(what, doc_id, text, meta, (title.strip() or None) if title else None, created, list(links))
        where = meta.get(path_key) if path_key is not None else None
        if isinstance(where, str) and where:
            doc.path = Path(where)
        if _not_text(text, where if isinstance(where, str) else None):
            not_text.append(where if isinstance(where, str) and where else doc_id)
            if on_skip is not None:
                on_skip(doc_id, "not text (an image or a binary file)")
            continue
        suffix = doc.path.suffix.lower() if doc.path is not None else ""
        if suffix in MARKDOWN_SUFFIXES:
            try:
                doc.note = read_note(text, f"{what}, {where}")
                doc.prepared = note_text(doc.note.body, raw_markdown=raw_markdown)
            except EmptyNote as empty:
                if on_skip is not None:
                    on_skip(doc_id, str(empty))
                continue
        elif suffix in RST_SUFFIXES:
            from ._rst import RstError, read_rst  # (docutils, only for reStructuredText)

            try:
                doc.page = read_rst(text, f"{what}, {where}")
            except RstError as exc:
                if on_skip is not None:
                    on_skip(doc_id, str(exc))
                continue
        loaded.append(doc)
    if not_text and on_skip is None:
        shown = ", ".join(map(repr, not_text[:20])) + (" ..." if len(not_text) > 20 else "")
        _log.warning("skipped %d loaded document(s) that are not text (images, binary files): %s", len(not_text), shown)
    if repeated:
        shown = ", ".join(map(repr, sorted(set(repeated))[:20]))
        raise InvalidInput(
            f"{len(repeated)} document id(s) given twice: {shown}; ids name documents in the graph, give each "
            "its own (chunks split from one document share its id: pass the documents, GraphFuse chunks them)"
        )
    loaded = _without_sphinx_machinery(loaded, on_skip)
    first: dict[Path, _Loaded] = {}
    for doc in loaded:
        if doc.path is not None:
            first.setdefault(doc.path, doc)
    notes = NoteLinks(
        ((p, d.id) for p, d in first.items() if d.note is not None), has_text={d.id: True for d in first.values()}
    )
    root = _common_folder(list(first))
    rst = {d.id: d.page for d in first.values() if d.page is not None}
    site = None
    if rst:
        from ._rst import RstSite

        site = RstSite(((p, d.id, root or p.parent) for p, d in first.items()), rst)
    out: list[SourceRecord] = []
    pages: dict[str, tuple[str, str]] = {}  # a file's path under the common folder -> (id, title)
    for doc in loaded:
        text, meta, title, created, links = doc.text, doc.meta, doc.title, doc.created, doc.links
        if doc.path is not None and doc.note is not None and doc.prepared is not None:
            text, cleaned = doc.prepared
            meta = {**doc.note.metadata, **meta}
            title = title or doc.note.title or heading_title(text)
            created = created or doc.note.created_at
            links = list(dict.fromkeys([*links, *notes.resolve(doc.path, cleaned)]))
        elif site is not None and doc.page is not None and first.get(doc.path or Path()) is doc:
            from ._rst import RstError

            try:
                text = site.text(doc.id)
            except RstError as exc:
                text, why = "", str(exc)
            else:
                why = "the file has no text besides its markup"
            if not text.strip():
                if on_skip is not None:
                    on_skip(doc.id, why)
                continue
            title = title or site.title(doc.id)
            links = list(dict.fromkeys([*links, *site.links(doc.id)]))
        elif doc.path is not None and doc.path.suffix.lower() in _PLAIN_SUFFIXES:
            title = title or heading_title(text, plain=True)
        # (A file of a type graphfuse index reads is titled by its name at the last; a PDF's page is not.)
        named = first.get(doc.path or Path()) is doc and doc.path is not None and doc.path.suffix.lower() in _TEXT
        rel = _relative(doc.path, root) if named else None
        if title is None and rel is not None:
            title = file_title(rel)
        if title is not None and rel is not None:
            pages[rel] = (doc.id, title)
        stored = as_json_data(meta, doc.what)
        try:
            record = SourceRecord(
                doc.id,
                text,
                title=title,
                metadata=stored,
                created_at=created,
                links=tuple(links),
            )
        except InvalidInput as exc:
            raise InvalidInput(f"{doc.what}: {exc}") from None
        out.append(record)
    titles = qualified_titles({rel: title for rel, (_, title) in pages.items()})
    renamed = {doc_id: titles[rel] for rel, (doc_id, title) in pages.items() if titles[rel] != title}
    return [replace(r, title=renamed[r.id]) if r.id in renamed else r for r in out]


def _relative(path: Path | None, root: Path | None) -> str | None:
    if path is None or root is None:
        return None
    return Path(os.path.relpath(path.resolve(), root)).as_posix()


def _not_text(text: str, where: str | None) -> bool:
    """Whether a loaded document is no text: an image (an SVG's XML included), or, without text,
    a sound, a video or a font, by its path; or a binary file's bytes (a NUL, or more than one
    character in ten a control or replacement character). (A TypeScript ``.ts`` file, which
    ``mimetypes`` calls a video, is text.)"""
    kind = mimetypes.guess_type(where, strict=False)[0] if where else None
    if kind is not None and (kind.startswith("image/") or (not text.strip() and kind.startswith(_MEDIA))):
        return True
    head = text[:8192]
    if "\0" in head:
        return True
    odd = sum(1 for c in head if c == "\ufffd" or (c < " " and c not in "\t\n\r\f"))
    return odd * 10 > len(head)


def _without_sphinx_machinery(loaded: list[_Loaded], on_skip: Callable[[str, str], None] | None) -> list[_Loaded]:
    """``loaded`` without what ``read_sources`` leaves out of a Sphinx folder: its ``conf.py``
    (when the documents hold ``.rst`` pages) and what is in its ``_build``, ``_static`` or
    ``_templates`` folder (a folder holding ``conf.py``)."""
    pages = any(d.page is not None for d in loaded)
    known: dict[Path, bool] = {}
    kept: list[_Loaded] = []
    for doc in loaded:
        path = doc.path.resolve() if doc.path is not None else None
        why = None
        if path is not None and pages and path.name == "conf.py":
            why = "Sphinx's configuration, not a page"
        elif path is not None:
            for folder in path.parents:
                if folder.name in SPHINX_MACHINERY:
                    if folder.parent not in known:
                        known[folder.parent] = (folder.parent / "conf.py").is_file()
                    if known[folder.parent]:
                        why = f"in a Sphinx folder's {folder.name}, not a page"
                        break
        if why is None:
            kept.append(doc)
        elif on_skip is not None:
            on_skip(doc.id, why)
    return kept


def _common_folder(paths: list[Path]) -> Path | None:
    """The folder every path is in (a reader's folder), for titles and ``/`` links."""
    if not paths:
        return None
    try:
        return Path(os.path.commonpath([str(p.resolve().parent) for p in paths]))
    except ValueError:  # (paths on different drives)
        return None
