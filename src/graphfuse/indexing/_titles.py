"""A page's title: the name a reader (and the title linker) knows it by.

A title names the page: a markdown page's first heading (``# Title``, or ``Title`` underlined
with ``===`` / ``---``), a plain text page's first heading written at the margin (markdown's, or
a line under- and maybe overlined as reStructuredText and Sphinx's text output write them),
never a line of code; a file name only when the page has none, made readable
(``quick_start.md`` as ``quick start``, ``deploying/index.rst`` as ``deploying``), and a title
several pages share qualified by their folders (``Deploying: overview``). Its other names are
its ``metadata["aliases"]`` (:func:`metadata_aliases`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from ._markup import clean_title

__all__ = ["ALIASES_KEY", "file_title", "heading_title", "metadata_aliases", "qualified_titles"]

ALIASES_KEY = "aliases"
"""The metadata key of a document's other names (a name or a list of names, as in Obsidian's front matter)."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_ATX_MARGIN = re.compile(r"^#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
# reStructuredText's adornments: a run of one punctuation character.
_ADORNMENT = re.compile(r"^([=\-~`^\"'*+#:.<>_!$%&(),/;?@\[\]\\{|}])\1{2,}[ \t]*$")
_INDEX_NAMES = frozenset({"index", "readme", "_index", "overview"})
_SEPARATORS = re.compile(r"[-_\s]+")


def heading_title(text: str, *, plain: bool = False) -> str | None:
    """The text of the first heading in ``text``, without markup, or ``None``.

    Markdown (``plain=False``): an ATX heading (``# Title``) or a one-line paragraph
    underlined with ``===`` or ``---`` (setext). Plain text (``plain=True``): a heading at the
    margin, ``# Title`` or a line underlined (and maybe overlined) with a run of one
    punctuation character as long as the line, as reStructuredText writes them. Lines inside
    fenced or indented code blocks are never headings.
    """
    lines = text.split("\n")
    fence: str | None = None
    blank = True  # (the previous line was blank, or there is none)
    code = False  # (in an indented code block)
    for i, raw in enumerate(lines):
        line = raw.rstrip("\r")
        stripped = line.strip()
        opened = _FENCE.match(line)
        if fence is not None:
            closing = opened is not None and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence)
            if closing and not line.strip().strip(fence[0]):
                fence = None
            blank = False
            continue
        if opened is not None:
            fence = opened.group(1)
            blank = False
            continue
        if not stripped:
            blank = True
            continue
        indent = len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip(" "))
        if (indent >= 4 and (blank or code)) or (plain and indent > 0):
            code = indent >= 4 and (blank or code)
            blank = False
            continue
        code = False
        found = (_ATX_MARGIN if plain else _ATX).match(line)
        if found is not None:
            title = clean_title(found.group(1))
            if title:
                return title
        nxt = lines[i + 1].rstrip("\r") if i + 1 < len(lines) else ""
        if blank and nxt.strip():
            if not plain and _SETEXT.match(nxt) and not _SETEXT.match(line):
                title = clean_title(stripped)
                if title:
                    return title
            if plain:
                over = _ADORNMENT.match(line)
                under = _ADORNMENT.match(nxt.strip()) if nxt == nxt.lstrip() else None
                if over is not None and i + 2 < len(lines):  # an overline, the title, the underline
                    below = lines[i + 2].rstrip("\r")
                    if _ADORNMENT.match(below) and below.strip()[0] == over.group(1):
                        title = clean_title(nxt)
                        if title and len(below.strip()) >= len(nxt.strip()):
                            return title
                elif over is None and under is not None and len(nxt.strip()) >= len(stripped):
                    title = clean_title(stripped)
                    if title:
                        return title
        blank = False
    return None


def file_title(path: str) -> str:
    """A readable title from a page's path (relative to the folder read): the file name without
    its suffix, words split at ``-`` and ``_`` (``quick_start.md`` is ``quick start``; a note's
    file name is its name, as in an Obsidian vault: ``people/Jonas Berg.md`` is ``Jonas Berg``);
    an index page (``index``, ``README``) is named by its folder (``deploying/index.rst`` is
    ``deploying``). Names several pages share are qualified by :func:`qualified_titles`
    (``api/overview.md`` and ``guide/overview.md`` as ``Api: overview``, ``Guide: overview``)."""
    parts = [p for p in PurePosixPath(path).with_suffix("").parts if p not in ("", "/")]
    if not parts:
        return path
    if len(parts) > 1 and parts[-1].lower() in _INDEX_NAMES:
        parts.pop()
    return " ".join(_SEPARATORS.split(parts[-1])).strip() or parts[-1]


def _readable(name: str) -> str:
    words = " ".join(_SEPARATORS.split(name)).strip() or name
    return words[:1].upper() + words[1:]


def _title_key(title: str) -> str:
    return " ".join(re.findall(r"\w+", title.casefold()))


def qualified_titles(titles: Mapping[str, str]) -> dict[str, str]:
    """``titles`` (page path -> title) with every title that several pages share qualified by
    each page's folder: ``api/overview.md`` and ``guide/overview.md``, both titled "Overview",
    become "Api: Overview" and "Guide: Overview" (a page at the top keeps its title).

    A title several pages share names none of them: a passage that says "Overview" does not
    mention one of them more than the others, and the title linker would make the word a hub.
    """
    groups: dict[str, list[str]] = {}
    for path, title in titles.items():
        groups.setdefault(_title_key(title), []).append(path)
    out = dict(titles)
    for paths in groups.values():
        if len(paths) < 2:
            continue
        for path in paths:
            folder = PurePosixPath(path).parent.name
            if folder:
                out[path] = f"{_readable(folder)}: {titles[path]}"
    return out


def metadata_aliases(metadata: Mapping[str, Any]) -> list[str]:
    """A document's other names: its ``metadata["aliases"]`` (a name or a list of names), stripped.

    The :class:`~graphfuse.indexing.Indexer`'s title linker links a mention of any of them as of
    the title, and the corpus indexes a query reads name the document by them too.
    """
    raw = metadata.get(ALIASES_KEY)
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list | tuple):
        return []
    return [a.strip() for a in raw if isinstance(a, str) and a.strip()]
