"""The ``multihop`` corpus indexes persisted in a store directory, refreshed incrementally.

:func:`corpus_inputs` reads and tokenises every document of the store on each call;
:class:`CorpusCache` keeps what that costs (BM25 term counts, filter metadata, titles, each
document's ``created_at`` and the entity nodes) in one file stamped with the graph store's
write generation, re-tokenises only new or changed documents when the stamp moved, and replaces
the file atomically. See ``docs/backends/scale.md``, "Persisted multihop indexes".
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import secrets
import zipfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from .._core._errors import InvalidInput
from .._core._protocols import GraphStore
from .._core._sync import sync_form
from ..indexing import ENTITY_PREFIX, KIND_KEY, EntityMatcher, TitleLinker, metadata_aliases
from ..timeaware import Timeline
from ._bm25 import BM25Index, bm25_tokens
from ._corpus import chunk_item, corpus_item
from ._subjects import name_forms, subject_name, subject_span

__all__ = ["CorpusCache"]

FILE = "corpus_index.npz"
FORMAT = "graphfuse-corpus-index"
FORMAT_VERSION = 6  # a file of another version is stale: rebuilt from the store
# Tokenised on every load: a cache made by another tokeniser would give other scores.
_PROBE = "The Eiffel-Tower's 324 m, Zürich_2026 & WolfgangSchulz: naïve café (1889)."


def _probe() -> list[str]:
    return bm25_tokens(_PROBE)


def _digest(text: str, own: Mapping[str, Any], title: str | None) -> str:
    payload = json.dumps([text, title, own], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.blake2b(payload.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


class _Snapshot:
    """Per-document term counts (CSR over ``vocabulary``), metadata, titles and digests."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.digests: list[str] = []
        self.metadata: list[Mapping[str, Any]] = []
        self.titles: list[str | None] = []
        # What the title linker names a document by: its title, or without one its subject's name.
        self.names: list[str | None] = []
        # A chunk row's document (BM25Index.passages); None for a document's own row.
        self.parents: list[str | None] = []
        self.vocabulary: dict[str, int] = {}
        self.indptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self.indices: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self.counts: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.lengths: npt.NDArray[np.float64] = np.zeros(0, dtype=np.float64)
        # The same for each document's subject (BM25Index.subjects); length -1: it has none.
        self.subject_indptr: npt.NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self.subject_indices: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self.subject_counts: npt.NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.subject_lengths: npt.NDArray[np.float64] = np.zeros(0, dtype=np.float64)
        self.timeline: list[tuple[str, str | None]] = []  # every non-entity node: (id, ISO created_at)
        self.entities: dict[str, str] = {}  # entity key -> entity node id

    def matrix(self) -> sp.csr_matrix:
        return sp.csr_matrix(
            (self.counts.astype(np.float64), self.indices, self.indptr), shape=(len(self.ids), len(self.vocabulary))
        )

    def subject_matrix(self) -> sp.csr_matrix:
        return sp.csr_matrix(
            (self.subject_counts.astype(np.float64), self.subject_indices, self.subject_indptr),
            shape=(len(self.ids), len(self.vocabulary)),
        )


_ARRAYS = (
    "indptr",
    "indices",
    "counts",
    "lengths",
    "subject_indptr",
    "subject_indices",
    "subject_counts",
    "subject_lengths",
)


def _consistent(
    indptr: npt.NDArray[np.int64],
    indices: npt.NDArray[np.int32],
    counts: npt.NDArray[np.float32],
    lengths: npt.NDArray[np.float64],
    n: int,
    vocabulary: Mapping[str, int],
) -> bool:
    """Whether CSR arrays hold ``n`` rows over ``vocabulary``."""
    return (
        lengths.size == n
        and indptr.size == n + 1
        and int(indptr[-1]) == indices.size == counts.size
        and (indices.size == 0 or int(indices.max()) < len(vocabulary))
    )


def _row(tokens: list[str], vocabulary: dict[str, int]) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
    columns = np.fromiter((vocabulary.setdefault(t, len(vocabulary)) for t in tokens), dtype=np.int32)
    unique, counts = np.unique(columns, return_counts=True)
    return unique.astype(np.int32), counts.astype(np.float32)


_Fresh = tuple[str, str, Mapping[str, Any], str | None, str, str | None, str | None]
"""A document read from the store: id, BM25 text, own metadata, title, digest, the text its subject
is read from (``None``: it states none) and, for a chunk, its document's id."""


