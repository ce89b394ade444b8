"""The indexer: source records -> chunks -> embeddings and a graph of documents and relations."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._capabilities import PageRankRefreshing, VectorLookup
from .._errors import InvalidInput, NotFound
from .._protocols import Embedder, GraphStore, VectorStore
from .._sync import run_sync
from .._types import ENTITY_PREFIX, KIND_KEY, Document, Relation, VectorRecord
from ._chunking import TokenChunker
from ._extractors import EntityExtractor, TitleLinker
from ._records import EXCLUDED_KEYS, SourceRecord, check_record_id, reserved_key
from ._text_entities import TextEntityExtractor, merge_variants, wants_entity_graph
from ._titles import metadata_aliases

__all__ = [
    "CO_MENTION",
    "CO_OCCURS_WITH",
    "ENTITY_PREFIX",
    "KIND_KEY",
    "LINKS_TO",
    "MENTIONED_IN",
    "MENTIONS",
    "PART_OF",
    "IndexReport",
    "Indexer",
]

LINKS_TO = "LINKS_TO"
"""Relation type from a document to each id in its ``links``."""
MENTIONS = "MENTIONS"
"""Relation type from a unit to a document one of its mentions names as a target."""
CO_MENTION = "CO_MENTION"
"""Relation type between units of different documents mentioning the same entity (no entity graph)."""
PART_OF = "PART_OF"
"""Relation type from a chunk node to its document."""
MENTIONED_IN = "MENTIONED_IN"
"""Relation type from an entity node to each unit that mentions it (``entity_graph=True``)."""
CO_OCCURS_WITH = "CO_OCCURS_WITH"
"""Relation type between entity nodes mentioned in one unit (``entity_graph=True``)."""

# Reserved metadata keys on stored documents (the rest is the record's own metadata).
_HASH = "graphfuse_hash"
_STATE = "graphfuse_state"
_CHUNKS = "graphfuse_chunks"
_OWNED = "graphfuse_relations"
_STALE = "graphfuse_stale_units"  # on a pending marker: units of the previous version to remove
_LINKS = "graphfuse_links"  # the record's links as given (those to absent documents are not relations)

_Rel = tuple[str, str, str]

_log = logging.getLogger("graphfuse.indexing")
# A run of at least this many documents without one relation between them is warned about.
_UNRELATED_RUN = 20


@dataclass
class IndexReport:
    """What an index run did.

    ``documents``: documents written (new or changed); ``chunks``: retrievable units written
    (a short document is one unit, itself); ``relations``: relations created; ``skipped``:
    documents already indexed unchanged; ``warnings``: counted, human-readable problems that
    did not stop the run (for example links to unknown ids); ``pruned``: ids of documents
    deleted because they are no longer in the sources (``graphfuse index --prune``).
    """

    documents: int = 0
    chunks: int = 0
    relations: int = 0
    skipped: int = 0
    warnings: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


@dataclass
class _Plan:
    record: SourceRecord
    units: list[tuple[str, str]]  # (unit id, unit text); a one-chunk document is its own unit
    unit_meta: list[Mapping[str, Any]] = field(default_factory=list)  # each chunk's own metadata (given chunks)
    owned: set[_Rel] = field(default_factory=set)
    weights: dict[_Rel, float] = field(default_factory=dict)
    digest: str = ""


class Indexer:
    """Index source records into a graph store and a vector store.

    Each record becomes a document node. A text of at most ``chunker``'s ``max_tokens`` is
    one unit (the document itself, embedded under its own id); a longer one is split into
    chunk nodes ``<id>#<n>`` (metadata ``parent_id``, ``chunk_index``; a ``PART_OF``
    relation to the document) and only the chunks are embedded. Relations:

    - ``LINKS_TO`` from a document to each id in its ``links`` (an unknown id is a counted
      warning, not an error);
    - ``MENTIONS`` from a unit to every document an extractor names as a mention's target
      (the :class:`TitleLinker` targets documents whose title, or one of whose
      ``metadata["aliases"]``, the text mentions), weighted
      ``1 / (1 + r)`` for the ``r``-th distinct document the unit mentions (earlier mentions
      are more central to a passage);
    - ``CO_MENTION`` between units of different documents mentioning the same entity (a
      mention without targets, e.g. from :class:`HeuristicNameExtractor`), for entities
      mentioned by at most ``co_mention_cap`` units (more would make hubs).

    With ``entity_graph=True`` mentions without targets (e.g. from
    :class:`TextEntityExtractor`) become entity nodes instead of ``CO_MENTION`` relations:
    one node per entity (id :data:`ENTITY_PREFIX` + key, metadata :data:`KIND_KEY` ``"entity"``,
    ``name``, ``mentions``; not embedded), name variants merged
    (:func:`~graphfuse.indexing.merge_variants`), a ``MENTIONED_IN`` relation from the entity
    to each unit that mentions it (weight: how many times), and ``CO_OCCURS_WITH`` between
    entities mentioned in one unit (among its ``co_mention_cap`` most-mentioned; weight: in how
    many units of the call, owned by each document where they co-occur). Counts are over the
    records of one call; entity nodes stay when their documents are deleted (without
    relations, they do not affect retrieval). ``entity_namespace`` goes between the prefix and
    the key (ids ``ENTITY_PREFIX + entity_namespace + key``) and ``entity_metadata`` into every
    entity node's metadata: a server gives each tenant its own entity nodes so
    (``"acme/"``, ``{"tenant": "acme"}``), which its tenant filter then keeps apart.

    Mentions and co-mentions are resolved over the records of one call plus the titles the
    extractors already know (a ``TitleLinker`` keeps the titles of every call on this indexer).

    Runs are idempotent and resumable: re-indexing an id replaces its chunks, vectors and the
    relations it owns; an unchanged document (same text, metadata, configuration and
    relations) is skipped. Every record is validated before the first write (see
    :meth:`aindex`). A batch first marks its documents ``pending`` (the marker remembers what
    the previous version owned), then removes and rewrites, then marks them ``indexed``; a run
    that fails or is killed part-way leaves its unfinished documents ``pending`` (the
    :class:`~graphfuse.stages.Hydrate` stage never returns them) and the next run with the same
    records redoes them, ending in the state an uninterrupted run leaves. Do not index the same
    ids from two runs at once.
    """

    def __init__(
        self,
        graph_store: GraphStore,
        vector_store: VectorStore,
        embedder: Embedder,
        *,
        chunker: TokenChunker | None = None,
        extractors: Sequence[EntityExtractor] = (),
        batch_size: int = 64,
        co_mention_cap: int = 8,
        mention_target_cap: int = 5,
        embed_title: bool = True,
        entity_graph: bool = False,
        entity_namespace: str = "",
        entity_metadata: Mapping[str, Any] | None = None,
    ) -> None:
        for obj, what, method in (
            (graph_store, "graph_store", "store_documents"),
            (vector_store, "vector_store", "upsert"),
            (embedder, "embedder", "embed_documents"),
        ):
            if not callable(getattr(obj, method, None)):
                raise InvalidInput(f"{what} does not look right: {obj!r} has no {method!r}")
        for ex in extractors:
            if not callable(getattr(ex, "extract", None)):
                raise InvalidInput(f"extractor {ex!r} has no 'extract' method")
        caps = {"batch_size": batch_size, "co_mention_cap": co_mention_cap, "mention_target_cap": mention_target_cap}
        for what, value in caps.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
        self._graph = graph_store
        self._vectors = vector_store
        self._embedder = embedder
        self._chunker = chunker if chunker is not None else TokenChunker()
        self._extractors = tuple(extractors)
        self._batch_size = batch_size
        self._co_cap = co_mention_cap
        self._target_cap = mention_target_cap
        self._embed_title = embed_title
        if not isinstance(entity_graph, bool):
            raise InvalidInput(f"entity_graph must be a bool, got {entity_graph!r}")
        self._entity_graph = entity_graph
        if not isinstance(entity_namespace, str) or "\n" in entity_namespace or len(entity_namespace) > 128:
            raise InvalidInput(f"entity_namespace must be a string of at most 128 characters, got {entity_namespace!r}")
        self._entity_namespace = ENTITY_PREFIX + entity_namespace
        extra = dict(entity_metadata or {})
        reserved = sorted(
            str(k) for k in extra if not isinstance(k, str) or k in ("name", "mentions") or reserved_key(k)
        )
        if reserved:
            raise InvalidInput(f"entity_metadata may not set {reserved}: the indexer writes them")
        self._entity_metadata = extra
        self._entity_nodes: dict[str, Document] = {}

    @classmethod
    def for_records(
        cls,
        records: Sequence[SourceRecord],
        graph_store: GraphStore,
        vector_store: VectorStore,
        embedder: Embedder,
        *,
        entity_graph: bool | None = None,
        chunker: TokenChunker | None = None,
        batch_size: int = 64,
        text_extractors: Sequence[EntityExtractor] | None = None,
    ) -> Indexer:
        """An indexer set up for ``records`` as ``graphfuse index`` sets one up.

        A :class:`TitleLinker` (passages naming a document's title mention it), and, when
        ``entity_graph`` is true or (``None``, the default) when
        :func:`~graphfuse.indexing.wants_entity_graph` finds the records' titles and links would
        leave them unrelated (mostly untitled records, or titles that link almost none of them),
        a :class:`TextEntityExtractor` with ``entity_graph=True``: entity nodes from the
        proper nouns of the text. Index the same records with it
        (``Indexer.for_records(records, graph, vectors, embedder).index(records)``).
        ``text_extractors`` find the entities instead of the ``TextEntityExtractor`` (e.g.
        ``[entity_extractor("spacy:en_core_web_sm")]``); giving them turns the entity graph on.
        """
        if text_extractors is not None and entity_graph is False:
            raise InvalidInput("text_extractors build the entity graph: they cannot go with entity_graph=False")
        if entity_graph is None:
            entity_graph = text_extractors is not None or wants_entity_graph(records)
        extractors: list[EntityExtractor] = [TitleLinker()]
        if entity_graph:
            extractors.extend([TextEntityExtractor()] if text_extractors is None else text_extractors)
        return cls(
            graph_store,
            vector_store,
            embedder,
            chunker=chunker,
            extractors=extractors,
            batch_size=batch_size,
            entity_graph=entity_graph,
        )

    def __repr__(self) -> str:
        extractors = list(self._extractors)
        return f"Indexer(chunker={self._chunker!r}, extractors={extractors!r}, batch_size={self._batch_size})"

    # -- public API ----------------------------------------------------------------------------

    def index(
        self,
        records: Iterable[SourceRecord],
        *,
        progress: Callable[[int], None] | None = None,
        reading: Callable[[int], None] | None = None,
    ) -> IndexReport:
        """Sync form of :meth:`aindex`."""
        return run_sync(self.aindex(records, progress=progress, reading=reading))

    def delete(self, ids: Sequence[str], *, missing_ok: bool = True) -> int:
        """Sync form of :meth:`adelete`."""
        return run_sync(self.adelete(ids, missing_ok=missing_ok))

    def prune(self, keep: Iterable[str]) -> list[str]:
        """Sync form of :meth:`aprune`."""
        return run_sync(self.aprune(keep))

    async def aindex(
        self,
        records: Iterable[SourceRecord],
        *,
        progress: Callable[[int], None] | None = None,
        reading: Callable[[int], None] | None = None,
    ) -> IndexReport:
        """Index ``records``; ``progress`` is called with the records done so far: once when the
        writes begin (the unchanged records, skipped at once), then after each batch.

        ``reading`` is called before that, once per record, with how many records have been
        read so far (chunked and their mentions extracted: the step before the first write);
        both callbacks run on the event loop's thread.

        A batch holds at most ``batch_size`` records and, past its first record, at most
        ``batch_size`` units to embed (one embedding call); with ``progress``, the first batches are
        smaller (1, 2, 4, ... records), so progress moves after the first record and then about once
        per embedding call, however long the documents are (without it, no call is spent on that).

        Every record is validated before anything is written: a duplicate id, a record that is
        not a :class:`SourceRecord` (whose construction already checked for JSON metadata,
        finite numbers, valid Unicode and reserved keys), or an embedder whose dimension
        differs from the vector store's raises :class:`~graphfuse.InvalidInput` and nothing is
        written. Each batch's vectors are checked (count, dimension, finite, non-zero) before
        that batch writes anything. PageRank is refreshed at the end when the graph store
        offers ``refresh_pagerank()``.
        """
        recs = list(records)
        self._validate(recs)
        self._check_dimension()
        report = IndexReport()
        if not recs:
            return report
        for ex in self._extractors:
            add = getattr(ex, "add", None)
            if callable(add):
                for r in recs:
                    if r.title:
                        add(r.title, r.id)
                    for alias in metadata_aliases(r.metadata):
                        add(alias, r.id)
        on_read: Callable[[int], None] | None = None
        if reading is not None:
            loop, callback = asyncio.get_running_loop(), reading

            def on_read(n: int) -> None:
                loop.call_soon_threadsafe(callback, n)

        plans = await asyncio.to_thread(self._plan, recs, report, on_read)
        external = await self._check_links(plans, report)
        if len(plans) >= _UNRELATED_RUN and all(rel[2] == PART_OF for p in plans for rel in p.owned):
            warning = (
                f"no relation between the {len(plans)} documents (no links, no title mentions, no entities): "
                "the graph cannot help retrieval. Give the documents titles or links (markdown files: keep "
                "their path in the metadata, as the readers do, so that their links are read), or build the "
                "graph from their text with entity_graph=True (Indexer.for_records(records, ...) and "
                "graphfuse index decide as they are)"
            )
            report.warnings.append(warning)
            _log.warning("%s", warning)
        existing = await self._existing([p.record.id for p in plans])
        intact = await self._intact(plans, existing)
        present: set[str] = set()
        todo: list[_Plan] = []
        for p in plans:
            meta = existing.get(p.record.id)
            if (
                meta is not None
                and meta.get(_STATE) == "indexed"
                and meta.get(_HASH) == p.digest
                and p.record.id in intact
            ):
                report.skipped += 1
                present.add(p.record.id)
                present.update(u for u, _ in p.units)
            else:
                todo.append(p)
        present.update(external)
        if self._entity_nodes:
            nodes = list(self._entity_nodes.values())
            for i in range(0, len(nodes), 500):
                await self._graph.store_documents(nodes[i : i + 500])
            present.update(self._entity_nodes)
        # Relations of every planned document, skipped ones included: an earlier interrupted run
        # may have committed a document before the other end of one of its relations was written.
        touching: dict[str, set[_Rel]] = defaultdict(set)
        weights = {rel: w for p in plans for rel, w in p.weights.items()}
        for p in plans:
            for rel in p.owned:
                touching[rel[0]].add(rel)
                touching[rel[1]].add(rel)
        done = report.skipped
        if progress is not None:
            progress(done)  # the records to skip, at once (0 when there are none)
        for batch in self._write_batches(todo, grow=progress is not None):
            await self._write_batch(batch, existing, present, touching, weights, report)
            done += len(batch)
            if progress is not None:
                progress(done)
        if todo:
            await self._refresh_pagerank()
        return report

    async def adelete(self, ids: Sequence[str], *, missing_ok: bool = True) -> int:
        """Delete documents with their chunks, vectors and relations; returns how many existed.

        With ``missing_ok=False``, an id that is not an indexed document (unknown, or the id of
        a chunk ``<id>#<n>``) raises :class:`~graphfuse.NotFound` naming it, and nothing is deleted.
        An id in the entity nodes' namespace (:data:`ENTITY_PREFIX`) raises
        :class:`~graphfuse.InvalidInput`: entity nodes are the indexer's own (a document an older
        version stored under such an id may still be deleted).
        The documents are marked ``pending`` first, so a deletion interrupted part-way never
        leaves a document that queries return without its vectors; deleting again finishes it.
        """
        if isinstance(ids, str):
            raise InvalidInput("ids must be a sequence of document ids, not a string")
        found = await self._existing_documents(list(ids))
        existing = {k: d.metadata for k, d in found.items()}
        for doc_id in ids:
            if existing.get(doc_id, {}).get(KIND_KEY) != "document":
                # An entity node's id (a document an older version let in under one may go).
                check_record_id(doc_id, "document id")
        if not missing_ok:
            wrong = [i for i in dict.fromkeys(ids) if existing.get(i, {}).get(KIND_KEY) != "document"]
            if wrong:
                shown = ", ".join(map(repr, wrong[:20])) + (" ..." if len(wrong) > 20 else "")
                raise NotFound(f"{len(wrong)} id(s) are not indexed documents (unknown, or chunk ids): {shown}")
        unit_ids: list[str] = []
        for doc_id, meta in existing.items():
            unit_ids.extend(self._unit_ids(doc_id, meta))
        if found:
            await self._graph.store_documents(
                [
                    Document(d.id, d.content, {**d.metadata, _STATE: "pending"}, created_at=d.created_at)
                    for d in found.values()
                ]
            )
        node_ids = sorted(set(unit_ids) | set(existing))
        await self._vectors.delete(sorted(set(unit_ids) | set(existing)))
        await self._graph.delete_documents(node_ids)
        for ex in self._extractors:
            remove = getattr(ex, "remove", None)
            if callable(remove):
                # Every id asked for: a failed first index may have taught the linker a title
                # whose document never got written.
                for doc_id in dict.fromkeys([*existing, *ids]):
                    remove(doc_id)
        if existing:
            await self._refresh_pagerank()
        return len(existing)

    async def aindexed_ids(self) -> list[str]:
        """The ids of every document an indexer wrote to the graph store (chunks excluded), sorted.

        Needs a graph store that lists its documents (``iter_documents``, as the embedded
        stores do); otherwise raises :class:`~graphfuse.InvalidInput`.
        """
        listing = getattr(self._graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(
                f"graph store {type(self._graph).__name__} cannot list its documents (no iter_documents)"
            )
        return sorted([d.id async for d in listing() if d.metadata.get(KIND_KEY) == "document"])

    def stored_records(self) -> list[SourceRecord]:
        """Sync form of :meth:`astored_records`."""
        return run_sync(self.astored_records())

    async def astored_records(self) -> list[SourceRecord]:
        """The records of every document an indexer wrote to the graph store, read back, sorted by id.

        Each has the document's id, text, title, metadata (GraphFuse's bookkeeping left out),
        ``created_at`` and links (as the record gave them, those to documents not in the store
        included; for documents indexed before GraphFuse kept them, the ``LINKS_TO`` relations
        the store holds): indexing them again with the same configuration skips them as
        unchanged. A host that adds documents to a store in several calls indexes these together
        with its new records, so links, mentions and entities are resolved over the whole corpus,
        as one call would. Needs a graph store that lists its documents (see :meth:`aindexed_ids`).
        """
        listing = getattr(self._graph, "iter_documents", None)
        if not callable(listing):
            raise InvalidInput(
                f"graph store {type(self._graph).__name__} cannot list its documents (no iter_documents)"
            )
        out: list[SourceRecord] = []
        async for d in listing():
            meta = d.metadata
            if meta.get(KIND_KEY) != "document" or not d.content:
                continue
            kept = {k: v for k, v in meta.items() if not reserved_key(k) or k == EXCLUDED_KEYS}
            title = kept.pop("title", None)
            given = meta.get(_LINKS)
            if isinstance(given, list) and all(isinstance(x, str) for x in given):
                links = list(given)
            else:
                links = sorted({t for s, t, k in self._owned(meta) if k == LINKS_TO and s == d.id})
            out.append(
                SourceRecord(
                    d.id,
                    d.content,
                    title=title if isinstance(title, str) else None,
                    metadata=kept,
                    created_at=d.created_at,
                    links=tuple(links),
                )
            )
        return sorted(out, key=lambda r: r.id)

    async def aprune(self, keep: Iterable[str]) -> list[str]:
        """Delete every indexed document whose id is not in ``keep`` (with its chunks, vectors
        and relations); returns the deleted ids. See :meth:`aindexed_ids` for what it needs."""
        if isinstance(keep, str):
            raise InvalidInput("keep must be a collection of document ids, not a string")
        kept = set(keep)
        gone = [i for i in await self.aindexed_ids() if i not in kept]
        for start in range(0, len(gone), max(self._batch_size, 256)):
            await self.adelete(gone[start : start + max(self._batch_size, 256)])
        return gone

    # -- planning (pure, runs in a worker thread) ------------------------------------------------

    def _validate(self, recs: Sequence[SourceRecord]) -> None:
        seen: set[str] = set()
        dup: set[str] = set()
        for r in recs:
            if not isinstance(r, SourceRecord):
                raise InvalidInput(f"records must be SourceRecord instances, got {type(r).__name__}")
            if "#" in r.id and r.id.rsplit("#", 1)[1].isdigit():
                raise InvalidInput(f"record id {r.id!r} looks like a chunk id ('<id>#<n>' is reserved)")
            (dup if r.id in seen else seen).add(r.id)
        if dup:
            shown = ", ".join(map(repr, sorted(dup)[:20]))
            raise InvalidInput(f"{len(dup)} duplicate document id(s) in one index call: {shown}")

    def _check_dimension(self) -> None:
        stored = getattr(self._vectors, "dimension", None)
        made = getattr(self._embedder, "dimension", None)
        if isinstance(stored, int) and isinstance(made, int) and stored != made:
            raise InvalidInput(
                f"the embedder makes {made}-d vectors but the vector store holds {stored}-d ones: "
                "use the embedder the store was built with (or a new store)"
            )

    def _check_vectors(self, vectors: list[list[float]], units: list[str]) -> None:
        expected = getattr(self._vectors, "dimension", None)
        if not isinstance(expected, int):
            expected = getattr(self._embedder, "dimension", None)
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

    def _plan(
        self, recs: Sequence[SourceRecord], report: IndexReport, on_read: Callable[[int], None] | None = None
    ) -> list[_Plan]:
        plans: list[_Plan] = []
        for r in recs:
            chunks = list(r.chunks) or self._chunker.split(r.text)  # a host's own chunks are kept as given
            units = [(r.id, r.text)] if len(chunks) == 1 else [(f"{r.id}#{c.index}", c.text) for c in chunks]
            meta = [c.metadata for c in chunks] if len(chunks) > 1 else [{}]
            plans.append(_Plan(r, units, meta))
        doc_of = {u: p.record.id for p in plans for u, _ in p.units}
        by_doc = {p.record.id: p for p in plans}
        holders: dict[str, list[str]] = defaultdict(list)
        mentioned: dict[str, Counter[str]] = {}
        for read, p in enumerate(plans, 1):
            for link in p.record.links:
                if link != p.record.id:
                    p.owned.add((p.record.id, link, LINKS_TO))
            if len(p.units) > 1:
                p.owned.update((u, p.record.id, PART_OF) for u, _ in p.units)
            for unit, text in p.units:
                entities: set[str] = set()
                counts: Counter[str] = Counter()
                named: list[str] = []
                for ex in self._extractors:
                    for m in ex.extract(text):
                        if not m.targets:
                            # Passages naming a document are already two hops apart through it.
                            entities.add(m.entity)
                            counts[m.entity] += 1
                        for target in m.targets[: self._target_cap]:
                            if target != p.record.id and target not in named:
                                named.append(target)
                for rank, target in enumerate(named):
                    rel = (unit, target, MENTIONS)
                    p.owned.add(rel)
                    # Earlier mentions are more central to a passage (its subject's director,
                    # author, country come first): weight 1, 1/2, 1/3, ... in order of mention.
                    p.weights[rel] = 1.0 / (1 + rank)
                if self._entity_graph:
                    mentioned[unit] = counts
                    continue
                for e in entities:
                    holders[e].append(unit)
            if on_read is not None:
                on_read(read)
        if self._entity_graph:
            self._plan_entities(plans, doc_of, by_doc, mentioned)
        hubs = 0
        for mentioning in holders.values():
            if len(mentioning) > self._co_cap:
                hubs += 1
                continue
            for i, a in enumerate(mentioning):
                for b in mentioning[i + 1 :]:
                    if doc_of[a] != doc_of[b]:
                        s, t = sorted((a, b))
                        by_doc[doc_of[a]].owned.add((s, t, CO_MENTION))
                        by_doc[doc_of[b]].owned.add((s, t, CO_MENTION))
        if hubs:
            report.warnings.append(
                f"{hubs} entities are mentioned by more than {self._co_cap} passages: no CO_MENTION relations for them"
            )
        config = f"{self._chunker.fingerprint}|{[type(e).__name__ for e in self._extractors]}|{self._embed_title}"
        if self._entity_graph:
            config += "|entity_graph"
        for p in plans:
            r = p.record
            parts: list[Any] = [
                r.text,
                r.title,
                dict(r.metadata),
                r.created_at and r.created_at.isoformat(),
                sorted((*rel, p.weights.get(rel, 1.0)) for rel in p.owned),
                config,
            ]
            if r.chunks:  # a host's own chunks (left out otherwise: existing stores keep their digests)
                parts.append([[c.text, dict(c.metadata)] for c in r.chunks])
            payload = json.dumps(
                parts,
                sort_keys=True,
                default=str,
            )
            p.digest = hashlib.sha256(payload.encode()).hexdigest()
        return plans

    def _plan_entities(
        self,
        plans: Sequence[_Plan],
        doc_of: Mapping[str, str],
        by_doc: Mapping[str, _Plan],
        mentioned: Mapping[str, Counter[str]],
    ) -> None:
        units_with: Counter[str] = Counter()
        for counts in mentioned.values():
            units_with.update(counts.keys())
        canonical = merge_variants(units_with)
        nodes: dict[str, Document] = {}
        pairs: Counter[tuple[str, str]] = Counter()
        owners: dict[tuple[str, str], set[str]] = defaultdict(set)
        merged: dict[str, Counter[str]] = {}
        for unit, counts in mentioned.items():
            own: Counter[str] = Counter()
            for key, n in counts.items():
                own[canonical.get(key, key)] += n
            merged[unit] = own
        total: Counter[str] = Counter()
        for own in merged.values():
            total.update(own.keys())
        for unit, own in merged.items():
            plan = by_doc[doc_of[unit]]
            keys = sorted(own)
            for key in keys:
                node = self._entity_namespace + key
                rel = (node, unit, MENTIONED_IN)
                plan.owned.add(rel)
                plan.weights[rel] = float(own[key])
            # Pairs among the unit's ``co_mention_cap`` most-mentioned entities only: a list of
            # twenty names would otherwise make 190 relations for one passage.
            central = sorted(sorted(own, key=lambda k: (-own[k], k))[: self._co_cap])
            for i, a in enumerate(central):
                for b in central[i + 1 :]:
                    pairs[(a, b)] += 1
                    owners[(a, b)].add(doc_of[unit])
        for key, n in total.items():
            node = self._entity_namespace + key
            meta = {**self._entity_metadata, KIND_KEY: "entity", "name": key, "mentions": n}
            nodes[node] = Document(node, key, meta)
        for (a, b), n in pairs.items():
            rel = (self._entity_namespace + a, self._entity_namespace + b, CO_OCCURS_WITH)
            for doc in owners[(a, b)]:
                by_doc[doc].owned.add(rel)
                by_doc[doc].weights[rel] = float(n)
        self._entity_nodes = nodes

    async def _check_links(self, plans: list[_Plan], report: IndexReport) -> set[str]:
        # Relations may end at documents outside this call (links, and mentions of titles the
        # linker learnt earlier): those in the store count as present. Links to ids that are
        # not there become warnings; mentions of them are simply not created.
        local = {p.record.id for p in plans} | {u for p in plans for u, _ in p.units}
        ends = sorted({e for p in plans for rel in p.owned for e in rel[:2] if e not in local})
        found = set(await self._existing(ends)) if ends else set()
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
            report.warnings.append(f"{n} link(s) to {len(missing)} unknown document id(s) skipped: {shown}")
        return found

    # -- writing ------------------------------------------------------------------------------

    async def _intact(self, plans: Sequence[_Plan], existing: Mapping[str, Mapping[str, Any]]) -> set[str]:
        """Ids of the unchanged documents whose units (chunk documents and vectors) all exist.

        A skip trusts what an earlier run wrote; a vector file truncated or replaced since (or a
        graph file that lost chunks) must make the document be written again, not orphan it.
        """
        candidates = [
            p
            for p in plans
            if (meta := existing.get(p.record.id)) is not None
            and meta.get(_STATE) == "indexed"
            and meta.get(_HASH) == p.digest
        ]
        if not candidates:
            return set()
        units = [u for p in candidates for u, _ in p.units]
        chunk_ids = [u for p in candidates for u, _ in p.units if u != p.record.id]
        step = max(self._batch_size, 256)
        have_chunks: set[str] = set()
        for i in range(0, len(chunk_ids), step):
            have_chunks.update(await self._graph.get_documents(chunk_ids[i : i + step]))
        have_vectors: set[str] | None = None
        if isinstance(self._vectors, VectorLookup):
            have_vectors = set()
            for i in range(0, len(units), step):
                have_vectors |= await self._vectors.existing_ids(units[i : i + step])
        return {
            p.record.id
            for p in candidates
            if all(u == p.record.id or u in have_chunks for u, _ in p.units)
            and (have_vectors is None or all(u in have_vectors for u, _ in p.units))
        }

    async def _existing(self, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        return {k: d.metadata for k, d in (await self._existing_documents(ids)).items()}

    async def _existing_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        out: dict[str, Document] = {}
        step = max(self._batch_size, 256)
        for i in range(0, len(ids), step):
            out.update(await self._graph.get_documents(list(ids[i : i + step])))
        return out

    @staticmethod
    def _unit_ids(doc_id: str, meta: Mapping[str, Any]) -> list[str]:
        n = meta.get(_CHUNKS, 1)
        units = [doc_id] if not isinstance(n, int) or n <= 1 else [f"{doc_id}#{i}" for i in range(n)]
        stale = meta.get(_STALE, ())
        if isinstance(stale, list):
            units.extend(u for u in stale if isinstance(u, str) and u not in units)
        return units

    @staticmethod
    def _owned(meta: Mapping[str, Any]) -> set[_Rel]:
        return {
            (x[0], x[1], x[2])
            for x in meta.get(_OWNED, ())
            if isinstance(x, (list, tuple)) and len(x) == 3 and all(isinstance(e, str) for e in x)
        }

    def _write_batches(self, todo: list[_Plan], *, grow: bool) -> Iterator[list[_Plan]]:
        """``todo`` in batches of up to ``batch_size`` records (growing 1, 2, 4, ... with ``grow``),
        each closed before its units would exceed ``batch_size`` (a record is never split)."""
        cap, start = (1 if grow else self._batch_size), 0
        while start < len(todo):
            batch, units = [todo[start]], len(todo[start].units)
            start += 1
            while start < len(todo) and len(batch) < cap and units + len(todo[start].units) <= self._batch_size:
                units += len(todo[start].units)
                batch.append(todo[start])
                start += 1
            cap = min(cap * 2, self._batch_size)
            yield batch

    async def _embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for i in range(0, len(texts), self._batch_size):
            part = texts[i : i + self._batch_size]
            got = await self._embedder.embed_documents(part)
            if len(got) != len(part):
                raise InvalidInput(f"embedder returned {len(got)} vectors for {len(part)} texts")
            vectors.extend(list(v) for v in got)
        return vectors

    def _documents(
        self, p: _Plan, state: str, owned: set[_Rel] | None = None, stale_units: Sequence[str] = ()
    ) -> list[Document]:
        r = p.record
        base: dict[str, Any] = dict(r.metadata)
        if r.title is not None:
            base["title"] = r.title
        meta = {
            **base,
            KIND_KEY: "document",
            _STATE: state,
            _HASH: p.digest,
            _CHUNKS: len(p.units),
            _OWNED: sorted([list(rel) for rel in (p.owned if owned is None else owned)]),
        }
        if r.links:
            meta[_LINKS] = list(r.links)
        if stale_units:
            meta[_STALE] = sorted(stale_units)
        docs = [Document(r.id, r.text, meta, created_at=r.created_at)]
        if len(p.units) > 1:
            for i, (unit, text) in enumerate(p.units):
                own = p.unit_meta[i] if i < len(p.unit_meta) else {}
                chunk_meta = {**base, **own, KIND_KEY: "chunk", _STATE: state, "parent_id": r.id, "chunk_index": i}
                docs.append(Document(unit, text, chunk_meta, created_at=r.created_at))
        return docs

    async def _write_batch(
        self,
        batch: list[_Plan],
        existing: Mapping[str, Mapping[str, Any]],
        present: set[str],
        touching: Mapping[str, set[_Rel]],
        weights: Mapping[_Rel, float],
        report: IndexReport,
    ) -> None:
        # Embed first: a failing embedder leaves this batch untouched.
        texts: list[str] = []
        for p in batch:
            for _, text in p.units:
                title = p.record.title
                texts.append(f"{title}\n{text}" if self._embed_title and title and not text.startswith(title) else text)
        vectors = await self._embed(texts)
        self._check_vectors(vectors, [u for p in batch for u, _ in p.units])

        # Mark the batch pending before removing anything: the marker remembers everything
        # the previous version (finished or interrupted) owned, so a run that stops anywhere
        # after this point is redone, and cleaned up, by the next one.
        stale_rel: set[_Rel] = set()
        stale_units: set[str] = set()
        new_units = {u for p in batch for u, _ in p.units}
        markers: list[Document] = []
        for p in batch:
            meta = existing.get(p.record.id)
            old_rel = self._owned(meta) if meta is not None else set()
            old_units = set(self._unit_ids(p.record.id, meta)) if meta is not None else set()
            stale_rel |= old_rel
            stale_units |= old_units
            units = {u for u, _ in p.units}
            markers.extend(self._documents(p, "pending", p.owned | old_rel, sorted(old_units - units))[:1])
        await self._graph.store_documents(markers)

        # Undo what earlier versions of these documents wrote.
        if stale_rel:
            await self._graph.delete_relations([Relation(s, t, k) for s, t, k in sorted(stale_rel)])
        gone = sorted(stale_units - new_units - {p.record.id for p in batch})
        if gone:
            await self._graph.delete_documents(gone)
        if stale_units - new_units:
            await self._vectors.delete(sorted(stale_units - new_units))

        docs = [d for p in batch for d in self._documents(p, "pending")]
        await self._graph.store_documents(docs)
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
        await self._vectors.upsert(records)
        present.update(new_units)
        present.update(p.record.id for p in batch)

        # A relation is created by the batch that writes its later endpoint.
        batch_ids = {p.record.id for p in batch} | new_units
        rels = {rel for i in batch_ids for rel in touching.get(i, ()) if rel[0] in present and rel[1] in present}
        # Relations between two entity nodes touch no unit: their owners create them.
        rels.update(rel for p in batch for rel in p.owned if rel[0] in present and rel[1] in present)
        if rels:
            await self._graph.create_relations(
                [Relation(s, t, k, weight=weights.get((s, t, k), 1.0)) for s, t, k in sorted(rels)]
            )
        report.relations += len(rels)

        # Commit: the document (and its chunks) is "indexed" only once everything it owns is written.
        await self._graph.store_documents([d for p in batch for d in self._documents(p, "indexed")])
        report.documents += len(batch)
        report.chunks += len(new_units)

    async def _refresh_pagerank(self) -> None:
        if not isinstance(self._graph, PageRankRefreshing):
            return
        result: Any = self._graph.refresh_pagerank()
        if inspect.isawaitable(result):
            await result
