"""Decoded documents kept for one generation of a store file, least recently used first out.

A query reads the same pages and chunks again and again (a documentation site's few hundred
passages, the hub pages every question touches); decoding their rows and metadata JSON is most
of a read. The cache holds :class:`~graphfuse.Document` objects (immutable, their metadata
read-only) for the file's current generation only: any write, by this store or another
process, changes the generation and empties it. Bounded by the characters it holds.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from .._core._types import Document

__all__ = ["DocumentCache"]


def _size(document: Document, metadata_chars: int) -> int:
    return len(document.id) + len(document.content or "") + metadata_chars


class DocumentCache:
    """At most ``max_chars`` characters of documents (id, content, stored metadata) of one generation.

    ``max_chars=0`` keeps nothing. Safe to share across threads.
    """

    def __init__(self, max_chars: int) -> None:
        self._max = max_chars
        self._generation: int | None = None
        self._entries: OrderedDict[str, tuple[Document, int]] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    @property
    def max_chars(self) -> int:
        """The most characters held at once."""
        return self._max

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, ids: Sequence[str], generation: int) -> tuple[dict[str, Document], list[str]]:
        """The documents of ``ids`` held for ``generation``, and the ids not held (in input order)."""
        found: dict[str, Document] = {}
        missing: list[str] = []
        with self._lock:
            if generation != self._generation:
                return found, list(ids)
            for doc_id in ids:
                entry = self._entries.get(doc_id)
                if entry is None:
                    missing.append(doc_id)
                else:
                    self._entries.move_to_end(doc_id)
                    found[doc_id] = entry[0]
        return found, missing

    def add(self, documents: Iterable[tuple[Document, int]], generation: int) -> None:
        """Keep ``documents`` (each with the length of its stored metadata) as read at ``generation``.

        A generation other than the one held empties the cache first: what it held may have changed.
        """
        if self._max <= 0:
            return
        with self._lock:
            if generation != self._generation:
                self._entries.clear()
                self._chars = 0
                self._generation = generation
            for document, metadata_chars in documents:
                size = _size(document, metadata_chars)
                if size > self._max:
                    continue
                old = self._entries.pop(document.id, None)
                if old is not None:
                    self._chars -= old[1]
                self._entries[document.id] = (document, size)
                self._chars += size
            while self._chars > self._max:
                _, (_, size) = self._entries.popitem(last=False)
                self._chars -= size

    def clear(self) -> None:
        """Forget everything held."""
        with self._lock:
            self._entries.clear()
            self._chars = 0
            self._generation = None
