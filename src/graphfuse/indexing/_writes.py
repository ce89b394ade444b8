"""The indexer's store side: what is there already, and each batch embedded and written."""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from .._core._capabilities import PageRankRefreshing, VectorLookup
from .._core._errors import InvalidInput
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._types import Document, Relation, VectorRecord
from ._plan import Plan
from ._relation_types import LINKS_TO, Rel
from ._stored_state import owned_relations, stored_documents, unchanged, unit_ids

__all__ = ["Writer", "embedding_text"]


def embedding_text(title: str | None, text: str) -> str:
    """The text the indexer embeds for a unit ``text`` of a document titled ``title``: the title on a
    line of its own before it, unless there is none or the text starts with it."""
    return f"{title}\n{text}" if title and not text.startswith(title) else text


class Writer:
    """Reads and writes one store pair for an :class:`~graphfuse.indexing.Indexer`.

    ``batch_size`` bounds embedding calls and reads; ``embed_title`` puts a unit's document
    title before its text for the embedder.
    """

    def __init__(
        self, graph: GraphStore, vectors: VectorStore, embedder: Embedder, *, batch_size: int, embed_title: bool
    ) -> None:
        self.graph = graph
        self.vectors = vectors
        self.embedder = embedder
        self.batch_size = batch_size
        self.embed_title = embed_title

    # -- reading what is there -------------------------------------------------------------

    async def existing_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        """The stored documents among ``ids`` (read in batches)."""
        out: dict[str, Document] = {}
        step = max(self.batch_size, 256)
        for i in range(0, len(ids), step):
            out.update(await self.graph.get_documents(list(ids[i : i + step])))
        return out

    async def existing(self, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        """The metadata of the stored documents among ``ids``."""
        return {k: d.metadata for k, d in (await self.existing_documents(ids)).items()}

    async def intact(self, plans: Sequence[Plan], existing: Mapping[str, Mapping[str, Any]]) -> set[str]:
        """Ids of the unchanged documents whose units (chunk documents and vectors) all exist.

        A skip trusts what an earlier run wrote; a vector file truncated or replaced since (or a
        graph file that lost chunks) must make the document be written again, not orphan it.
        """
        candidates = [p for p in plans if unchanged(p, existing.get(p.record.id))]
        if not candidates:
            return set()
        units = [u for p in candidates for u, _ in p.units]
        chunk_ids = [u for p in candidates for u, _ in p.units if u != p.record.id]
        step = max(self.batch_size, 256)
        have_chunks: set[str] = set()
        for i in range(0, len(chunk_ids), step):
            have_chunks.update(await self.graph.get_documents(chunk_ids[i : i + step]))
        have_vectors: set[str] | None = None
        if isinstance(self.vectors, VectorLookup):
            have_vectors = set()
            for i in range(0, len(units), step):
                have_vectors |= await self.vectors.existing_ids(units[i : i + step])
        return {
            p.record.id
            for p in candidates
            if all(u == p.record.id or u in have_chunks for u, _ in p.units)
            and (have_vectors is None or all(u in have_vectors for u, _ in p.units))
        }

    async def check_links(self, plans: list[Plan], warnings: list[str]) -> set[str]:
        """The relation ends outside ``plans`` that the store holds; links to absent ids are dropped
        from the plans and counted into ``warnings``."""
        # Relations may end at documents outside this call (links, and mentions of titles the
        # linker learnt earlier): those in the store count as present. Links to ids that are
        # not there become warnings; mentions of them are simply not created.
        local = {p.record.id for p in plans} | {u for p in plans for u, _ in p.units}
        ends = sorted({e for p in plans for rel in p.owned for e in rel[:2] if e not in local})
        found = set(await self.existing(ends)) if ends else set()
        outside = sorted({t for p in plans for s, t, k in p.owned if k == LINKS_TO and t not in local})
        missing = [t for t in outside if t not in found]
        if missing:
            unknown = set(missing)
            n = 0
            for p in plans:
                bad = {rel for rel in p.owned if rel[2] == LINKS_TO and rel[1] in unknown}
                n += len(bad)
                p.owned -= bad
            shown = ", ".join(map(repr, missing[:10])) + (" ..." if len(missing) > 10 else "")
            warnings.append(f"{n} link(s) to {len(missing)} unknown document id(s) skipped: {shown}")
        return found

    def check_dimension(self) -> None:
        """``InvalidInput`` when the embedder's dimension differs from the vector store's."""
        stored = getattr(self.vectors, "dimension", None)
        made = getattr(self.embedder, "dimension", None)
        if isinstance(stored, int) and isinstance(made, int) and stored != made:
            raise InvalidInput(
                f"the embedder makes {made}-d vectors but the vector store holds {stored}-d ones: "
                "use the embedder the store was built with (or a new store)"
            )

    # -- writing -------------------------------------------------------------------------------

    def batches(self, todo: list[Plan], *, grow: bool) -> Iterator[list[Plan]]:
        """``todo`` in batches of up to ``batch_size`` records (growing 1, 2, 4, ... with ``grow``),
        each closed before its units would exceed ``batch_size`` (a record is never split)."""
        cap, start = (1 if grow else self.batch_size), 0
        while start < len(todo):
            batch, units = [todo[start]], len(todo[start].units)
            start += 1
            while start < len(todo) and len(batch) < cap and units + len(todo[start].units) <= self.batch_size:
                units += len(todo[start].units)
                batch.append(todo[start])
                start += 1
            cap = min(cap * 2, self.batch_size)
            yield batch

    async def write_batch(
        self,
        batch: list[Plan],
        existing: Mapping[str, Mapping[str, Any]],
        present: set[str],
        touching: Mapping[str, set[Rel]],
        weights: Mapping[Rel, float],
        rel_meta: Mapping[Rel, Mapping[str, Any]],
    ) -> tuple[int, int]:
        """Embed and write ``batch``; returns (relations created, units written).

        ``present`` (ids in the store) grows by what the batch writes; a relation is created by
        the batch that writes its later end (``touching``: the relations of each id).
        """
        # Embed first: a failing embedder leaves this batch untouched.
        texts: list[str] = []
        for p in batch:
            for _, text in p.units:
                texts.append(embedding_text(p.record.title, text) if self.embed_title else text)
        vectors = await self._embed(texts)
        self._check_vectors(vectors, [u for p in batch for u, _ in p.units])

        # Mark the batch pending before removing anything: the marker remembers everything
        # the previous version (finished or interrupted) owned, so a run that stops anywhere
        # after this point is redone, and cleaned up, by the next one.
        stale_rel: set[Rel] = set()
        stale_units: set[str] = set()
        new_units = {u for p in batch for u, _ in p.units}
        markers: list[Document] = []
        for p in batch:
            meta = existing.get(p.record.id)
            old_rel = owned_relations(meta) if meta is not None else set()
            old_units = set(unit_ids(p.record.id, meta)) if meta is not None else set()
            stale_rel |= old_rel
            stale_units |= old_units
            units = {u for u, _ in p.units}
            markers.extend(stored_documents(p, "pending", p.owned | old_rel, sorted(old_units - units))[:1])
        await self.graph.store_documents(markers)

        # Undo what earlier versions of these documents wrote.
        if stale_rel:
            await self.graph.delete_relations([Relation(s, t, k) for s, t, k in sorted(stale_rel)])
        gone = sorted(stale_units - new_units - {p.record.id for p in batch})
        if gone:
            await self.graph.delete_documents(gone)
        if stale_units - new_units:
            await self.vectors.delete(sorted(stale_units - new_units))

        docs = [d for p in batch for d in stored_documents(p, "pending")]
        await self.graph.store_documents(docs)
        vector_meta: dict[str, dict[str, Any]] = {}
        for p in batch:
            base: dict[str, Any] = dict(p.record.metadata)
            if p.record.title is not None:
                base["title"] = p.record.title
            for i, (unit, _) in enumerate(p.units):
                own = p.unit_meta[i] if i < len(p.unit_meta) else {}
                vector_meta[unit] = base if unit == p.record.id else {**base, **own, "parent_id": p.record.id}
        unit_order = [u for p in batch for u, _ in p.units]
        records = [VectorRecord(u, v, vector_meta[u]) for u, v in zip(unit_order, vectors, strict=True)]
        await self.vectors.upsert(records)
        present.update(new_units)
        present.update(p.record.id for p in batch)

        # A relation is created by the batch that writes its later endpoint.
        batch_ids = {p.record.id for p in batch} | new_units
        rels = {rel for i in batch_ids for rel in touching.get(i, ()) if rel[0] in present and rel[1] in present}
        # Relations between two entity nodes touch no unit: their owners create them.
        rels.update(rel for p in batch for rel in p.owned if rel[0] in present and rel[1] in present)
        if rels:
            await self.graph.create_relations(
                [
                    Relation(s, t, k, weight=weights.get((s, t, k), 1.0), metadata=rel_meta.get((s, t, k), {}))
                    for s, t, k in sorted(rels)
                ]
            )

        # Commit: the document (and its chunks) is "indexed" only once everything it owns is written.
        await self.graph.store_documents([d for p in batch for d in stored_documents(p, "indexed")])
        return len(rels), len(new_units)

    async def refresh_pagerank(self) -> None:
        """Refresh the graph store's PageRank when it offers ``refresh_pagerank()``."""
        if not isinstance(self.graph, PageRankRefreshing):
            return
        result: Any = self.graph.refresh_pagerank()
        if inspect.isawaitable(result):
            await result

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            part = texts[i : i + self.batch_size]
            got = await self.embedder.embed_documents(part)
            if len(got) != len(part):
                raise InvalidInput(f"embedder returned {len(got)} vectors for {len(part)} texts")
            vectors.extend(list(v) for v in got)
        return vectors

    def _check_vectors(self, vectors: list[list[float]], units: list[str]) -> None:
        expected = getattr(self.vectors, "dimension", None)
        if not isinstance(expected, int):
            expected = getattr(self.embedder, "dimension", None)
        for unit, vector in zip(units, vectors, strict=False):
            if isinstance(expected, int) and len(vector) != expected:
                raise InvalidInput(
                    f"embedder returned {len(vector)}-d vectors (for {unit!r}); the store needs {expected}-d ones"
                )
        if len({len(v) for v in vectors}) > 1:
            raise InvalidInput("embedder returned vectors of different lengths")
        matrix = np.asarray(vectors, dtype=np.float64) if vectors else np.zeros((0, 0))
        bad = np.flatnonzero(~np.isfinite(matrix).all(axis=1) | (np.abs(matrix).sum(axis=1) == 0))
        if bad.size:
            raise InvalidInput(f"embedder returned a zero or non-finite vector for {units[int(bad[0])]!r}")
