"""An index call's plan: each record's units, the relations it owns and its digest (pure, no I/O)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core._types import Document
from ._chunking import TokenChunker
from ._entity_graph import plan_entities
from ._extractors import EntityExtractor
from ._records import SourceRecord
from ._relation_types import CO_MENTION, LINKS_TO, MENTIONS, PART_OF, Rel

__all__ = ["Plan", "PlanSettings", "plan_records"]


@dataclass
class Plan:
    """What one record becomes: its units, the relations it owns (with weights) and its digest."""

    record: SourceRecord
    units: list[tuple[str, str]]  # (unit id, unit text); a one-chunk document is its own unit
    unit_meta: list[Mapping[str, Any]] = field(default_factory=list)  # each chunk's own metadata (given chunks)
    owned: set[Rel] = field(default_factory=set)
    weights: dict[Rel, float] = field(default_factory=dict)
    rel_meta: dict[Rel, Mapping[str, Any]] = field(default_factory=dict)  # typed relations' metadata (LLM graph)
    digest: str = ""


@dataclass(frozen=True)
class PlanSettings:
    """The indexer's configuration a plan depends on (see :class:`~graphfuse.indexing.Indexer`)."""

    chunker: TokenChunker
    extractors: tuple[EntityExtractor, ...]
    co_cap: int
    target_cap: int
    embed_title: bool
    entity_graph: bool
    entity_namespace: str
    entity_metadata: Mapping[str, Any]

    @property
    def fingerprint(self) -> str:
        """What of the configuration goes into every digest (a change re-indexes the documents)."""
        names = [getattr(e, "identity", None) or type(e).__name__ for e in self.extractors]
        config = f"{self.chunker.fingerprint}|{names}|{self.embed_title}"
        return config + "|entity_graph" if self.entity_graph else config


def plan_records(
    recs: Sequence[SourceRecord],
    settings: PlanSettings,
    warnings: list[str],
    on_read: Callable[[int], None] | None = None,
) -> tuple[list[Plan], dict[str, Document]]:
    """The plans of ``recs`` and, with an entity graph, its entity nodes (id -> node).

    Each record is chunked (a host's own chunks kept as given) and its units' mentions are
    extracted: ``LINKS_TO``, ``PART_OF``, ``MENTIONS`` (weight ``1 / (1 + r)`` for the ``r``-th
    distinct target) and either ``CO_MENTION`` between units of different documents sharing an
    entity or the entity graph (:func:`plan_entities`). ``on_read`` is called after each record;
    hubs left without ``CO_MENTION`` relations are counted into ``warnings``.
    """
    plans: list[Plan] = []
    for r in recs:
        chunks = list(r.chunks) or settings.chunker.split(r.text)  # a host's own chunks are kept as given
        units = [(r.id, r.text)] if len(chunks) == 1 else [(f"{r.id}#{c.index}", c.text) for c in chunks]
        meta = [c.metadata for c in chunks] if len(chunks) > 1 else [{}]
        plans.append(Plan(r, units, meta))
    doc_of = {u: p.record.id for p in plans for u, _ in p.units}
    by_doc = {p.record.id: p for p in plans}
    holders: dict[str, list[str]] = defaultdict(list)
    mentioned: dict[str, Counter[str]] = {}
    for ex in settings.extractors:  # an LLM extractor asks for every passage at once (and its cache)
        prefetch = getattr(ex, "prefetch", None)
        if callable(prefetch):
            prefetch([text for p in plans for _, text in p.units])
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
            for ex in settings.extractors:
                for m in ex.extract(text):
                    if not m.targets:
                        # Passages naming a document are already two hops apart through it.
                        entities.add(m.entity)
                        counts[m.entity] += 1
                    for target in m.targets[: settings.target_cap]:
                        if target != p.record.id and target not in named:
                            named.append(target)
            for rank, target in enumerate(named):
                rel = (unit, target, MENTIONS)
                p.owned.add(rel)
                # Earlier mentions are more central to a passage (its subject's director,
                # author, country come first): weight 1, 1/2, 1/3, ... in order of mention.
                p.weights[rel] = 1.0 / (1 + rank)
            if settings.entity_graph:
                mentioned[unit] = counts
                continue
            for e in entities:
                holders[e].append(unit)
        if on_read is not None:
            on_read(read)
    nodes: dict[str, Document] = {}
    if settings.entity_graph:
        nodes = plan_entities(
            by_doc,
            doc_of,
            mentioned,
            namespace=settings.entity_namespace,
            metadata=settings.entity_metadata,
            co_cap=settings.co_cap,
            extractors=settings.extractors,
        )
    hubs = 0
    for mentioning in holders.values():
        if len(mentioning) > settings.co_cap:
            hubs += 1
            continue
        for i, a in enumerate(mentioning):
            for b in mentioning[i + 1 :]:
                if doc_of[a] != doc_of[b]:
                    s, t = sorted((a, b))
                    by_doc[doc_of[a]].owned.add((s, t, CO_MENTION))
                    by_doc[doc_of[b]].owned.add((s, t, CO_MENTION))
    if hubs:
        warnings.append(
            f"{hubs} entities are mentioned by more than {settings.co_cap} passages: no CO_MENTION relations for them"
        )
    config = settings.fingerprint
    for p in plans:
        p.digest = _digest(p, config)
    return plans, nodes


def _digest(p: Plan, config: str) -> str:
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
    payload = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()
