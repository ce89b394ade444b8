"""The entity graph of one index call: entity nodes, ``MENTIONED_IN`` and ``CO_OCCURS_WITH``."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._core._types import KIND_KEY, Document
from ._llm_graph import RELATED_TO, typed_facts
from ._relation_types import CO_OCCURS_WITH, MENTIONED_IN
from ._text_entities import merge_variants

if TYPE_CHECKING:
    from ._plan import Plan

__all__ = ["plan_entities"]


def plan_entities(
    by_doc: Mapping[str, Plan],
    doc_of: Mapping[str, str],
    mentioned: Mapping[str, Counter[str]],
    *,
    namespace: str,
    metadata: Mapping[str, Any],
    co_cap: int,
    extractors: Iterable[object] = (),
) -> dict[str, Document]:
    """The entity nodes of the units' ``mentioned`` entities (unit id -> entity key -> count).

    Name variants are merged (:func:`merge_variants`); each plan of ``by_doc`` gets a
    ``MENTIONED_IN`` relation from each entity to each of its units mentioning it (weight: how
    many times), and ``CO_OCCURS_WITH`` between entities among one unit's ``co_cap``
    most-mentioned (weight: in how many units), owned by each document where they co-occur.
    Node ids are ``namespace`` + key; ``metadata`` goes into every node's metadata. An LLM graph
    extractor among ``extractors`` adds types and descriptions to the nodes and ``RELATED_TO``
    relations between them (their metadata in the owning plans' ``rel_meta``).
    """
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
            node = namespace + key
            rel = (node, unit, MENTIONED_IN)
            plan.owned.add(rel)
            plan.weights[rel] = float(own[key])
        # Pairs among the unit's ``co_cap`` most-mentioned entities only: a list of
        # twenty names would otherwise make 190 relations for one passage.
        central = sorted(sorted(own, key=lambda k: (-own[k], k))[:co_cap])
        for i, a in enumerate(central):
            for b in central[i + 1 :]:
                pairs[(a, b)] += 1
                owners[(a, b)].add(doc_of[unit])
    facts = typed_facts(extractors, [u for p in by_doc.values() for u in p.units], canonical)
    for key, n in total.items():
        node = namespace + key
        meta = {**facts.entities.get(key, {}), **metadata, KIND_KEY: "entity", "name": key}
        nodes[node] = Document(node, key, {**meta, "mentions": n})
    for (a, b), (weight, rel_meta, units) in facts.relations.items():
        if a in total and b in total:
            rel = (namespace + a, namespace + b, RELATED_TO)
            for unit in units:
                owner = by_doc[doc_of[unit]]
                owner.owned.add(rel)
                owner.weights[rel] = weight
                owner.rel_meta[rel] = rel_meta
    for (a, b), n in pairs.items():
        rel = (namespace + a, namespace + b, CO_OCCURS_WITH)
        for doc in owners[(a, b)]:
            by_doc[doc].owned.add(rel)
            by_doc[doc].weights[rel] = float(n)
    return nodes
