"""Sample questions for the dashboard, made from the store when the server was given none."""

from __future__ import annotations

import re
from typing import Any

from .._capabilities import DocumentListing
from .._types import KIND_KEY
from ._scope import Scope

__all__ = ["store_questions"]

_READ = 500  # documents looked at, at most (the listing's order: spread over it)
_WORDS = re.compile(r"\w[\w'\-]*")


def _prompt(title: str | None, text: str | None) -> str | None:
    """A question about a document: from its title, else from its first words."""
    if title and title.strip():
        t = " ".join(title.split()).rstrip(".:")
        if t.endswith("?"):
            return t
        return f"What should I know about {t}?"
    words = _WORDS.findall(text or "")[:8]
    if len(words) < 3:
        return None
    return f"What does the page starting “{' '.join(words)}…” explain?"


async def store_questions(graph: Any, scope: Scope, limit: int = 8) -> list[str]:
    """Up to ``limit`` questions about documents of ``scope`` (titles first), spread over the store."""
    if not isinstance(graph, DocumentListing):
        return []
    titled: list[str] = []
    untitled: list[str] = []
    seen = 0
    async for doc in graph.iter_documents(filter=scope.base_filter):
        if seen >= _READ:
            break
        if doc.metadata.get(KIND_KEY) in ("chunk", "entity") or not scope.visible(doc.id, doc.metadata):
            continue
        seen += 1
        title = doc.metadata.get("title")
        prompt = _prompt(title if isinstance(title, str) else None, doc.content)
        if prompt is None:
            continue
        (titled if isinstance(title, str) and title.strip() else untitled).append(prompt)
    pool = list(dict.fromkeys(titled or untitled))
    if len(pool) <= limit:
        return pool
    step = len(pool) / limit
    return [pool[int(i * step)] for i in range(limit)]
