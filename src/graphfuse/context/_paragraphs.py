"""Paragraphs, not lines: how a context reads hard-wrapped text and the markup around it.

Documentation and notes are often wrapped at a fixed width (``fill-column``, ``textwidth``,
RFCs, docstrings): a line break inside a paragraph is layout, not a sentence end. Before a
context splits a passage into sentences, :func:`join_paragraphs` joins the lines of each
paragraph by the rule Markdown and reStructuredText share: a blank line, a list item, a
heading, a table, a code block, a directive or a block quote ends a paragraph; a single line
break inside prose does not. In a chat log or transcript (two or more lines start with a
speaker label, ``Anna: ...``), each labelled line starts a paragraph of its own, so a message's
continuation lines join its turn.

:func:`line_kinds` says what each line of a joined text is (prose, a heading, markup such as
an underline, a fence or a directive, code, a table row), so that a description is read from
prose and a markup line is never taken for a sentence that states something.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import lru_cache

from ._dialogue import is_dialogue, starts_turn

__all__ = [
    "CODE",
    "HEADING",
    "MARKUP",
    "PROSE",
    "TABLE",
    "join_paragraphs",
    "line_kinds",
    "span_kinds",
    "subject_index",
    "subject_span",
    "title_lines",
]

PROSE = "prose"
"""A paragraph, a list item, a block quote or a turn of a dialogue (and blank lines)."""
HEADING = "heading"
"""A section heading: ``# Title``, or a line underlined (``Title`` over ``=====``)."""
MARKUP = "markup"
"""A line that only marks structure: an underline or a rule, a code fence, a directive or a
comment (``.. code-block:: nginx``, ``::: module``, ``!!! note``), a table rule, an HTML tag, a
link definition, front matter."""
CODE = "code"
"""A line of a code block (fenced, indented, a literal block after ``::``, a directive's body
kept as written)."""
TABLE = "table"
"""A row of a table."""

# A rule or an underline: one punctuation character repeated (rst's adornments, Markdown's setext
# underlines and thematic breaks).
_RULE = re.compile(r"[ \t]*([=\-~^\"'`#*+_])\1{2,}[ \t]*")
_FENCE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"[ \t]{0,3}#{1,6}(?:[ \t]|$)")
# rst: ".. name:: args" (a directive), ".. _label:", ".. [1] ...", ".. |sub| ...", ".." (a comment);
# Markdown extensions: "::: module" (mkdocstrings, pandoc's divs), "!!! note", "??? tip" (admonitions).
_DIRECTIVE = re.compile(
    r"[ \t]*(?:\.\.(?:[ \t]+(?:(?P<name>[\w:.+-]+)::)?|$)"
    r"|(?:::+|!!!|\?\?\?\+?)(?:[ \t]+(?P<kind>\w+))?)"
)
# (Matched against the stripped line, so no two runs of blanks meet: linear on any line.)
_TABLE_RULE = re.compile(r"\+[-=+:]*\+|=+(?:[ \t]+=+)+|(?:\|[ \t]*)?:?-+:?(?:[ \t]*\|[ \t]*:?-+:?)+(?:[ \t]*\|)?")
_TABLE_ROW = re.compile(r"[ \t]*\|")
_HTML = re.compile(r"[ \t]*<(?:!--|/?[A-Za-z][\w-]*(?:[\s/>]|$))")
_LINK_DEFINITION = re.compile(r"[ \t]{0,3}\[[^\]]+\]:[ \t]*\S+[ \t]*$")
# A list item: a bullet, "1." / "1)", rst's auto-numbered "#.", or a field ":param x: ..." (rst).
_ITEM = re.compile(r"[ \t]*(?:[-*+\u2022\u2023\u25e6][ \t]+\S|(?:\d{1,3}|#)[.)][ \t]+\S|:[^:\s][^:]*:[ \t]+\S)")
_FIELD_ONLY = re.compile(r"[ \t]*:[^:\s][^:]*:[ \t]*")  # ":linenos:" (a directive's flag)
_QUOTE = re.compile(r"[ \t]{0,3}>")
# Directives and admonitions whose body is prose (joined); the body of any other (code, a table's
# data, a toctree, options, a comment) is kept as written.
_PROSE_BODY_TEXT = """note warning tip important hint caution danger error attention admonition seealso todo
    versionadded
    versionchanged deprecated versionremoved topic sidebar rubric epigraph highlights pull-quote container only
    glossary abstract summary tldr info success check done question help faq failure fail missing bug example
    quote cite"""