class _Rows:
    """CSR rows of term counts being assembled, copied from a previous snapshot or tokenised."""

    def __init__(self) -> None:
        self.indices: list[npt.NDArray[np.int32]] = []
        self.counts: list[npt.NDArray[np.float32]] = []
        self.lengths: list[float] = []

    def copy(
        self,
        indptr: npt.NDArray[np.int64],
        indices: npt.NDArray[np.int32],
        counts: npt.NDArray[np.float32],
        row: int,
        length: float,
    ) -> None:
        lo, hi = indptr[row], indptr[row + 1]
        self.indices.append(indices[lo:hi])
        self.counts.append(counts[lo:hi])
        self.lengths.append(float(length))

    def add(self, tokens: list[str] | None, vocabulary: dict[str, int]) -> None:
        """A row of ``tokens``; ``None``: an empty row of length -1 (no text to index)."""
        idx, cnt = _row(tokens or [], vocabulary)
        self.indices.append(idx)
        self.counts.append(cnt)
        self.lengths.append(-1.0 if tokens is None else float(len(tokens)))

    def arrays(
        self,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.float32], npt.NDArray[np.float64]]:
        sizes = np.fromiter((p.size for p in self.indices), dtype=np.int64, count=len(self.indices))
        indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        indices = np.concatenate(self.indices).astype(np.int32) if self.indices else np.zeros(0, dtype=np.int32)
        counts = np.concatenate(self.counts).astype(np.float32) if self.counts else np.zeros(0, dtype=np.float32)
        return indptr, indices, counts, np.asarray(self.lengths, dtype=np.float64)


