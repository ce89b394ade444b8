"""Markdown notes: their front matter, and the links from one note to another.

A folder of notes (Obsidian, Foam, Jekyll, Hugo, MkDocs) states its graph outright: ``[[wikilinks]]``
and relative ``[text](other.md)`` links. Front matter (a YAML block between ``---`` lines, or a
TOML block between ``+++`` lines, at the very start) gives a note's title, date and tags.
"""

from __future__ import annotations

import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from .._core._encoding import as_json_data
from .._core._errors import InvalidInput
from ._markup import clean_markup, clean_title, outside
from ._reading import SourceReader, Unreadable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "EmptyNote",
    "FrontMatter",
    "Note",
    "NoteLinks",
    "created_from",
    "link_targets",
    "links_as_text",
    "read_note",
    "split_front_matter",
]

MARKDOWN_SUFFIXES = (".md", ".markdown")
# The keys that date a note, in order of preference (Jekyll/Hugo ``date``, Obsidian ``created``).
DATE_KEYS = ("created_at", "date", "created")

_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_OPEN = re.compile(r"---[ \t]*\r?\n")
_YAML_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_TOML_OPEN = re.compile(r"\+\+\+[ \t]*\r?\n")
_TOML_CLOSE = re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)


@dataclass(frozen=True)
class FrontMatter:
    """A note's front matter: its keys, and the note's text after the block."""

    data: dict[str, Any]
    body: str


def split_front_matter(text: str, where: str) -> FrontMatter | None:
    """The YAML (``---``) or TOML (``+++``) block that opens ``text``, parsed, and the rest.

    ``None`` when the text opens with no such block (or the block is never closed: then the
    first line is a thematic break, not front matter). A block that does not parse, or is not a
    mapping, raises :class:`~graphfuse.InvalidInput` naming ``where`` and the line.
    """
    found = _front_block(text)
    if found is None:
        return None
    kind, block, body = found
    return FrontMatter(as_json_data(_parse(block, kind, where), f"{where}: front matter"), body)


def _front_block(text: str) -> tuple[str, str, str] | None:
    """``(kind, block, body)`` of the front matter that opens ``text``, not parsed."""
    start = 1 if text.startswith("\ufeff") else 0
    for opening, closing, kind in ((_YAML_OPEN, _YAML_CLOSE, "YAML"), (_TOML_OPEN, _TOML_CLOSE, "TOML")):
        head = opening.match(text, start)
        if head is None:
            continue
        end = closing.search(text, head.end())
        if end is None:
            return None
        return kind, text[head.end() : end.start()], text[end.end() :].lstrip("\r\n")
    return None


