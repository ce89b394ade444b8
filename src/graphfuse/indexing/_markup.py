"""The markup of documentation tools, left out of the text that is indexed.

A documentation folder is written for a site generator: MkDocs / Material (attribute lists
``{ #id }``, admonitions ``!!! note``, ``??? tip``, ``/// warning`` blocks, content tabs
``=== "Tab"``, mkdocstrings ``::: package.Name`` lines, snippet includes ``--8<--``),
Docusaurus and MyST (``:::note``, ``:::{note}``, fenced ``{note}`` directives), HTML comments
and tags, mermaid and other diagram fences. A reader of the rendered page sees none of it; in
an index it would cost context tokens, blur embeddings and leak into titles. What the markup
wraps stays: an admonition's or a tab's title and content are prose, and code stays code.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

__all__ = ["clean_markup", "clean_title"]

# A fence that opens a code block (up to 3 spaces in), its info string after it.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Fences whose content is a diagram's source (drawn on the page, not read as code).
_DIAGRAMS = frozenset(
    {
        "mermaid",
        "plantuml",
        "puml",
        "graphviz",
        "dot",
        "d2",
        "ditaa",
        "svgbob",
        "wavedrom",
        "nomnoml",
        "bpmn",
        "vega",
        "vega-lite",
        "excalidraw",
        "flowchart",
        "sequence",
    }
)
# Directive names that wrap prose (MyST/Sphinx and Docusaurus admonitions).
_ADMONITIONS = frozenset(
    {
        "note",
        "tip",
        "info",
        "hint",
        "important",
        "warning",
        "caution",
        "danger",
        "error",
        "attention",
        "seealso",
        "admonition",
        "dropdown",
        "details",
        "todo",
        "versionadded",
        "versionchanged",
        "deprecated",
        "topic",
        "sidebar",
        "success",
        "question",
        "failure",
        "bug",
        "example",
        "quote",
        "abstract",
        "summary",
        "tldr",
        "check",
        "done",
        "help",
        "faq",
        "fail",
        "missing",
        "cite",
        "secondary",
        "primary",
        "margin",
        "epigraph",
        "highlights",
        "pull-quote",
        "tab",
        "tab-item",
        "tab-set",
        "card",
        "grid",
        "grid-item",
        "grid-item-card",
    }
)
# !!! note "Title", ??? tip, ???+ warning "Title" (Python-Markdown admonitions, Material's
# collapsible ones) and === "Tab" (Material content tabs): the body is indented four spaces.
# (A bare === line is a heading's underline, not a tab.)
_INDENTED_BLOCK = re.compile(
    r"^(?:(?:!!!|\?\?\?\+?)[ \t]+[\w-]+(?:[ \t]+[\w-]+)*[ \t]*(?:\"(.*)\")?|===\+?[ \t]+\"(.*)\")[ \t]*$"
)
# /// tip | Title ... /// (PyMdown Blocks; more slashes to nest).
_SLASH_BLOCK = re.compile(r"^(/{3,})[ \t]*([\w-]+)?[ \t]*(?:\|[ \t]*(.*?))?[ \t]*$")
# ::: package.module.Name (mkdocstrings), with indented options after it.
_MKDOCSTRINGS = re.compile(r"^:{3}[ \t]+([A-Za-z_][\w.:-]*)[ \t]*$")
# :::note Title, :::tip[Title], :::{note} Title, ::::{tab-item} Title, and the closing :::.
_COLON_BLOCK = re.compile(r"^[ \t]{0,3}(:{3,})[ \t]*(?:\{([\w-]+)\}|([\w-]+))?[ \t]*(?:\[(.*)\])?[ \t]*(.*?)[ \t]*$")
# A directive's options (MyST ``:class: tip``) directly after its opening line.
_DIRECTIVE_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?$")
# --8<-- "file.md" (PyMdown snippets), the block form's bare --8<-- lines, FastAPI's
# {* ../../docs_src/app.py hl[3] *} and mkdocs-macros / Jinja statements {% include "x" %}.
_SNIPPET = re.compile(r"^[ \t]*-{1,2}8<-{1,2}[ \t]*(.*)$")
_INCLUDE_LINE = re.compile(r"^[ \t]*(?:\{\*.*\*\}|\{%.*%\})[ \t]*$")

# Inline, in prose only.
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_RAW_ELEMENT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s+[^<>]*?)?\s*/?>")
_ATTR_VALUE = r"(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'{}]+)"
_ATTR_ITEM = r"(?:[#.][\w:-]+|[\w:-]+=" + _ATTR_VALUE + r")"
_ATTR_LIST = re.compile(r"[ \t]*\{:?[ \t]*" + _ATTR_ITEM + r"(?:[ \t]+" + _ATTR_ITEM + r")*[ \t]*\}")
# An anchor: an empty link carrying only an attribute list (MkDocs autorefs' ``[](){#name}``).
_ANCHOR = re.compile(r"[ \t]*\[\]\(\)\{:?[ \t]*" + _ATTR_ITEM + r"(?:[ \t]+" + _ATTR_ITEM + r")*[ \t]*\}")
_BLANK_RUN = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")  # (where blocks were left out)
_ICON = re.compile(r":(?:material|fontawesome|octicons|simple|fa|fas|far|fab)-[\w-]+:")
# A code span (inline), like the link reader's: its text is code, left as it is.
_SPAN = re.compile(r"(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)", re.DOTALL)


def clean_markup(text: str) -> str:
    """``text`` (markdown) without the markup of documentation tools; code left as it is.

    Blocks: admonitions, content tabs and directive blocks lose their markers and keep their
    title (when one is written) and content, dedented; diagram fences, mkdocstrings
    ``:::`` lines (with their options), snippet includes and template statements go. Inline,
    outside code: HTML comments, ``<script>``/``<style>`` elements and tags (their text
    stays), attribute lists (``{ #id }``, ``{: .class }``, ``{ width="300" }``), anchors made of
    an empty link and an attribute list (``[](){#id}``) and Material
    icon shortcodes go, and HTML entities are read (``&amp;`` as ``&``).
    """
    blocks = "\n".join(_blocks(text.split("\n"), 0))
    if blocks == text and _inline(text, collapse=False) == text:
        return text  # (blank lines are left as they are where nothing was taken out)
    cleaned = _inline(blocks, collapse=True).lstrip("\n")
    stripped = cleaned.rstrip("\n")
    return stripped + "\n" if cleaned != stripped else cleaned


def clean_title(title: str) -> str:
    """A title without attribute lists, tags and comments (``Tasks { #tasks }`` is ``Tasks``)."""
    return " ".join(_prose(title).split())


def _indent(line: str) -> int:
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _dedent(line: str) -> str:
    expanded = line.expandtabs(4)
    return expanded[min(4, _indent(line)) :]


def _fence_end(lines: list[str], start: int, marker: str) -> int:
    """The index of the line closing the fence opened at ``start`` (``len(lines)`` if none)."""
    closing = re.compile(r"^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*$")
    for j in range(start + 1, len(lines)):
        if closing.match(lines[j]):
            return j
    return len(lines)


def _blocks(lines: list[str], depth: int) -> list[str]:
    out: list[str] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        fence = _FENCE.match(line)
        if fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            end = _fence_end(lines, i, fence.group(1))
            info = fence.group(2).strip()
            word = info.split()[0].lower() if info else ""
            name = word.strip("{}")
            if name in _DIAGRAMS:
                pass  # a diagram: drawn, not read
            elif word.startswith("{") and name in _ADMONITIONS and depth < 20:
                body = lines[i + 1 : end]
                while body and _DIRECTIVE_OPTION.match(body[0]):
                    body = body[1:]
                _title(out, info[len(word) :])
                out.extend(_blocks(body, depth + 1))
            else:
                out.extend(lines[i : end + 1])
            i = end + 1
            continue
        block = _INDENTED_BLOCK.match(line)
        if block is not None and depth < 20:
            j = i + 1
            while j < n and (not lines[j].strip() or _indent(lines[j]) >= 4):
                j += 1
            while j > i + 1 and not lines[j - 1].strip():
                j -= 1
            _title(out, block.group(1) or block.group(2) or "")
            out.extend(_blocks([_dedent(x) for x in lines[i + 1 : j]], depth + 1))
            i = j
            continue
        slash = _SLASH_BLOCK.match(line)
        if slash is not None:
            i += 1
            if slash.group(2):  # an opening: its options (indented key: value lines) go too
                while i < n and lines[i].strip() and _indent(lines[i]) >= 2 and ":" in lines[i]:
                    i += 1
                _title(out, slash.group(3) or "")
            continue
        doc = _MKDOCSTRINGS.match(line)
        if doc is not None and doc.group(1).lower() not in _ADMONITIONS:
            i += 1
            while i < n and lines[i].strip() and _indent(lines[i]) >= 2:
                i += 1  # its options (YAML, indented)
            continue
        colon = _COLON_BLOCK.match(line)
        if colon is not None:
            i += 1
            if colon.group(2) or colon.group(3):
                while i < n and _DIRECTIVE_OPTION.match(lines[i]):
                    i += 1
                _title(out, colon.group(4) or colon.group(5) or "")
            elif colon.group(4) or colon.group(5):
                out.append(line)  # ::: followed by something else: not a directive
            continue
        snippet = _SNIPPET.match(line)
        if snippet is not None:
            i += 1
            if not snippet.group(1).strip():  # the block form: file names up to the next bare --8<--
                j = i
                while j < n and not _bare_snippet(lines[j]):
                    j += 1
                if j < n:
                    i = j + 1
            continue
        if _INCLUDE_LINE.match(line):
            i += 1
            continue
        out.append(line)
        i += 1
    return out


def _title(out: list[str], title: str) -> None:
    """A block's title, as a paragraph of its own (it is not the first sentence of the body)."""
    if title.strip():
        out.extend([title.strip(), ""])


def _bare_snippet(line: str) -> bool:
    found = _SNIPPET.match(line)
    return found is not None and not found.group(1).strip()


def _inline(text: str, *, collapse: bool) -> str:
    """Inline markup out of the prose of ``text``; fenced code and code spans kept."""
    out: list[str] = []
    lines = text.split("\n")
    prose: list[str] = []
    i, n = 0, len(lines)
    while i <= n:
        fence = _FENCE.match(lines[i]) if i < n else None
        if i == n or (fence is not None and not (fence.group(1)[0] == "`" and "`" in fence.group(2))):
            if prose:
                segment = _prose("\n".join(prose) + ("\n" if i < n else ""))
                out.append(_BLANK_RUN.sub("\n\n", segment) if collapse else segment)
                prose = []
            if i == n:
                break
            assert fence is not None
            end = _fence_end(lines, i, fence.group(1))
            out.append("\n".join(lines[i : end + 1]) + ("\n" if end + 1 < n else ""))
            i = end + 1
            continue
        prose.append(lines[i])
        i += 1
    return "".join(out)


def outside(code: re.Pattern[str], text: str, prose: Callable[[str], str]) -> str:
    """``prose`` applied to the text between ``code``'s matches; the matches are kept as written."""
    out: list[str] = []
    at = 0
    for match in code.finditer(text):
        out.append(prose(text[at : match.start()]))
        out.append(match.group(0))
        at = match.end()
    out.append(prose(text[at:]))
    return "".join(out)


def _prose(text: str) -> str:
    """Inline markup out of prose, code spans left as they are."""
    return outside(_SPAN, _COMMENT.sub("", text), _plain)


def _plain(text: str) -> str:
    if "<" in text:
        text = _RAW_ELEMENT.sub("", text)
        text = _TAG.sub("", text)
    if "{" in text:
        text = _ANCHOR.sub("", text)
        text = _ATTR_LIST.sub("", text)
    if ":" in text:
        text = _ICON.sub("", text)
    if "&" in text:
        text = html.unescape(text)
    return text
