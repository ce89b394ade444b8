"""Sample questions for the dashboard, made from the store when the server was given none."""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from .._core._capabilities import DocumentListing
from .._core._types import KIND_KEY
from ._scope import Scope

__all__ = ["headings", "store_questions"]

_READ = 500  # documents looked at, at most (the listing's order: spread over it)
_WORDS = re.compile(r"\w[\w'\-]*")
_ATX = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_UNDERLINE = re.compile(r"""^([=\-~^"'`#*+:.])\1{2,}[ \t]*$""")
_MARKUP = re.compile(r"[*_`]+|\[([^\]]*)\]\([^)]*\)")


def _clean(line: str) -> str:
    return " ".join(_MARKUP.sub(lambda m: m.group(1) or "", line).split()).rstrip(".:")


def headings(text: str | None, limit: int = 4) -> list[str]:
    """The first ``limit`` headings of a page's text: Markdown ``#`` and setext, reStructuredText
    over/underlined; never a line inside a fenced code block."""
    out: list[str] = []
    lines = (text or "").splitlines()
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        m = _ATX.match(line)
        title = m.group(1) if m else None
        if title is None and line.strip() and not _UNDERLINE.match(line) and i + 1 < len(lines):
            under = lines[i + 1]
            if _UNDERLINE.match(under) and len(under.strip()) >= len(line.strip()) and not line.startswith(" "):
                title = line
        if title is not None and (name := _clean(title)) and name not in out:
            out.append(name)
            if len(out) >= limit:
                break
    return out


def _from_file_name(title: str, metadata: dict[str, Any], doc_id: str) -> bool:
    """Whether ``title`` is only the page's file name (``api`` for ``docs/api.rst``): a reader's last resort."""
    key = re.sub(r"[\W_]+", "", title).lower()
    for where in (metadata.get("source"), metadata.get("path"), doc_id):
        if isinstance(where, str) and where:
            path = PurePath(where)
            stem = re.sub(r"[\W_]+", "", path.stem).lower()
            # "api" for api.rst; "Deploying: nginx" for deploying/nginx.rst (a readable file name).
            whole = re.sub(r"[\W_]+", "", str(path.with_suffix(""))).lower()
            if stem and key.endswith(stem) and whole.endswith(key):
                return True
    return False


def _question(subject: str) -> str:
    return subject if subject.endswith("?") else f"What should I know about {subject}?"


def _prompts(title: str | None, text: str | None, metadata: dict[str, Any], doc_id: str) -> tuple[list[str], bool]:
    """Questions about a page, best first, and whether they come from a title or heading.

    From its title, unless the title is only its file name; then from its headings (a section
    of a titled page: "What does <title> say about <section>?"); else from its first words.
    """
    found = headings(text)
    named = title is not None and bool(title.strip()) and not _from_file_name(title, metadata, doc_id)
    page = _clean(title) if named and title is not None else (found[0] if found else None)
    if page:
        sections = [h for h in found if h != page]
        return [_question(page), *(f"What does {page} say about {h}?" for h in sections[:1])], True
    words = _WORDS.findall(text or "")[:8]
    if len(words) < 3:
        return [], False
    return [f"What does the page starting “{' '.join(words)}…” explain?"], False


async def store_questions(graph: Any, scope: Scope, limit: int = 8) -> list[str]:
    """Up to ``limit`` questions about documents of ``scope``, spread over the store: from their titles
    (never a bare file name) and headings first, else from their first words."""
    if not isinstance(graph, DocumentListing):
        return []
    titled: list[str] = []
    sections: list[str] = []
    untitled: list[str] = []
    seen = 0
    async for doc in graph.iter_documents(filter=scope.base_filter):
        if seen >= _READ:
            break
        if doc.metadata.get(KIND_KEY) in ("chunk", "entity") or not scope.visible(doc.id, doc.metadata):
            continue
        seen += 1
        title = doc.metadata.get("title")
        prompts, named = _prompts(title if isinstance(title, str) else None, doc.content, dict(doc.metadata), doc.id)
        if not prompts:
            continue
        (titled if named else untitled).append(prompts[0])
        sections.extend(prompts[1:])
    # Pages by their titles first; a store of few pages also gets questions about their sections.
    pool = list(dict.fromkeys(titled + sections if len(titled) < limit else titled)) or list(dict.fromkeys(untitled))
    if len(pool) <= limit:
        return pool
    step = len(pool) / limit
    return [pool[int(i * step)] for i in range(limit)]