def _parse(block: str, kind: str, where: str) -> dict[str, Any]:
    try:
        # (libyaml's loader when PyYAML was built with it: ten times faster on a folder of notes.)
        data = yaml.load(block, Loader=_YAML_LOADER) if kind == "YAML" else tomllib.loads(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 2}" if mark is not None else ""  # (+1 for 1-based, +1 for the opening ---)
        problem = getattr(exc, "problem", None) or str(exc)
        raise InvalidInput(f"{where}{line}: front matter is not valid YAML ({problem})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InvalidInput(f"{where}: front matter is not valid TOML ({exc})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: front matter must be a mapping of keys to values, got a {type(data).__name__}")
    return data


def created_from(data: Mapping[str, Any], where: str) -> tuple[str | None, datetime | None]:
    """The first of :data:`DATE_KEYS` in front matter ``data`` and its value as a UTC datetime.

    A date without a time is midnight UTC; a naive time is UTC. A value that is no ISO 8601
    date raises :class:`~graphfuse.InvalidInput` naming ``where`` and the key.
    """
    for key in DATE_KEYS:
        raw = data.get(key)
        if raw is None:
            continue
        if not isinstance(raw, str):
            raise InvalidInput(f"{where}: front matter {key!r} must be a date, got {raw!r}")
        try:
            parsed = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
        except ValueError:
            try:
                parsed = datetime.combine(date.fromisoformat(raw.strip()), time())
            except ValueError:
                raise InvalidInput(
                    f"{where}: front matter {key!r} is {raw!r}, not an ISO 8601 date (2024-05-01 or 2024-05-01T09:30)"
                ) from None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return key, parsed.astimezone(timezone.utc)
    return None, None


# Code is not prose: a link written in a code block or span is an example, not a link.
_CODE = re.compile(
    r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[^\n]*\n.*?(?:^[ \t]{0,3}(?P=fence)[ \t]*$|\Z)"  # a fenced block
    r"|(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)",  # a code span
    re.MULTILINE | re.DOTALL,
)
# [[Target]], [[Target|shown]], [[Target#Heading]], ![[embedded]]
_WIKILINK = re.compile(r"\[\[([^\[\]|#\n]+)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# [text](target "title"), [text](<target with spaces>), and reference definitions [ref]: target
_TARGET = (
    r"\(\s*(<[^<>\n]*>|[^\s()<>]+(?:\([^\s()]*\)[^\s()<>]*)*)"  # the target (balanced parentheses)
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"  # an optional "title"
)
_INLINE = re.compile(r"\]" + _TARGET)
_DEFINITION = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*(<[^<>\n]*>|\S+)", re.MULTILINE)
# The same links whole, for rendering them as their text.
_LINK_TEXT = r"\[([^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*)\]"
_WHOLE_LINK = re.compile(r"!?" + _LINK_TEXT + r"(?:" + _TARGET + r"|\[[^\[\]\n]*\])")
_WHOLE_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#\n]*)(?:#([^\[\]|\n]*))?(?:\\?\|([^\[\]\n]*))?\]\]")
_DEFINITION_LINE = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*(?:<[^<>\n]*>|\S+)[^\n]*\n?", re.MULTILINE)


def link_targets(text: str) -> tuple[list[str], list[str]]:
    """The targets of a note's links, in text order: ``(wikilink targets, markdown link targets)``.

    Links inside fenced code blocks and code spans are left out; a markdown link's target is
    URL-decoded, without its ``#fragment``, and web/mail addresses are left out.
    """
    prose = _CODE.sub(" ", text)
    # (In a table, Obsidian escapes the alias bar: [[Name\\|shown]].)
    wiki = [m.group(1).rstrip("\\").strip() for m in _WIKILINK.finditer(prose)]
    paths: list[str] = []
    for m in [*_INLINE.finditer(prose), *_DEFINITION.finditer(prose)]:
        raw = m.group(1)
        if raw.startswith("<"):
            raw = raw[1:-1]
        parts = urlsplit(raw)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # http:, mailto:, //host, or a #fragment of this note
        paths.append(unquote(parts.path))
    return [w for w in wiki if w], paths


def _fold(name: str) -> str:
    return unicodedata.normalize("NFC", name).casefold()


class NoteLinks:
    """Resolves links between the notes of one read: ``[[Name]]`` by file name (as Obsidian
    does: case aside, the note in the linking note's folder first, then the one with the
    shortest path), ``[[folder/Name]]`` by path, ``[text](../other.md)`` relative to the
    linking note. A link to a file that is not among the notes (an image, a note not read)
    or to a note without text (which is not indexed) resolves to nothing."""

    def __init__(
        self,
        notes: Iterable[tuple[Path, str]],
        *,
        has_text: Mapping[str, bool] | None = None,
        raw_markdown: bool = False,
        read: Callable[[Path], bytes] | None = None,
    ) -> None:
        self._raw = raw_markdown
        self._read = read or SourceReader().read  # (bounded: a linked note is never read whole)
        self._by_file: dict[str, str] = {}  # resolved path -> id
        self._by_stem: dict[str, list[tuple[str, str]]] = {}  # folded stem -> (resolved folder, id)
        self._by_path: dict[str, list[str]] = {}  # every tail of a folded path without suffix -> ids
        self._ids: dict[str, Path] = {}
        self._folder: dict[str, str] = {}  # id -> resolved folder
        self._has_text: dict[str, bool] = dict(has_text or {})  # (known already for loaded documents)
        for path, note_id in notes:
            where = path.resolve()
            self._by_file[str(where)] = note_id
            self._ids[note_id] = path
            self._folder[note_id] = folder = str(where.parent)
            self._by_stem.setdefault(_fold(path.stem), []).append((folder, note_id))
            stemmed = PurePosixPath(note_id).with_suffix("").as_posix() if path.suffix else note_id
            # Every tail of the path, so that [[folder/Name]] finds ".../folder/Name" in one lookup.
            parts = _fold(stemmed).split("/")
            for k in range(len(parts)):
                self._by_path.setdefault("/".join(parts[k:]), []).append(note_id)

    def resolve(self, path: Path, text: str) -> tuple[str, ...]:
        """The ids of the notes that note ``path`` (text ``text``) links to, once each, in text
        order, without itself."""
        where = path.resolve()
        own = self._by_file.get(str(where))
        folder = self._folder[own] if own is not None else str(where.parent)
        wiki, paths = link_targets(text)
        found: dict[str, None] = {}
        for target in dict.fromkeys(wiki):  # (a long page links to one page many times)
            hit = self._wiki(folder, target)
            if hit is not None:
                found[hit] = None
        for target in dict.fromkeys(paths):
            joined = os.path.normpath(os.path.join(folder, target))
            hit = self._by_file.get(joined)
            if hit is None and os.path.exists(joined):
                hit = self._by_file.get(str(Path(joined).resolve()))  # (through a symbolic link)
            if hit is not None:
                found[hit] = None
        found.pop(own or "", None)
        return tuple(i for i in found if self._text_in(i))

    def _text_in(self, note_id: str) -> bool:
        """Whether the note has text besides its front matter (read once; a note that cannot be
        read has none: found in a folder, it is skipped; named itself, reading it raises)."""
        known = self._has_text.get(note_id)
        if known is None:
            try:
                text = self._read(self._ids[note_id]).decode("utf-8")
            except (Unreadable, UnicodeDecodeError):
                known = False
            else:
                block = _front_block(text)
                body = text if block is None else block[2]
                try:  # (a page of mkdocstrings lines only is skipped: no text to link to)
                    known = bool(body.strip()) and bool(note_text(body, raw_markdown=self._raw))
                except EmptyNote:
                    known = False
            self._has_text[note_id] = known
        return known

    def _wiki(self, folder: str, target: str) -> str | None:
        name = target
        low = _fold(name)
        for suffix in MARKDOWN_SUFFIXES:
            if low.endswith(suffix):
                name, low = name[: -len(suffix)], low[: -len(suffix)]
                break
        if "/" in name:
            # The note whose path is, or ends with, the link's: the shortest such path first.
            found = self._by_path.get(low.strip("/"))
            return min(found, key=lambda i: (len(i), i)) if found else None
        candidates = self._by_stem.get(low)
        if not candidates:
            return None
        return min(candidates, key=lambda c: (c[0] != folder, len(c[1]), c[1]))[1]


def links_as_text(text: str) -> str:
    """``text`` with its links written as what a reader sees: ``[text](url)`` and ``[text][ref]``
    as ``text``, ``![alt](image.png)`` as ``alt``, ``[[Name|shown]]`` as ``shown``, ``[[Name]]`` and
    ``[[Name#Heading]]`` as ``Name``, an embedded file that is not a note (``![[chart.png]]``) as
    nothing, and reference definitions (``[ref]: url`` lines) left out. Code is left as it is.

    The targets are the note's ``links`` already; written out, they would cost an LLM's context
    tokens and blur the note's embedding (a relative path, ``%20``, ``#fragment``).
    """
    return outside(_CODE, text, _prose_as_text)


def _prose_as_text(prose: str) -> str:
    prose = _DEFINITION_LINE.sub("", prose)
    prose = _WHOLE_WIKILINK.sub(_wikilink_text, prose)
    return _WHOLE_LINK.sub(lambda m: m.group(1), prose)


def _wikilink_text(m: re.Match[str]) -> str:
    embed, name, heading, shown = m.groups()
    name = name.rstrip("\\").strip()
    if shown is not None and shown.strip():
        return shown.strip()
    suffix = PurePosixPath(name).suffix.lower()
    if embed and suffix and suffix not in MARKDOWN_SUFFIXES:
        return ""  # an embedded picture or file: nothing to read
    if suffix in MARKDOWN_SUFFIXES:
        name = name[: -len(suffix)]
    return name or (heading or "").strip()


class EmptyNote(Exception):
    """A note without text (what it holds instead is the message)."""


@dataclass(frozen=True)
class Note:
    """A markdown note read: its front matter's keys (title and date taken out), title and date."""

    body: str
    metadata: dict[str, Any]
    title: str | None
    created_at: datetime | None


def read_note(text: str, where: str) -> Note:
    """A markdown note's front matter split off: ``title`` (text, made plain; blank is no
    title) and the first of :data:`DATE_KEYS` taken out of its keys. Raises :class:`EmptyNote`
    when nothing follows the front matter, and :class:`~graphfuse.InvalidInput` naming ``where``
    for front matter that does not parse, a title that is not text, a date that is no date."""
    front = split_front_matter(text, where)
    if front is None:
        return Note(text, {}, None, None)
    if not front.body.strip():
        raise EmptyNote("the file has front matter but no text")
    metadata = dict(front.data)
    date_key, created = created_from(metadata, where)
    if date_key is not None:
        del metadata[date_key]
    return Note(front.body, metadata, _front_title(metadata.pop("title", None), where), created)


def _front_title(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InvalidInput(f"{where}: front matter 'title' must be text, got {value!r}")
    return clean_title(str(value)) or None


def note_text(body: str, *, raw_markdown: bool) -> tuple[str, str]:
    """``(text to index, text to read links from)`` of a note's body: without the markup of
    documentation tools (:func:`~graphfuse.indexing._markup.clean_markup`; links in comments or
    diagrams are not links) and with links shown as their text, or as written with
    ``raw_markdown``. Raises :class:`EmptyNote` when no text is left."""
    cleaned = clean_markup(body)
    text = body if raw_markdown else links_as_text(cleaned)
    if not text.strip():
        raise EmptyNote("the file has no text besides its links" + (" and markup" if cleaned != body else ""))
    return text, cleaned
