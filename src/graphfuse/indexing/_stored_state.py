"""What the indexer keeps on a stored document: its state (``pending``/``indexed``), digest, units and relations.

A batch first marks its documents ``pending`` (the marker remembers what the previous version
owned), then removes and rewrites, then marks them ``indexed``; the next run reads these keys
back to skip what is unchanged and to undo what an interrupted run left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._types import CHUNKS_KEY, KIND_KEY, STATE_KEY, Document
from ._plan import Plan
from ._relation_types import Rel

__all__ = ["HASH", "LINKS", "STATE", "owned_relations", "stored_documents", "unchanged", "unit_ids"]

# Reserved metadata keys on stored documents (the rest is the record's own metadata).
HASH = "graphfuse_hash"
STATE = STATE_KEY
CHUNKS = CHUNKS_KEY
OWNED = "graphfuse_relations"
STALE = "graphfuse_stale_units"  # on a pending marker: units of the previous version to remove
LINKS = "graphfuse_links"  # the record's links as given (those to absent documents are not relations)


def unchanged(p: Plan, meta: Mapping[str, Any] | None) -> bool:
    """Whether the stored document ``meta`` is ``p``'s, indexed to the end (same digest)."""
    return meta is not None and meta.get(STATE) == "indexed" and meta.get(HASH) == p.digest


def unit_ids(doc_id: str, meta: Mapping[str, Any]) -> list[str]:
    """The units a stored document has (itself, or its chunks) and those a pending marker left to remove."""
    n = meta.get(CHUNKS, 1)
    units = [doc_id] if not isinstance(n, int) or n <= 1 else [f"{doc_id}#{i}" for i in range(n)]
    stale = meta.get(STALE, ())
    if isinstance(stale, list):
        units.extend(u for u in stale if isinstance(u, str) and u not in units)
    return units


def owned_relations(meta: Mapping[str, Any]) -> set[Rel]:
    """The relations a stored document (or its pending marker) owns."""
    return {
        (x[0], x[1], x[2])
        for x in meta.get(OWNED, ())
        if isinstance(x, (list, tuple)) and len(x) == 3 and all(isinstance(e, str) for e in x)
    }


def stored_documents(
    p: Plan, state: str, owned: set[Rel] | None = None, stale_units: Sequence[str] = ()
) -> list[Document]:
    """The document of ``p`` in ``state`` (owning ``owned``, default its plan's), then its chunk nodes."""
    r = p.record
    base: dict[str, Any] = dict(r.metadata)
    if r.title is not None:
        base["title"] = r.title
    meta = {
        **base,
        KIND_KEY: "document",
        STATE: state,
        HASH: p.digest,
        CHUNKS: len(p.units),
        OWNED: sorted([list(rel) for rel in (p.owned if owned is None else owned)]),
    }
    if r.links:
        meta[LINKS] = list(r.links)
    if stale_units:
        meta[STALE] = sorted(stale_units)
    docs = [Document(r.id, r.text, meta, created_at=r.created_at)]
    if len(p.units) > 1:
        for i, (unit, text) in enumerate(p.units):
            own = p.unit_meta[i] if i < len(p.unit_meta) else {}
            chunk_meta = {**base, **own, KIND_KEY: "chunk", STATE: state, "parent_id": r.id, "chunk_index": i}
            docs.append(Document(unit, text, chunk_meta, created_at=r.created_at))
    return docs
