"""reStructuredText pages (Sphinx documentation): their title, readable text and links.

A Sphinx folder states its graph in roles and directives: ``:doc:`install```, ``:ref:`label```
(resolved through the folder's ``.. _label:`` targets), ``.. toctree::`` entries,
``.. include::`` and `` `text <other.html>`_ `` links. docutils parses the pages; Sphinx's
own roles and directives (and any extension's) are read leniently: a directive's content is
read as text, a code block stays code, an API role (``:class:`~pkg.Name```) is shown as code,
and nothing unknown fails or leaves error text. The text indexed is written as markdown
(``#`` headings, fenced code, ``-`` lists), as the rest of GraphFuse reads pages.
"""

from __future__ import annotations

import io
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.utils import unescape

from ._formats import RST_SUFFIXES, SPHINX_MACHINERY
from ._titles import file_title

__all__ = [
    "RST_SUFFIXES",
    "SPHINX_MACHINERY",
    "RstError",
    "RstPage",
    "RstSite",
    "read_rst",
    "sphinx_root",
]


_SETTINGS: dict[str, Any] = {
    "report_level": 5,  # (no message is printed; error nodes are left out of the text)
    "halt_level": 5,
    "file_insertion_enabled": False,  # (includes are links here, not text read from disk)
    "raw_enabled": False,
    "syntax_highlight": "none",
    "smart_quotes": False,
    "input_encoding": "unicode",
    "doctitle_xform": True,
    "sectsubtitle_xform": False,
    "docinfo_xform": True,
    "embed_stylesheet": False,
    "_disable_config": True,
}


# -- lenient roles and directives --------------------------------------------------------------


class _Xref(nodes.Inline, nodes.TextElement):
    """A cross-reference to another page (``:doc:``, ``:ref:``, ``:any:``): ``kind``, ``target``,
    ``explicit`` (whether the text was written, or is the target's title)."""


class _Toctree(nodes.General, nodes.Element):
    """A ``toctree``'s entries: ``entries`` (``(title or None, target)``), ``glob``."""


class _Include(nodes.General, nodes.Element):
    """An ``include`` directive: ``target`` (a path)."""


class _Code(nodes.Inline, nodes.TextElement):
    """Inline code from an API role (``:class:`~pkg.Name``` as ``Name``)."""


_EXPLICIT = re.compile(r"^(.+?)\s*(?<!\x00)<(.*?)>$", re.DOTALL)
_CODE_ROLES = frozenset(
    {
        "class",
        "func",
        "meth",
        "attr",
        "mod",
        "exc",
        "data",
        "obj",
        "const",
        "type",
        "member",
        "var",
        "macro",
        "struct",
        "enum",
        "enumerator",
        "expr",
        "texpr",
        "file",
        "samp",
        "kbd",
        "command",
        "program",
        "option",
        "envvar",
        "makevar",
        "regexp",
        "confval",
        "setting",
        "directive",
        "role",
    }
)
_XREF_ROLES = frozenset({"doc", "ref", "any", "numref", "std:doc", "std:ref"})


def _split_title(text: str) -> tuple[str | None, str]:
    found = _EXPLICIT.match(text)
    if found is None:
        return None, text.strip()
    return found.group(1).strip(), found.group(2).strip()


