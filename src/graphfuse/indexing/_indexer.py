"""The indexer: source records -> chunks -> embeddings and a graph of documents and relations.

The :class:`Indexer` runs an index call; what it plans is in ``_plan`` and ``_entity_graph``,
what it keeps on stored documents in ``_stored_state``, and its reads and writes in ``_writes``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core._errors import InvalidInput, NotFound
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._sync import sync_form
from .._core._types import ENTITY_PREFIX, KIND_KEY, Document
from ._chunking import TokenChunker
from ._extractors import EntityExtractor, TitleLinker
from ._plan import Plan, PlanSettings, plan_records
from ._records import EXCLUDED_KEYS, SourceRecord, check_record_id, reserved_key
from ._relation_types import (
    CO_MENTION,
    CO_OCCURS_WITH,
    LINKS_TO,
    MENTIONED_IN,
    MENTIONS,
    PART_OF,
    Rel,
)
from ._stored_state import LINKS, STATE, owned_relations, unchanged, unit_ids
from ._text_entities import TextEntityExtractor, wants_entity_graph
from ._titles import metadata_aliases
from ._writes import Writer

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
        if not isinstance(entity_graph, bool):
            raise InvalidInput(f"entity_graph must be a bool, got {entity_graph!r}")
        if not isinstance(entity_namespace, str) or "\n" in entity_namespace or len(entity_namespace) > 128:
            raise InvalidInput(f"entity_namespace must be a string of at most 128 characters, got {entity_namespace!r}")
        extra = dict(entity_metadata or {})
        reserved = sorted(
            str(k) for k in extra if not isinstance(k, str) or k in ("name", "mentions") or reserved_key(k)
        )
        if reserved:
            raise InvalidInput(f"entity_metadata may not set {reserved}: the indexer writes them")
        self._graph = graph_store
        self._extractors = tuple(extractors)
        self._batch_size = batch_size
        self._settings = PlanSettings(
            chunker=chunker if chunker is not None else TokenChunker(),
            extractors=self._extractors,
            co_cap=co_mention_cap,
            target_cap=mention_target_cap,
            embed_title=embed_title,
            entity_graph=entity_graph,
            entity_namespace=ENTITY_PREFIX + entity_namespace,
            entity_metadata=extra,
        )
        self._writer = Writer(graph_store, vector_store, embedder, batch_size=batch_size, embed_title=embed_title)

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
        embed_title: bool = True,
        linker: TitleLinker | None = None,
        entity_namespace: str = "",
        entity_metadata: Mapping[str, Any] | None = None,
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

        This is the one way GraphFuse sets up an indexer: ``graphfuse index``, ``graphfuse eval``
        (with a ``chunker`` keeping passages whole) and the host integrations (their own
        ``chunker``, ``embed_title=False`` when the host embeds) call it. Pass ``entity_graph``
        to decide without ``records`` (an empty list then does). ``linker`` is the title linker
        to use (default a new one; a server keeps one per tenant, preloaded with the titles the
        store holds); ``entity_namespace`` and ``entity_metadata`` go to the indexer as they are.
        """
        if text_extractors is not None and entity_graph is False:
            raise InvalidInput("text_extractors build the entity graph: they cannot go with entity_graph=False")
        if entity_graph is None:
            entity_graph = text_extractors is not None or wants_entity_graph(records)
        extractors: list[EntityExtractor] = [TitleLinker() if linker is None else linker]
        if entity_graph:
            extractors.extend([TextEntityExtractor()] if text_extractors is None else text_extractors)
        return cls(
            graph_store,
            vector_store,
            embedder,
            chunker=chunker,
            extractors=extractors,
            batch_size=batch_size,
            embed_title=embed_title,
            entity_graph=entity_graph,
            entity_namespace=entity_namespace,
            entity_metadata=entity_metadata,
        )

    def __repr__(self) -> str:
        extractors = list(self._extractors)
        chunker = self._settings.chunker
        return f"Indexer(chunker={chunker!r}, extractors={extractors!r}, batch_size={self._batch_size})"

    # -- public API ----------------------------------------------------------------------------

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
        _validate(recs)
        writer = self._writer
        writer.check_dimension()
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

        plans, entity_nodes = await asyncio.to_thread(plan_records, recs, self._settings, report.warnings, on_read)
        external = await writer.check_links(plans, report.warnings)
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
        existing = await writer.existing([p.record.id for p in plans])
        intact = await writer.intact(plans, existing)
        present: set[str] = set()
        todo: list[Plan] = []
        for p in plans:
            if unchanged(p, existing.get(p.record.id)) and p.record.id in intact:
                report.skipped += 1
                present.add(p.record.id)
                present.update(u for u, _ in p.units)
            else:
                todo.append(p)
        present.update(external)
        if entity_nodes:
            nodes = list(entity_nodes.values())
            for i in range(0, len(nodes), 500):
                await self._graph.store_documents(nodes[i : i + 500])
            present.update(entity_nodes)
        # Relations of every planned document, skipped ones included: an earlier interrupted run
        # may have committed a document before the other end of one of its relations was written.
        touching: dict[str, set[Rel]] = defaultdict(set)
        weights = {rel: w for p in plans for rel, w in p.weights.items()}
        rel_meta = {rel: m for p in plans for rel, m in p.rel_meta.items()}
        for p in plans:
            for rel in p.owned:
                touching[rel[0]].add(rel)
                touching[rel[1]].add(rel)
        done = report.skipped
        if progress is not None:
            progress(done)  # the records to skip, at once (0 when there are none)
        for batch in writer.batches(todo, grow=progress is not None):
            relations, units = await writer.write_batch(batch, existing, present, touching, weights, rel_meta)
            report.relations += relations
            report.documents += len(batch)
            report.chunks += units
            done += len(batch)
            if progress is not None:
                progress(done)
        if todo:
            await writer.refresh_pagerank()
        return report

    index = sync_form(aindex)
    """Sync form of :meth:`aindex`: same arguments, result and errors, no event loop needed."""

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
        found = await self._writer.existing_documents(list(ids))
        existing = {k: d.metadata for k, d in found.items()}
        for doc_id in ids:
            check_record_id(doc_id, "document id")
        if not missing_ok:
            wrong = [i for i in dict.fromkeys(ids) if existing.get(i, {}).get(KIND_KEY) != "document"]
            if wrong:
                shown = ", ".join(map(repr, wrong[:20])) + (" ..." if len(wrong) > 20 else "")
                raise NotFound(f"{len(wrong)} id(s) are not indexed documents (unknown, or chunk ids): {shown}")
        units: list[str] = []
        for doc_id, meta in existing.items():
            units.extend(unit_ids(doc_id, meta))
        if found:
            await self._graph.store_documents(
                [
                    Document(d.id, d.content, {**d.metadata, STATE: "pending"}, created_at=d.created_at)
                    for d in found.values()
                ]
            )
        node_ids = sorted(set(units) | set(existing))
        await self._writer.vectors.delete(node_ids)
        await self._graph.delete_documents(node_ids)
        for ex in self._extractors:
            remove = getattr(ex, "remove", None)
            if callable(remove):
                # Every id asked for: a failed first index may have taught the linker a title
                # whose document never got written.
                for doc_id in dict.fromkeys([*existing, *ids]):
                    remove(doc_id)
        if existing:
            await self._writer.refresh_pagerank()
        return len(existing)

    delete = sync_form(adelete)
    """Sync form of :meth:`adelete`: same arguments, result and errors, no event loop needed."""

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

    indexed_ids = sync_form(aindexed_ids)
    """Sync form of :meth:`aindexed_ids`: same arguments, result and errors, no event loop needed."""

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
            given = meta.get(LINKS)
            if isinstance(given, list) and all(isinstance(x, str) for x in given):
                links = list(given)
            else:
                links = sorted({t for s, t, k in owned_relations(meta) if k == LINKS_TO and s == d.id})
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

    stored_records = sync_form(astored_records)
    """Sync form of :meth:`astored_records`: same arguments, result and errors, no event loop needed."""

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

    prune = sync_form(aprune)
    """Sync form of :meth:`aprune`: same arguments, result and errors, no event loop needed."""


def _validate(recs: Sequence[SourceRecord]) -> None:
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