_PROSE_BODIES = frozenset(_PROSE_BODY_TEXT.split())
_FRONT_MATTER_LINES = 100


def join_paragraphs(text: str) -> str:
    """``text`` with each paragraph's lines joined by spaces (see the module's rule), every other
    line kept as it is, line breaks as ``\\n``. Joining a joined text changes nothing."""
    return _parse(text)[0]


def line_kinds(text: str) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """``(starts, kinds)``: the offset where each line of :func:`join_paragraphs` of ``text`` starts
    and what it is (:data:`PROSE`, :data:`HEADING`, :data:`MARKUP`, :data:`CODE`, :data:`TABLE`);
    for a joined text, its own lines."""
    return _parse(text)[1:]


def span_kinds(text: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    """What the line that each of ``spans`` (sentences of the joined ``text``) starts in is."""
    starts, kinds = line_kinds(text)
    return [kinds[bisect_right(starts, start) - 1] for start, _ in spans]


def subject_index(kinds: Sequence[str]) -> int:
    """Which sentence (of their :func:`span_kinds`) defines a text's subject: the first of prose,
    past the headings and markup that open it; in a text without prose, its last heading (else 0)."""
    for k, kind in enumerate(kinds):
        if kind == PROSE:
            return k
    return max((k for k, kind in enumerate(kinds) if kind == HEADING), default=0)


def subject_span(text: str, first: Callable[[str], tuple[int, int] | None]) -> tuple[int, int] | None:
    """``(start, end)`` in the joined ``text`` of the sentence that defines its subject, the first
    sentence of prose (``first(line)`` finds a line's first sentence); else its last heading;
    ``None`` when it has neither (code, tables and markup describe nothing)."""
    starts, kinds = line_kinds(text)
    lines = [k for k, kind in enumerate(kinds) if kind == PROSE and text[starts[k] : _end(text, starts, k)].strip()]
    if not lines:
        lines = [k for k, kind in enumerate(kinds) if kind == HEADING][-1:]
    for k in lines:
        found = first(text[starts[k] : _end(text, starts, k)])
        if found is not None:
            return starts[k] + found[0], starts[k] + found[1]
    return None


def _end(text: str, starts: Sequence[int], k: int) -> int:
    return starts[k + 1] - 1 if k + 1 < len(starts) else len(text)


def title_lines(text: str, title: str) -> int:
    """How many of ``text``'s first lines only say ``title`` (case and spacing aside): ``# Title``
    or ``Title`` (1), ``Title`` underlined (2), over- and underlined (3); 0 when they do not."""
    key = " ".join(title.split()).casefold()

    def says(line: str) -> bool:
        line = line.strip()
        return " ".join((line.lstrip("#") if line.startswith("#") else line).split()).casefold() == key

    lines = text.split("\n", 3)[:3]
    rules = [_RULE.fullmatch(line) is not None for line in lines]
    if len(lines) == 3 and rules[0] and rules[2] and says(lines[1]):
        return 3
    if says(lines[0]):
        return 2 if len(lines) > 1 and rules[1] and not lines[0].lstrip().startswith("#") else 1
    return 0


def _open_fence(lines: Sequence[str]) -> str:
    """The fence of the code block a text starts inside (``""`` when it starts outside any). A
    passage cut from a page (a chunk) may begin in the middle of a code block: then its first
    fence closes a block, which an opening fence rarely does bare (```` ```python ````), and its
    fences are odd in number."""
    fences = [m[1] for line in lines if (m := _FENCE.match(line)) is not None]
    if not fences or len(fences) % 2 == 0:
        return ""
    first = next(line.strip() for line in lines if _FENCE.match(line))
    same = [f for f in fences if f[0] == fences[0][0]]
    return fences[0] if first == fences[0] and len(same) % 2 else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


@lru_cache(maxsize=64)
def _parse(text: str) -> tuple[str, tuple[int, ...], tuple[str, ...]]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    reader = _Reader(is_dialogue(text))
    start = 0
    if lines[0].strip() == "---":  # front matter: "---", "key: value" lines, "---" (or "...")
        end = next((i for i in range(1, min(len(lines), _FRONT_MATTER_LINES)) if lines[i].strip() in ("---", "...")), 0)
        if end:
            reader.out += [(line, MARKUP) for line in lines[: end + 1]]
            start = end + 1
    reader.fence = _open_fence(lines[start:])
    for line in lines[start:]:
        reader.read(line)
    reader.flush()
    out = reader.out
    starts: list[int] = []
    at = 0
    for line, _ in out:
        starts.append(at)
        at += len(line) + 1
    return "\n".join(line for line, _ in out), tuple(starts), tuple(kind for _, kind in out)


class _Reader:
    """Reads lines one by one into ``out``: ``(line, kind)``, a paragraph's lines joined into one."""

    __slots__ = ("dialogue", "fence", "literal", "opener", "out", "para", "table", "top")

    def __init__(self, dialogue: bool) -> None:
        self.dialogue = dialogue
        self.out: list[tuple[str, str]] = []
        self.para: list[str] = []  # the lines of the paragraph being read
        self.fence = ""  # the fence that opened the code block being read
        self.literal = -1  # a literal block's lines are indented deeper than this (-1: not in one)
        self.opener = -1  # the indent of the line that announced a literal block (a directive, "...::")
        self.table = False  # in a table (after a table rule, until a blank line)
        self.top = True  # the last block was a paragraph or heading at the margin (indented code may follow)

    def flush(self) -> None:
        para = self.para
        if not para:
            return
        first = para[0].rstrip()
        joined = " ".join([first, *(p.strip() for p in para[1:])]) if len(para) > 1 else first
        self.out.append((joined, PROSE))
        self.top = _indent(first) == 0 and not _ITEM.match(first)
        if joined.endswith("::"):
            self.opener = _indent(first)  # (rst: an indented literal block follows)
        para.clear()

    def block(self, line: str, kind: str) -> None:
        """``line`` on a line of its own, ending the paragraph being read."""
        self.flush()
        self.out.append((line, kind))

    def read(self, line: str) -> None:
        stripped = line.strip()
        if self.fence:
            closes = stripped.startswith(self.fence) and not stripped.strip(self.fence[0])
            self.out.append((line, MARKUP if closes else CODE))
            self.fence = "" if closes else self.fence
            return
        if self.literal >= 0:
            if not stripped or _indent(line) > self.literal:
                self.out.append((line, CODE))
                return
            self.literal = -1
        if not stripped:
            self.block(line, PROSE)
            self.table = False
            return
        if self.opener >= 0 and not self.para:
            # The first line after what announced a literal block: deeper, it starts it; else there is none.
            deeper = _indent(line) > self.opener
            self.literal, self.opener = (self.opener if deeper else -1), -1
            if deeper:
                self.out.append((line, CODE))
                return
        self._structure(line, stripped)

    def _structure(self, line: str, stripped: str) -> None:
        if _FENCE.match(line):
            self.fence = stripped[: len(stripped) - len(stripped.lstrip(stripped[0]))]
            self.block(line, MARKUP)
        elif _TABLE_RULE.fullmatch(stripped):
            self.table = True
            self.block(line, MARKUP)
        elif self.table or _TABLE_ROW.match(line):
            self.block(line, TABLE)
        elif _RULE.fullmatch(line):
            # An underline makes the paragraph above it a heading; without one it is a rule (an overline).
            if self.para:
                self.out.append((" ".join(p.strip() for p in self.para), HEADING))
                self.para.clear()
            self.block(line, MARKUP)
            self.top = True
        elif _ATX.match(line):
            self.block(line, HEADING)
            self.top = True
        elif (directive := _DIRECTIVE.match(line)) is not None:
            self.block(line, MARKUP)
            named = directive["name"] or directive["kind"]
            if not (named and named.lower() in _PROSE_BODIES):
                self.opener = _indent(line)  # (its body, if indented, is kept as written)
            self.top = False
        elif _HTML.match(line) or _LINK_DEFINITION.match(line) or _FIELD_ONLY.fullmatch(line):
            self.block(line, MARKUP)
        elif _ITEM.match(line) or (self.dialogue and starts_turn(line)):
            self.flush()
            self.para.append(line)
        elif _QUOTE.match(line):
            if self.para and _QUOTE.match(self.para[0]):
                self.para.append(stripped[1:])
            else:
                self.flush()
                self.para.append(line)
        elif not self.para and _indent(line) >= 4 and self.top and (not self.out or not self.out[-1][0].strip()):
            # (Markdown: an indented code block after a paragraph, or a passage cut from inside one.)
            self.literal = _indent(line) - 1
            self.out.append((line, CODE))
        else:
            self.para.append(line)