def _lenient_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: Mapping[str, Any] | None = None,
    content: Any = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Any role docutils does not know (Sphinx's, an extension's), read as what it shows."""
    text = unescape(text)
    kind = name.lower()
    short = kind.rsplit(":", 1)[-1]
    title, target = _split_title(text)
    if kind in _XREF_ROLES:
        key = "doc" if short == "doc" else "ref"
        node = _Xref(rawtext, title or target, kind=key, target=target, explicit=title is not None)
        return [node], []
    if short in _CODE_ROLES or ":" in kind:
        if title is None:
            shown = target.lstrip("!")
            if shown.startswith("~"):
                shown = shown[1:].rsplit(".", 1)[-1]
            return [_Code(rawtext, shown)], []
        return [_Code(rawtext, title)], []
    return [nodes.Text(title or target)], []


class _AnyOptions(dict[str, Callable[[str | None], Any]]):
    """Every option accepted, as written (Sphinx's ``:caption:``, ``:linenos:``, an extension's own)."""

    def __missing__(self, key: str) -> Callable[[str | None], Any]:
        return directives.unchanged


# Directives that show nothing (configuration, indexes, API documentation pulled from code).
_SILENT = frozenset(
    {
        "highlight",
        "index",
        "currentmodule",
        "module",
        "py:module",
        "py:currentmodule",
        "sectionauthor",
        "moduleauthor",
        "codeauthor",
        "tabularcolumns",
        "contents",
        "sectnum",
        "header",
        "footer",
        "meta",
        "default-role",
        "default-domain",
        "role",
        "raw",
        "literalinclude",
        "testsetup",
        "testcleanup",
        "only-html",
        "spelling:word-list",
        "todolist",
    }
)
# Diagrams: drawn on the page, their source is not read.
_DIAGRAMS = frozenset(
    {"graphviz", "graph", "digraph", "inheritance-diagram", "mermaid", "plantuml", "uml", "tikz", "blockdiag"}
)
# Code: the content is kept as written.
_CODE = frozenset(
    {
        "code",
        "code-block",
        "sourcecode",
        "testcode",
        "testoutput",
        "doctest",
        "ipython",
        "jupyter-execute",
        "code-cell",
        "code-tab",
        "prompt",
        "click:example",
        "click:run",
        "productionlist",
    }
)
# Objects described (Sphinx domains, autodoc): the signature is code, the content prose.
_OBJECTS = frozenset(
    {
        "function",
        "class",
        "method",
        "attribute",
        "data",
        "exception",
        "decorator",
        "decoratormethod",
        "classmethod",
        "staticmethod",
        "property",
        "describe",
        "object",
        "option",
        "cmdoption",
        "envvar",
        "confval",
        "program",
        "autosummary",
    }
)
# Directives whose argument is a condition or a class, not text: only their content is read.
_CONDITIONS = frozenset({"only", "ifconfig", "cssclass", "rst-class", "tabularcolumns", "container"})
_VERSIONS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}


class _Lenient(Directive):
    """Any directive docutils does not know, read leniently by what its name says it holds."""

    has_content = True
    required_arguments = 0
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions(name=directives.unchanged)  # type: ignore[misc]

    def run(self) -> list[nodes.Node]:
        name = self.name.lower()
        short = name.rsplit(":", 1)[-1]
        argument = " ".join(self.arguments[0].split()) if self.arguments else ""
        if name in _SILENT or short in _DIAGRAMS or name in _DIAGRAMS:
            return []
        if name == "include":
            return [_Include(target=argument)] if argument else []
        if name == "toctree":
            return [self._toctree()]
        if name in _CODE or short in _CODE:
            code = "\n".join(self.content)
            if not code.strip():
                return []
            block = nodes.literal_block(code, code)
            block["language"] = argument.split()[0] if argument and name != "productionlist" else ""
            return [block]
        out: list[nodes.Node] = []
        if argument and name not in _CONDITIONS:
            if name.startswith("auto") or short in _OBJECTS or ":" in name:
                lines = [line.strip() for line in self.arguments[0].splitlines() if line.strip()]
                out.extend(nodes.paragraph("", "", _Code(line, line)) for line in lines)
            elif name in _VERSIONS:
                version, _, rest = argument.partition(" ")
                out.append(nodes.paragraph("", f"{_VERSIONS[name]} {version}." + (f" {rest}" if rest else "")))
            else:
                out.append(nodes.paragraph("", argument))
        elif name in _VERSIONS:
            out.append(nodes.paragraph("", _VERSIONS[name] + "."))
        if self.content:
            holder = nodes.container()
            if name == "autosummary":
                names = [line.strip() for line in self.content if line.strip() and not line.strip().startswith(":")]
                holder += [nodes.paragraph("", "", _Code(n, n)) for n in names]
            else:
                self.state.nested_parse(self.content, self.content_offset, holder)
            out.append(holder)
        return out

    def _toctree(self) -> nodes.Node:
        entries: list[tuple[str | None, str]] = []
        for line in self.content:
            line = line.strip()
            if line and not line.startswith(":"):
                entries.append(_split_title(line))
        return _Toctree(entries=entries, glob="glob" in self.options)


# docutils' own directives that Sphinx documents use with options docutils does not know.
_OWN = frozenset({"include", "toctree", "code", "code-block", "sourcecode", "literalinclude", "contents", "raw"})

_LOCK = threading.Lock()


class _Lookups:
    """docutils' directive and role lookups, falling back to the lenient readers while a page is
    parsed (as Sphinx itself swaps them, ``sphinx.util.docutils.sphinx_domains``)."""

    def __init__(self) -> None:
        self._directive = directives.directive
        self._role = roles.role

    def directive(self, name: str, language: Any, document: Any) -> tuple[Any, list[Any]]:
        if name.lower() in _OWN:
            return _Lenient, []
        found, messages = self._directive(name, language, document)
        return (found, messages) if found is not None else (_Lenient, [])

    def role(self, name: str, language: Any, lineno: int, reporter: Any) -> tuple[Any, list[Any]]:
        if name.lower() in _XREF_ROLES:
            return _lenient_role, []
        found, messages = self._role(name, language, lineno, reporter)
        return (found, messages) if found is not None else (_lenient_role, [])

    def __enter__(self) -> None:
        directives.directive = self.directive  # type: ignore[assignment]
        roles.role = self.role  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        directives.directive = self._directive
        roles.role = self._role


# -- a page ----------------------------------------------------------------------------------


@dataclass
class RstPage:
    """A reStructuredText page parsed: its title (the document title, or its first section's),
    its labels (``.. _label:`` targets: label -> the title of what they label) and its links as
    written (``(kind, target)``, kind ``doc``, ``ref``, ``file`` or ``toctree``)."""

    title: str | None
    labels: dict[str, str | None]
    links: list[tuple[str, str]]
    tree: nodes.document = field(repr=False)
    globs: list[str] = field(default_factory=list)


class RstError(Exception):
    """A page docutils cannot read (what is wrong is the message)."""


def read_rst(text: str, where: str) -> RstPage:
    """Parse one page (``where`` names it in messages; nothing is read from disk). Raises
    :class:`RstError` for a page docutils cannot read: nesting too deep, a line longer than its
    ``line_length_limit`` (10,000 characters, a guard against slow parsing)."""
    try:
        with _LOCK, _Lookups():
            tree = publish_doctree(
                text,
                source_path=where,
                settings_overrides={**_SETTINGS, "warning_stream": io.StringIO()},
            )
    except RecursionError:
        raise RstError("reStructuredText nested too deeply for docutils to read") from None
    for message in tree.findall(nodes.system_message):
        if message.get("level", 0) >= 3 and "line-length-limit" in message.astext():
            raise RstError("a line longer than docutils reads (10,000 characters)")
    title: str | None = None
    if tree.get("title"):
        title = " ".join(str(tree["title"]).split())
    else:
        for section in tree.findall(nodes.section):
            if section.children and isinstance(section[0], nodes.title):
                title = " ".join(section[0].astext().split())
                break
    labels: dict[str, str | None] = {}
    for name, explicit in tree.nametypes.items():
        ref = tree.nameids.get(name)
        node = tree.ids.get(ref) if ref else None
        if not explicit or node is None or node.get("refuri") or (isinstance(node, nodes.target) and not node["ids"]):
            continue
        if isinstance(node, nodes.section) and node.children and isinstance(node[0], nodes.title):
            labels[name.lower()] = " ".join(node[0].astext().split())
        elif isinstance(node, nodes.document):
            labels[name.lower()] = title
        else:
            labels[name.lower()] = None
    links: list[tuple[str, str]] = []
    globs: list[str] = []
    for found in tree.findall(nodes.Element):
        if isinstance(found, _Xref):
            links.append((found["kind"], found["target"]))
        elif isinstance(found, _Toctree):
            for _, target in found["entries"]:
                if found["glob"] and any(c in target for c in "*?["):
                    globs.append(target)
                else:
                    links.append(("doc", target))
        elif isinstance(found, _Include):
            links.append(("file", found["target"]))
        elif isinstance(found, nodes.reference) and found.get("refuri"):
            links.append(("url", found["refuri"]))
    return RstPage(title or None, labels, links, tree, globs)


# -- a folder of pages ------------------------------------------------------------------------


def sphinx_root(path: Path, top: Path) -> Path:
    """The Sphinx source folder of a page: the nearest folder from the page's up to ``top`` that
    holds a ``conf.py``, else ``top`` (``:doc:`/install``` is relative to it)."""
    folder = path.parent
    top = top.resolve()
    here = folder.resolve()
    while True:
        if (here / "conf.py").is_file():
            return here
        if here == top or here.parent == here or top not in here.parents:
            return top
        here = here.parent


class RstSite:
    """The pages of one read, resolving links from ``.rst`` pages to the others' ids.

    ``files`` are ``(path, id, root)`` of every page read (any format: ``:doc:`` may name a
    markdown page), ``root`` the folder the read started from. A page's links resolve as Sphinx
    does: ``:doc:`` and ``toctree`` entries relative to the page's folder (``/x`` to the Sphinx
    folder, :func:`sphinx_root`), ``:ref:`` through the labels of every page, ``include`` paths
    and `` `text <other.html>`_ `` links relative to the page, to a page read.
    """

    def __init__(
        self,
        files: Iterable[tuple[Path, str, Path]],
        pages: Mapping[str, RstPage],
        errors: Mapping[str, str] | None = None,
    ) -> None:
        self._pages = dict(pages)
        self.errors = dict(errors or {})
        """Why a page could not be read (page id -> what docutils could not read)."""
        self._by_file: dict[str, str] = {}
        self._by_stem: dict[str, str] = {}
        self._root: dict[str, Path] = {}
        self._folder: dict[str, Path] = {}
        roots: dict[tuple[Path, Path], Path] = {}
        for path, page_id, top in files:
            where = path.resolve()
            self._by_file.setdefault(str(where), page_id)
            self._by_stem.setdefault(str(where.with_suffix("")), page_id)
            self._folder[page_id] = where.parent
            key = (where.parent, top)
            if key not in roots:
                roots[key] = sphinx_root(path, top)
            self._root[page_id] = roots[key]
        self._labels: dict[str, tuple[str, str | None]] = {}
        for page_id, page in self._pages.items():
            for label, title in page.labels.items():
                self._labels.setdefault(label, (page_id, title))

    def __contains__(self, page_id: object) -> bool:
        """Whether the page was read and parsed (or docutils said why not: :attr:`errors`)."""
        return page_id in self._pages or page_id in self.errors

    def title(self, page_id: str) -> str | None:
        page = self._pages.get(page_id)
        return page.title if page is not None else None

    def links(self, page_id: str) -> tuple[str, ...]:
        """The ids of the pages ``page_id`` links to, once each, in text order, without itself."""
        page = self._pages[page_id]
        found: dict[str, None] = {}
        for kind, target in page.links:
            hit = self._resolve(page_id, kind, target)
            if hit is not None:
                found[hit] = None
        for pattern in page.globs:
            found.update(dict.fromkeys(self.glob(page_id, pattern)))
        found.pop(page_id, None)
        return tuple(found)

    def text(self, page_id: str) -> str:
        """The page's text as markdown: headings, paragraphs, lists, fenced code (:class:`RstError`
        for a page nested too deeply to write)."""
        try:
            return _Writer(self, page_id).write(self._pages[page_id].tree)
        except RecursionError:
            raise RstError("reStructuredText nested too deeply to read") from None

    def _resolve(self, page_id: str, kind: str, target: str) -> str | None:
        if kind == "ref":
            label = self._labels.get(target.lower())
            return label[0] if label is not None else self._resolve(page_id, "doc", target) if "/" in target else None
        if kind == "url":
            parts = urlsplit(target)
            if parts.scheme or parts.netloc or not parts.path:
                return None
            target, kind = unquote(parts.path), "file"
        base = self._root[page_id] if target.startswith("/") else self._folder[page_id]
        joined = os.path.normpath(os.path.join(base, target.lstrip("/")))
        if kind == "doc":
            return self._by_stem.get(joined) or self._by_file.get(joined)
        hit = self._by_file.get(joined)
        if hit is None and joined.endswith((".html", ".htm")):  # (a link to the built page)
            hit = self._by_stem.get(joined.rsplit(".", 1)[0])
        return hit

    def glob(self, page_id: str, pattern: str) -> Iterator[str]:
        """The pages a toctree's ``:glob:`` pattern in ``page_id`` names, in path order."""
        base = self._root[page_id] if pattern.startswith("/") else self._folder[page_id]
        full = os.path.normpath(os.path.join(base, pattern.lstrip("/")))
        for stem, other in sorted(self._by_stem.items()):
            if fnmatchcase(stem, full):
                yield other

    def entry_title(self, page_id: str, kind: str, target: str) -> str | None:
        """The title a link without text shows: the labelled section's or the page's."""
        if kind == "ref":
            hit = self._labels.get(target.lower())
            if hit is not None and hit[1]:
                return hit[1]
        found = self._resolve(page_id, kind, target)
        if found is None:
            return None
        # (A page in another format is shown by its file name: its title is read after this one.)
        return self.title(found) or file_title(found)