class CorpusCache:
    """The persisted BM25 term counts and titles of a store directory's corpus.

    ``CorpusCache(directory)`` names the file ``corpus_index.npz`` in it. :meth:`indexes` (async: :meth:`aindexes`)
    returns the :class:`BM25Index` and :class:`~graphfuse.indexing.TitleLinker` the
    ``multihop`` preset uses, equal to :func:`~graphfuse.multihop.corpus_inputs`'s, reading
    and tokenising only what changed since the file was written. :meth:`refresh` (:meth:`arefresh`) brings the
    file up to date (``graphfuse index`` and ``graphfuse delete`` call it, so the next query
    finds it warm). The graph store must offer ``iter_documents`` and ``generation`` (the
    embedded SQLite store does); otherwise ``InvalidInput``.
    """

    def __init__(self, directory: str | os.PathLike[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.path = Path(directory) / FILE
        self._k1, self._b = k1, b
        self.rebuilt = False
        """True when the last call found the file missing or stale and read the store's documents."""

    def __repr__(self) -> str:
        return f"CorpusCache({str(self.path)!r})"

    async def aindexes(self, graph_store: GraphStore, *, save: bool = True) -> tuple[BM25Index, TitleLinker]:
        """The corpus's BM25 index and title linker, refreshing the file first if it is stale.

        ``save=False`` never writes: a missing or stale file is rebuilt in memory only (what a
        read-only query does; :attr:`rebuilt` tells it happened).
        """
        snapshot = await self._current(graph_store, save=save)
        return await asyncio.to_thread(self._indexes, snapshot)

    indexes = sync_form(aindexes)
    """Sync form of :meth:`aindexes`: same arguments, result and errors, no event loop needed."""

    async def ainputs(self, graph_store: GraphStore, *, save: bool = True) -> dict[str, Any]:
        """What ``multihop`` reads from the whole store: ``bm25``, ``linker``, ``timeline``, ``entities``.

        Pass them to :func:`graphfuse.presets.abuild` (or the preset factory) as keyword
        arguments; the file is refreshed first if it is stale (only in memory with ``save=False``).
        """
        snapshot = await self._current(graph_store, save=save)
        bm25, linker = await asyncio.to_thread(self._indexes, snapshot)
        timeline = Timeline(
            (doc_id, None if moment is None else datetime.fromisoformat(moment)) for doc_id, moment in snapshot.timeline
        )
        return {"bm25": bm25, "linker": linker, "timeline": timeline, "entities": EntityMatcher(snapshot.entities)}

    inputs = sync_form(ainputs)
    """Sync form of :meth:`ainputs`: same arguments, result and errors, no event loop needed."""

    async def arefresh(self, graph_store: GraphStore) -> None:
        """Bring the file up to date with the store (a no-op when it already is)."""
        await self._current(graph_store)

    refresh = sync_form(arefresh)
    """Sync form of :meth:`arefresh`: same arguments, result and errors, no event loop needed."""

    def _indexes(self, snapshot: _Snapshot) -> tuple[BM25Index, TitleLinker]:
        pages = np.asarray([p is None for p in snapshot.parents], dtype=np.bool_)
        bm25 = self._index(snapshot, np.flatnonzero(pages))
        if not pages.all():
            # By passage: the chunks, and each document that has none (as corpus_inputs does).
            split = {p for p in snapshot.parents if p is not None}
            pairs = enumerate(zip(snapshot.parents, snapshot.ids, strict=True))
            rows = [i for i, (parent, doc_id) in pairs if parent is not None or doc_id not in split]
            bm25 = bm25.with_passages(self._index(snapshot, np.asarray(rows, dtype=np.int64)))
        titles: dict[str, list[str]] = {}
        named = zip(snapshot.ids, snapshot.titles, snapshot.names, snapshot.parents, snapshot.metadata, strict=True)
        for doc_id, title, name, parent, own in named:
            # A title as it is; a subject's name in each of its forms; a page's aliases (as corpus_inputs names them).
            forms = () if name is None else (name,) if title is not None else name_forms(name)
            for form in (*forms, *(metadata_aliases(own) if parent is None else ())):
                titles.setdefault(form, []).append(doc_id)
        return bm25, TitleLinker(titles)

    def _index(self, snapshot: _Snapshot, rows: npt.NDArray[np.int64]) -> BM25Index:
        """The BM25 index (with its subjects) of the snapshot's ``rows``."""
        leads = rows[snapshot.subject_lengths[rows] >= 0]
        subjects = BM25Index.from_term_counts(
            [snapshot.ids[i] for i in leads],
            snapshot.vocabulary,
            snapshot.subject_matrix()[leads],
            snapshot.subject_lengths[leads],
            [snapshot.metadata[i] for i in leads],
            k1=self._k1,
            b=self._b,
        )
        return BM25Index.from_term_counts(
            [snapshot.ids[i] for i in rows],
            snapshot.vocabulary,
            snapshot.matrix()[rows],
            snapshot.lengths[rows],
            [snapshot.metadata[i] for i in rows],
            k1=self._k1,
            b=self._b,
            subjects=subjects,
        )

    async def ais_current(self, graph_store: GraphStore) -> bool:
        """Whether the file exists and matches the store's current write generation (reads nothing else)."""
        generation_of = getattr(graph_store, "generation", None)
        if not callable(generation_of):
            return False
        generation = await generation_of()
        stored = await asyncio.to_thread(self._load)
        return stored is not None and stored[0] == generation

    is_current = sync_form(ais_current)
    """Sync form of :meth:`ais_current`: same arguments, result and errors, no event loop needed."""

    async def _current(self, graph_store: GraphStore, *, save: bool = True) -> _Snapshot:
        generation_of = getattr(graph_store, "generation", None)
        iterate = getattr(graph_store, "iter_documents", None)
        if not callable(generation_of) or not callable(iterate):
            raise InvalidInput(
                f"graph store {graph_store!r} cannot be cached (it needs iter_documents and generation): "
                "use corpus_inputs() without a cache, or build the indexes from your source records"
            )
        generation = await generation_of()
        stored = await asyncio.to_thread(self._load)
        self.rebuilt = False
        if stored is not None and stored[0] == generation:
            return stored[1]
        self.rebuilt = True
        previous = stored[1] if stored is not None else _Snapshot()
        fresh: list[_Fresh] = []
        timeline: list[tuple[str, str | None]] = []
        entities: dict[str, str] = {}
        async for doc in iterate(batch_size=2000):
            # The same selection as Timeline.from_store and entity_matcher make.
            if doc.metadata.get(KIND_KEY) == "entity":
                if doc.id.startswith(ENTITY_PREFIX):
                    entities[doc.id[len(ENTITY_PREFIX) :]] = doc.id
            else:
                timeline.append((doc.id, None if doc.created_at is None else doc.created_at.isoformat()))
            piece = chunk_item(doc)
            if piece is not None:
                text, own, parent, opening = piece
                # Only a document's opening chunk states its subject (the page index has the same).
                lead = doc.content or "" if opening else None
                fresh.append((doc.id, text, own, None, _digest(text, own, parent), lead, parent))
                continue
            item = corpus_item(doc)
            if item is not None:
                text, own, title = item
                fresh.append((doc.id, text, own, title, _digest(text, own, title), doc.content or "", None))
        # Documents written while we read make the next call refresh again: stamp the older generation.
        snapshot = await asyncio.to_thread(self._update, previous, fresh)
        snapshot.timeline, snapshot.entities = timeline, entities
        if save:
            await asyncio.to_thread(self._save, snapshot, generation)
        return snapshot

    def _update(self, previous: _Snapshot, fresh: list[_Fresh]) -> _Snapshot:
        old_row = {doc_id: i for i, doc_id in enumerate(previous.ids)}
        out = _Snapshot()
        out.vocabulary = dict(previous.vocabulary)
        text_rows, subject_rows = _Rows(), _Rows()
        for doc_id, text, own, title, digest, content, parent in fresh:
            row = old_row.get(doc_id)
            if row is not None and previous.digests[row] == digest:
                out.names.append(previous.names[row])
                text_rows.copy(previous.indptr, previous.indices, previous.counts, row, previous.lengths[row])
                subject_rows.copy(
                    previous.subject_indptr,
                    previous.subject_indices,
                    previous.subject_counts,
                    row,
                    previous.subject_lengths[row],
                )
            else:
                text_rows.add(bm25_tokens(text), out.vocabulary)
                subject = None if content is None else subject_span(content)
                subject_rows.add(None if subject is None else bm25_tokens(subject), out.vocabulary)
                # A page without a title is named by its subject (as corpus_inputs names it); a chunk is no page.
                named = title if title is not None or parent is not None or content is None else subject_name(content)
                out.names.append(named)
            out.ids.append(doc_id)
            out.digests.append(digest)
            out.metadata.append(own)
            out.titles.append(title)
            out.parents.append(parent)
        out.indptr, out.indices, out.counts, out.lengths = text_rows.arrays()
        out.subject_indptr, out.subject_indices, out.subject_counts, out.subject_lengths = subject_rows.arrays()
        return out

    # -- the file ---------------------------------------------------------------------------

    def _save(self, snapshot: _Snapshot, generation: int) -> None:
        header = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "generation": generation,
            "probe": _probe(),
            "ids": snapshot.ids,
            "digests": snapshot.digests,
            "metadata": snapshot.metadata,
            "titles": snapshot.titles,
            "names": snapshot.names,
            "parents": snapshot.parents,
            "vocabulary": list(snapshot.vocabulary),
            "timeline": snapshot.timeline,
            "entities": snapshot.entities,
        }
        blob = json.dumps(header, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass")
        buffer = io.BytesIO()
        np.savez(
            buffer,
            header=np.frombuffer(blob, dtype=np.uint8),
            indptr=snapshot.indptr,
            indices=snapshot.indices,
            counts=snapshot.counts,
            lengths=snapshot.lengths,
            subject_indptr=snapshot.subject_indptr,
            subject_indices=snapshot.subject_indices,
            subject_counts=snapshot.subject_counts,
            subject_lengths=snapshot.subject_lengths,
        )
        tmp = self.path.with_name(f".{self.path.name}.{secrets.token_hex(4)}.tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(buffer.getbuffer())
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def _load(self) -> tuple[int, _Snapshot] | None:
        """The file's (generation, snapshot), or ``None`` when missing, damaged or foreign."""
        try:
            with np.load(self.path, allow_pickle=False) as data:
                header = json.loads(data["header"].tobytes().decode("utf-8", "surrogatepass"))
                arrays = {k: data[k] for k in _ARRAYS}
        except (OSError, ValueError, KeyError, UnicodeDecodeError, EOFError, zipfile.BadZipFile):
            return None
        if (
            not isinstance(header, dict)
            or header.get("format") != FORMAT
            or header.get("version") != FORMAT_VERSION
            or header.get("probe") != _probe()
            or not isinstance(header.get("generation"), int)
        ):
            return None
        snapshot = _Snapshot()
        try:
            snapshot.ids = list(header["ids"])
            snapshot.digests = list(header["digests"])
            snapshot.metadata = list(header["metadata"])
            snapshot.titles = list(header["titles"])
            snapshot.names = [None if n is None else str(n) for n in header["names"]]
            snapshot.parents = [None if p is None else str(p) for p in header["parents"]]
            snapshot.vocabulary = {t: i for i, t in enumerate(header["vocabulary"])}
            snapshot.timeline = [(str(i), None if m is None else str(m)) for i, m in header["timeline"]]
            snapshot.entities = {str(k): str(v) for k, v in dict(header["entities"]).items()}
            snapshot.indptr = arrays["indptr"].astype(np.int64)
            snapshot.indices = arrays["indices"].astype(np.int32)
            snapshot.counts = arrays["counts"].astype(np.float32)
            snapshot.lengths = arrays["lengths"].astype(np.float64)
            snapshot.subject_indptr = arrays["subject_indptr"].astype(np.int64)
            snapshot.subject_indices = arrays["subject_indices"].astype(np.int32)
            snapshot.subject_counts = arrays["subject_counts"].astype(np.float32)
            snapshot.subject_lengths = arrays["subject_lengths"].astype(np.float64)
        except (KeyError, TypeError, ValueError):
            return None
        n = len(snapshot.ids)
        if not (
            len(snapshot.digests)
            == len(snapshot.metadata)
            == len(snapshot.titles)
            == len(snapshot.names)
            == len(snapshot.parents)
            == n
            and _consistent(
                snapshot.indptr, snapshot.indices, snapshot.counts, snapshot.lengths, n, snapshot.vocabulary
            )
            and _consistent(
                snapshot.subject_indptr,
                snapshot.subject_indices,
                snapshot.subject_counts,
                snapshot.subject_lengths,
                n,
                snapshot.vocabulary,
            )
        ):
            return None
        return int(header["generation"]), snapshot
