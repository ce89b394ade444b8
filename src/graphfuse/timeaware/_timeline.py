"""A sorted index of document creation times: window look-ups without asking the store."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone

from .._core._errors import InvalidInput
from .._core._protocols import GraphStore
from .._core._sync import run_sync
from .._core._types import KIND_KEY, check_id

__all__ = ["Timeline"]


class Timeline:
    """Documents by ``created_at`` (UTC): which are in a window, and when one was created.

    Built from ``(id, created_at or None)`` pairs; undated documents are counted but never in
    a window. Immutable; look-ups are binary searches.
    """

    __slots__ = ("_by_id", "_ids", "_times", "_undated")

    def __init__(self, items: Iterable[tuple[str, datetime | None]]) -> None:
        dated: list[tuple[float, str]] = []
        by_id: dict[str, datetime] = {}
        undated = 0
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise InvalidInput(f"timeline items must be (id, created_at) pairs, got {item!r}")
            doc_id, moment = item
            check_id(doc_id)
            if moment is None:
                undated += 1
                continue
            if not isinstance(moment, datetime):
                raise InvalidInput(f"timeline: created_at of {doc_id!r} must be a datetime or None, got {moment!r}")
            moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
            if doc_id in by_id:
                raise InvalidInput(f"timeline has document {doc_id!r} twice")
            by_id[doc_id] = moment
            dated.append((moment.timestamp(), doc_id))
        dated.sort()
        self._times = [t for t, _ in dated]
        self._ids = [i for _, i in dated]
        self._by_id = by_id
        self._undated = undated

    @classmethod
    async def afrom_store(cls, graph_store: GraphStore, *, batch_size: int = 1000) -> Timeline:
        """The timeline of every document (chunks included, entity nodes not) a graph store holds
        (sync form: :meth:`from_store`).

        The store must offer ``iter_documents`` (the embedded stores do; otherwise
        :class:`~graphfuse.InvalidInput`): build the timeline from your records instead.
        """
        iterate = getattr(graph_store, "iter_documents", None)
        if not callable(iterate):
            raise InvalidInput(
                f"graph store {graph_store!r} cannot list its documents (it has no iter_documents): "
                "build the Timeline from your source records instead"
            )
        items = [
            (doc.id, doc.created_at)
            async for doc in iterate(batch_size=batch_size)
            if doc.metadata.get(KIND_KEY) != "entity"  # entity nodes are no passages
        ]
        return cls(items)

    @classmethod
    def from_store(cls, graph_store: GraphStore, *, batch_size: int = 1000) -> Timeline:
        """Sync form of :meth:`afrom_store`: same arguments, result and errors, no event loop needed."""
        return run_sync(cls.afrom_store(graph_store, batch_size=batch_size))

    def __len__(self) -> int:
        """The number of dated documents."""
        return len(self._ids)

    def __repr__(self) -> str:
        return f"Timeline({len(self._ids)} dated, {self._undated} undated)"

    @property
    def undated(self) -> int:
        """How many documents have no ``created_at``."""
        return self._undated

    def created_at(self, doc_id: str) -> datetime | None:
        """When ``doc_id`` was created (``None`` when undated or unknown)."""
        return self._by_id.get(doc_id)

    def between(self, start: datetime | None, end: datetime | None) -> Sequence[str]:
        """Ids created in ``[start, end)`` (``None`` leaves a side open), oldest first."""
        lo = 0 if start is None else bisect.bisect_left(self._times, start.timestamp())
        hi = len(self._times) if end is None else bisect.bisect_left(self._times, end.timestamp())
        return self._ids[lo:hi] if hi > lo else []

    def count(self, start: datetime | None, end: datetime | None) -> int:
        """How many documents were created in ``[start, end)``."""
        lo = 0 if start is None else bisect.bisect_left(self._times, start.timestamp())
        hi = len(self._times) if end is None else bisect.bisect_left(self._times, end.timestamp())
        return max(0, hi - lo)