# -- text --------------------------------------------------------------------------------------

_SKIP = (
    nodes.system_message,
    nodes.comment,
    nodes.target,
    nodes.substitution_definition,
    nodes.raw,
    nodes.pending,
    nodes.transition,
    nodes.footnote_reference,
    nodes.citation_reference,
    _Include,
    nodes.decoration,
)


class _Writer:
    def __init__(self, site: RstSite, page_id: str) -> None:
        self._site = site
        self._page = page_id

    def write(self, tree: nodes.document) -> str:
        blocks: list[str] = []
        title = tree.get("title")
        start = 0
        if title and tree.children and isinstance(tree[0], nodes.title):
            blocks.append("# " + " ".join(tree[0].astext().split()))
            start = 1
            if len(tree.children) > 1 and isinstance(tree[1], nodes.subtitle):
                blocks.append(self._inline(tree[1]))
                start = 2
        for child in tree.children[start:]:
            blocks.extend(self._blocks(child, 2 if title else 1))
        text = "\n\n".join(b for b in blocks if b.strip())
        return text + "\n" if text else ""

    def _blocks(self, node: nodes.Node, depth: int) -> list[str]:
        if isinstance(node, _SKIP):
            return []
        if isinstance(node, nodes.section):
            out: list[str] = []
            for child in node.children:
                if isinstance(child, nodes.title):
                    out.append("#" * min(depth, 6) + " " + " ".join(self._inline(child).split()))
                else:
                    out.extend(self._blocks(child, depth + 1))
            return out
        if isinstance(node, nodes.literal_block | nodes.doctest_block):
            code = node.astext().rstrip("\n")
            language = node.get("language", "") if isinstance(node, nodes.literal_block) else "pycon"
            fence = "````" if "```" in code else "```"
            return [f"{fence}{language}\n{code}\n{fence}"] if code.strip() else []
        if isinstance(node, nodes.paragraph | nodes.rubric | nodes.caption | nodes.attribution):
            return [self._inline(node)]
        if isinstance(node, nodes.title):  # (a topic's, a sidebar's, a generic admonition's)
            return [self._inline(node)]
        if isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            out = []
            for n, item in enumerate(node.children, start=1):
                marker = f"{n}. " if isinstance(node, nodes.enumerated_list) else "- "
                out.append(self._item(marker, item, depth))
            return ["\n".join(out)]
        if isinstance(node, nodes.definition_list):
            out = []
            for item in node.children:
                term = " ".join(self._inline(t) for t in item.children if isinstance(t, nodes.term))
                body = [b for d in item.children if isinstance(d, nodes.definition) for b in self._children(d, depth)]
                out.append(term + (": " + body[0] if body else ""))
                out.extend(body[1:])
            return out
        if isinstance(node, nodes.field_list | nodes.docinfo):
            out = []
            for item in node.children:
                if isinstance(item, nodes.field):
                    name = self._inline(item[0])
                    body = self._children(item[1], depth)
                    out.append(name + ": " + " ".join(body))
                elif isinstance(item, nodes.Element):
                    out.append(f"{item.tagname.replace('_', ' ').capitalize()}: {self._inline(item)}")
            return ["\n".join(out)]
        if isinstance(node, nodes.option_list):
            out = []
            for item in node.children:
                if not isinstance(item, nodes.option_list_item):
                    continue
                options = item[0].astext()
                body = self._children(item[1], depth) if len(item.children) > 1 else []
                out.append(options + (": " + " ".join(body) if body else ""))
            return ["\n".join(out)]
        if isinstance(node, nodes.line_block):
            return ["\n".join(self._inline(line) for line in node.findall(nodes.line))]
        if isinstance(node, nodes.table):
            rows = []
            for row in node.findall(nodes.row):
                rows.append(" | ".join(" ".join(" ".join(self._children(e, depth)).split()) for e in row.children))
            return ["\n".join(r for r in rows if r.strip(" |"))]
        if isinstance(node, nodes.image):
            return [node["alt"]] if node.get("alt") else []
        if isinstance(node, _Toctree):
            lines = []
            for title, target in node["entries"]:
                if node["glob"] and any(c in target for c in "*?["):
                    for other in self._site.glob(self._page, target):
                        if other != self._page:
                            lines.append("- " + (self._site.title(other) or file_title(other)))
                    continue
                shown = title or self._site.entry_title(self._page, "doc", target)
                if shown:
                    lines.append("- " + shown)
            return ["\n".join(lines)] if lines else []
        if isinstance(node, nodes.Admonition) and not isinstance(node, nodes.admonition):
            return self._children(node, depth)
        if isinstance(node, nodes.TextElement):
            return [self._inline(node)]
        return self._children(node, depth)

    def _children(self, node: nodes.Node, depth: int) -> list[str]:
        return [b for child in node.children for b in self._blocks(child, depth)]

    def _item(self, marker: str, item: nodes.Node, depth: int) -> str:
        blocks = self._children(item, depth)
        if not blocks:
            return marker.rstrip()
        pad = " " * len(marker)
        lines = "\n\n".join(blocks).split("\n")
        return marker + lines[0] + "".join("\n" + (pad + line if line.strip() else "") for line in lines[1:])

    def _inline(self, node: nodes.Node) -> str:
        parts: list[str] = []
        for child in node.children:
            if isinstance(child, nodes.Text):
                parts.append(str(child))
            elif isinstance(child, _SKIP):
                continue
            elif isinstance(child, _Code | nodes.literal):
                code = child.astext()
                ticks = "``" if "`" in code else "`"
                parts.append(f"{ticks}{code}{ticks}")
            elif isinstance(child, _Xref):
                shown = child.astext() if child["explicit"] else None
                shown = shown or self._site.entry_title(self._page, child["kind"], child["target"]) or child.astext()
                parts.append(shown)
            elif isinstance(child, nodes.image):
                parts.append(child.get("alt", ""))
            elif isinstance(child, nodes.Element):
                parts.append(self._inline(child))
        return "".join(parts)
