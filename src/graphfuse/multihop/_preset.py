"""The ``multihop`` preset: hybrid retrieval, entity seeds and Personalized PageRank."""

from __future__ import annotations

from collections.abc import Mapping, Sized
from dataclasses import dataclass
from typing import Any

from .._core._errors import InvalidInput
from .._core._preset_options import stage_options as split_options
from .._core._protocols import Embedder, GraphStore, Reranker, Stage, VectorStore
from .._retrieval._passages import Passages
from .._retrieval._pipeline import Pipeline
from ..defaults import (
    ADAPTIVE_VECTOR_BOOST,
    DOCUMENT_WEIGHT,
    FUSED_SPLIT_SHARE,
    FUSED_WEIGHT,
    MULTIHOP_WEIGHTS,
    TEXT_GRAPH_BRIDGE_NAMES,
    TEXT_GRAPH_BRIDGE_PER_NAME,
    TEXT_GRAPH_DAMPING,
)
from ..indexing import ENTITY_PREFIX, EntityExtractor, EntityMatcher, TitleLinker
from ..scoring import AdaptiveScorer, ReciprocalRankFusion, WeightedScorer
from ..stages import AccessPopularity, Hydrate, PageRank, ParentAggregation, Rerank, SemanticSearch, TemporalDecay
from ..timeaware import TimeAware, Timeline
from ._bm25 import BM25Index, PassageLexicon
from ._bm25_search import BM25Search
from ._bridge import BridgeSearch
from ._document_evidence import DocumentEvidence
from ._entity_seeds import EntitySeeds
from ._ppr import PersonalizedPageRank
from ._rank_fusion import RankFusion
from ._text_entity_seeds import TextEntitySeeds

__all__ = [
    "adaptive_strength",
    "hybrid",
    "lexical",
    "multihop",
    "split_share",
]

NEXT_HOP = "next_hop"
"""The signal :class:`BridgeSearch` gives the passages it reached as a next hop, which the
adaptive scorer's ``second_hop`` rule reads (weightless: it ranks nothing itself)."""


def adaptive_strength(
    bm25: BM25Index | None, linker: EntityExtractor | None, entities: EntityMatcher | None = None
) -> float:
    """How much the ``multihop`` preset's :class:`~graphfuse.scoring.AdaptiveScorer` adapts, from the corpus.

    1 when the store's graph comes from the text (entity nodes, ``entities`` non-empty: chat
    logs, tickets, title-stripped passages), else ``1 - min(1, titles / documents)``, the share
    of the corpus the title linker does not cover. Where (nearly) every document has a title
    that names it (Wikipedia-like corpora), the title links give the walk its graph and the
    fixed weights stand (0). Without a BM25 index there is no lexical ranking to weigh: 0.
    Computed once, when the pipeline is built, from sizes the indexes already hold.
    """
    if bm25 is None or len(bm25) == 0:
        return 0.0
    if entities is not None and len(entities) > 0:
        return 1.0
    titles = len(linker) if isinstance(linker, Sized) else 0
    return max(0.0, 1.0 - min(1.0, titles / len(bm25)))


def split_share(bm25: BM25Index) -> float:
    """The share of ``bm25``'s passage index that the splitting added: ``1 - pages / passages`` (0 without one).

    0 when no page was split, about 0.01 on a wiki whose few long articles were split, 0.85 on
    documentation whose pages are several sections each.
    """
    passages = bm25.passages
    if passages is None or not len(passages):
        return 0.0
    return max(0.0, 1.0 - len(bm25) / len(passages))


def _by_passage(bm25: BM25Index) -> BM25Index:
    """The index the presets' lexical searches run over: ``bm25``'s :attr:`~BM25Index.passages` if it has them.

    On a store whose pages the indexer split, a long page then scores by its best passage rather
    than by the question's words spread over all of its sections, as its vectors do; a corpus
    with no split page keeps its page index (docs/multihop.md, "Long pages").
    """
    return bm25.passages if bm25.passages is not None else bm25


_KEYS = (
    "semantic",
    "bm25",
    "document",
    "entity",
    "time",
    "text_entity",
    "aggregate_seeds",
    "fused",
    "bridge",
    "ppr",
    "aggregate",
    "temporal",
    "pagerank",
    "access",
    "rerank",
)
# Opt-in stages: added only when their options are given (``temporal={}`` takes the defaults).
_OPT_IN = ("temporal", "pagerank", "access")


def multihop(
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    *,
    bm25: BM25Index | None = None,
    linker: EntityExtractor | None = None,
    timeline: Timeline | None = None,
    entities: EntityMatcher | None = None,
    reranker: Reranker | None = None,
    weights: Mapping[str, float] | None = None,
    adaptive: bool = True,
    normalize: bool = True,
    **stage_options: Mapping[str, Any],
) -> Pipeline:
    """semantic, bm25 (, document), entity, aggregate_seeds, bridge, ppr, aggregate (, rerank): MULTIHOP_WEIGHTS.

    Three :class:`~graphfuse.stages.Hydrate` stages (``hydrate_seeds``, ``hydrate_ppr``,
    ``hydrate``) load what the next stage reads, each document once per run (``hydrate_ppr``
    also reads the pages ``aggregate`` folds the hydrated chunks into). For chunked documents (the
    :class:`~graphfuse.indexing.Indexer`'s ``parent_id``), ``aggregate_seeds`` (a
    :class:`~graphfuse.stages.ParentAggregation` with ``keep="best_chunk"``) folds a document
    and its chunks into its best chunk before the walk, so the document's entity/BM25 signals
    and its chunks' semantic signal add up; ``aggregate`` (``keep="parent"``) folds what the
    walk added into one result per document. On an unchunked corpus both are no-ops.

    ``bm25`` (a :class:`BM25Index` of the corpus) and ``linker`` (a
    :class:`~graphfuse.indexing.TitleLinker` of its titles) are optional: without them the
    stage is left out; when ``bm25`` holds :attr:`~BM25Index.passages` (a store whose pages the
    indexer split), the BM25 and bridge searches run over those passages; with ``bm25``,
    :class:`EntitySeeds` weighs a one-word title by the share of documents without the word
    (``words=bm25``), and :class:`BridgeSearch` (``bridge``) also searches it for
    the question plus the names the two best passages mention (the second hop of a question
    whose bridge entity it does not name). With a ``timeline`` (:class:`~graphfuse.timeaware.Timeline` of the
    corpus) holding dated documents, the :class:`~graphfuse.timeaware.TimeAware` stage
    (``time``) runs after the entity stage: it boosts what was created when the question says
    (pass ``options={"time": {"reference": ...}}`` with a query for relative expressions) and
    retrieves both events of an ordering question; an undated store leaves it out. With
    ``entities`` (an :class:`~graphfuse.indexing.EntityMatcher` of the store's entity nodes,
    :func:`entity_matcher`; a store indexed with ``entity_graph=True``) holding any, the
    :class:`TextEntitySeeds` stage (``text_entity``) seeds the walk with the entities the
    question names, and the walk passes through entity nodes without returning them.
    ``stage_options`` passes keyword arguments by stage name, e.g.
    ``multihop(g, v, e, bm25=index, ppr={"damping": 0.5})``.

    Temporal decay, stored PageRank and access popularity are opt-in (multi-hop QA corpora
    carry no time or usage data): pass their options, e.g. ``temporal={}`` or
    ``access={"key": "views"}``, and ``weights`` that give their signals a weight; they run
    after the last hydrate, before rerank. Asking for one without a weight for its signal is
    an :class:`~graphfuse.InvalidInput`, so a stage never runs for nothing.

    The scorer is an :class:`~graphfuse.scoring.AdaptiveScorer` over ``weights`` (default
    :data:`MULTIHOP_WEIGHTS`): per query, the BM25 and vector signals weigh more when their
    best hit stands out, by as much as the corpus leaves to them (:func:`adaptive_strength`;
    nothing on a corpus whose titles give the graph, where it scores as the fixed weights do).
    A question whose bridge search reached a passage neither first-stage search found keeps
    the fixed weights (the scorer's ``second_hop`` rule, which reads the bridge stage's
    ``next_hop`` signal: in the per-name form only a passage found *about* a name), and the
    walk's seeds follow the same per-query trust (``PersonalizedPageRank(seed_boost=scorer.boosts)``).
    ``adaptive=False`` gives a :class:`~graphfuse.scoring.WeightedScorer` with the fixed weights
    (docs/multihop.md). Scores are normalised (the scorer's ``normalize``): each query's weighted
    sums are divided by the total weight of the signals its candidates carry, so a score is in
    [0, 1] and the order is the raw sums' order; ``normalize=False`` gives the raw sums.

    With the adaptive scorer on a store it adapts for (strength > 0) whose passages share titles
    (at least two passages with one title: a conversation cut into chunks), a
    :class:`DocumentEvidence` stage (``document``) after ``bm25`` gives each candidate passage the
    BM25 score of its whole document (the passages with its title) when that document is among
    the five best, weighted :data:`DOCUMENT_WEIGHT` x ``strength`` unless ``weights`` has
    ``"document"``.

    On a store whose passage index is at least half chunks of split pages (:func:`split_share`
    >= 0.5: documentation), a :class:`RankFusion` stage (``fused``) before ``aggregate_seeds``
    gives each passage the reciprocal rank fusion of its vector and BM25 ranks and each page
    its best passage's (as :func:`hybrid` ranks), weighted :data:`FUSED_WEIGHT` x ``(1 + 2 *
    strength)`` unless ``weights`` has ``"fused"``: that order comes first and the walk's
    signals break its near-ties.
    """
    if not isinstance(adaptive, bool):
        raise InvalidInput(f"multihop: adaptive must be True or False, got {adaptive!r}")
    if not isinstance(normalize, bool):
        raise InvalidInput(f"multihop: normalize must be True or False, got {normalize!r}")
    shape = _corpus_shape(bm25, linker, entities)
    base = _fused_weight(MULTIHOP_WEIGHTS if weights is None else weights, shape, adaptive)
    allowed = tuple(k for k in _KEYS if (k != "rerank" or reranker is not None))
    opts = split_options(stage_options, allowed)
    documents, base = _document_evidence(shape, adaptive, base, opts)
    scorer: AdaptiveScorer | WeightedScorer = (
        AdaptiveScorer(base, strength=shape.strength, second_hop=NEXT_HOP, normalize=normalize)
        if adaptive
        else WeightedScorer(base, normalize=normalize)
    )
    stages: list[Stage] = [
        *_first_stages(graph_store, vector_store, embedder, shape, bm25, linker, timeline, entities, documents, opts),
        *_walk_stages(graph_store, shape, linker, scorer, opts),
        *_opt_in_stages(graph_store, weights, stage_options, opts),
    ]
    if reranker is not None:
        stages.append(Rerank(reranker, **opts["rerank"]))
    return Pipeline(stages, scorer, passages=Passages(graph_store, vector_store, embedder, terms=_lexicon(bm25)))


@dataclass(frozen=True)
class _Shape:
    """What the corpus gives the multihop preset, decided once from its indexes."""

    strength: float
    """How much the ranking is left to first-stage evidence (:func:`adaptive_strength`)."""
    fuse_ranks: bool
    """The passage index is at least half chunks of split pages (documentation)."""
    lexical: BM25Index | None
    """The index the lexical searches run over: by passage on a store of split pages."""
    text_graph: bool
    """The store has entity nodes found in text (``entity_graph=True``)."""


def _corpus_shape(bm25: BM25Index | None, linker: EntityExtractor | None, entities: EntityMatcher | None) -> _Shape:
    # A store whose passages are mostly chunks of split pages (documentation, manuals): the page
    # graph links whole pages, so a walk seeded from three of them lifts those pages over ones
    # whose own passages match better, and the order is the first-stage fusion's (as hybrid's),
    # the graph signals breaking its near-ties. On a wiki where a few long articles were split,
    # nothing changes (docs/multihop.md, "Long pages").
    # On a store of split pages the lexical searches run over passages, as the vector search
    # does: a long page scores by its best passage, not by the question's words spread over all
    # of its sections (docs/multihop.md, "Long pages"). The aggregations fold them into pages.
    return _Shape(
        strength=adaptive_strength(bm25, linker, entities),
        fuse_ranks=bm25 is not None and split_share(bm25) >= FUSED_SPLIT_SHARE,
        lexical=_by_passage(bm25) if bm25 is not None else None,
        text_graph=entities is not None and len(entities) > 0,
    )


def _fused_weight(base: Mapping[str, float], shape: _Shape, adaptive: bool) -> Mapping[str, float]:
    # Where the titles do not give the graph (adaptive strength up to 1) it weighs more, as the
    # vector ranking may (AdaptiveScorer's vector_boost 2): the walk's seeds are surer there.
    if shape.fuse_ranks and "fused" not in base:
        return {**base, "fused": FUSED_WEIGHT * (1.0 + ADAPTIVE_VECTOR_BOOST * (shape.strength if adaptive else 0.0))}
    return base


def _document_evidence(
    shape: _Shape, adaptive: bool, base: Mapping[str, float], opts: Mapping[str, Mapping[str, Any]]
) -> tuple[DocumentEvidence | None, Mapping[str, float]]:
    # Passages that share a title are parts of one document (a conversation cut into chunks): the
    # whole document's match is evidence for each of them, weighed as much as the store leaves the
    # ranking to first-stage evidence (the adaptive strength; docs/multihop.md, "Document
    # evidence"); fixed weights keep the preset as it was. Where no two passages share a title, a
    # document is its passage and the stage would repeat BM25.
    if shape.lexical is None or not adaptive or shape.strength <= 0:
        return None, base
    documents = DocumentEvidence(shape.lexical, **opts["document"])
    if documents.shared == 0:
        return None, base
    if "document" not in base:
        base = {**base, "document": DOCUMENT_WEIGHT * shape.strength}
    return documents, base


def _first_stages(
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    shape: _Shape,
    bm25: BM25Index | None,
    linker: EntityExtractor | None,
    timeline: Timeline | None,
    entities: EntityMatcher | None,
    documents: DocumentEvidence | None,
    opts: Mapping[str, Mapping[str, Any]],
) -> list[Stage]:
    """The first-stage searches and seeds: semantic, bm25, document, entity, time, text_entity."""
    stages: list[Stage] = [SemanticSearch(vector_store, embedder, **opts["semantic"])]
    if shape.lexical is not None:
        stages.append(BM25Search(shape.lexical, **opts["bm25"]))
    if documents is not None:
        stages.append(documents)
    if linker is not None:
        stages.append(EntitySeeds(graph_store, linker, **{"words": bm25, **opts["entity"]}))
    if timeline is not None and len(timeline):
        stages.append(TimeAware(timeline, **{"bm25": bm25, **opts["time"]}))
    if entities is not None and shape.text_graph:
        stages.append(TextEntitySeeds(entities, **opts["text_entity"]))
    return stages


def _walk_stages(
    graph_store: GraphStore,
    shape: _Shape,
    linker: EntityExtractor | None,
    scorer: AdaptiveScorer | WeightedScorer,
    opts: Mapping[str, Mapping[str, Any]],
) -> list[Stage]:
    """fused, the seeds folded, bridge, the walk and the pages folded, each with the hydrates it needs."""
    stages: list[Stage] = []
    # Chunked documents: vector hits land on chunks, entity/BM25 hits on the document. Folding
    # them into the best chunk before PPR lets the signals add up while the walk still starts
    # from a passage (whose MENTIONS lead on); the walk then adds chunks again, folded into their
    # documents at the end. Without chunks (no ``parent_id``) both aggregations are no-ops.
    if shape.fuse_ranks:
        # By passage, before the pages are folded: a page ranks by the one section that both
        # rankings put high, not by the best vector chunk of one section and the best BM25 chunk
        # of another (at the 256-token chunks of `graphfuse index` often different sections).
        stages.append(RankFusion(**opts["fused"]))
    stages.append(Hydrate(graph_store, name="hydrate_seeds"))
    stages.append(ParentAggregation(**{"keep": "best_chunk", "name": "aggregate_seeds", **opts["aggregate_seeds"]}))
    if shape.lexical is not None:
        # Without titles, each of the names nearest the question's words is searched on its own,
        # among the first TEXT_GRAPH_BRIDGE_NAMES names a passage carries: one search for all of them finds the passages
        # that mention several names rather than the bridge's own (docs/multihop.md, "The bridge stage").
        bridge_options = (
            {"per_name": TEXT_GRAPH_BRIDGE_PER_NAME, "max_names": TEXT_GRAPH_BRIDGE_NAMES, **opts["bridge"]}
            if shape.text_graph
            else opts["bridge"]
        )
        stages.append(BridgeSearch(shape.lexical, **{"hop_signal": NEXT_HOP, **bridge_options}))
    stages.append(PersonalizedPageRank(graph_store, **_walk_options(shape, linker, scorer, opts["ppr"])))
    # It also reads the pages `aggregate` folds the hydrated chunks into, so the last hydrate reads
    # only those of the chunks the walk added: one read fewer on most queries.
    parents = opts["aggregate"].get("key", "parent_id")
    stages.append(Hydrate(graph_store, name="hydrate_ppr", parents=parents))
    stages.append(ParentAggregation(**opts["aggregate"]))
    stages.append(Hydrate(graph_store))
    return stages


def _walk_options(
    shape: _Shape, linker: EntityExtractor | None, scorer: AdaptiveScorer | WeightedScorer, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The walk's options: ``given`` over what the corpus shape and the scorer ask for."""
    # Through entity nodes a bridge is two steps (passage -> entity -> passage), not one link:
    # the walk goes on longer, so that the second passage is still reached with weight.
    ppr_options: dict[str, Any] = (
        {"exclude_prefix": ENTITY_PREFIX, "damping": TEXT_GRAPH_DAMPING, **given} if shape.text_graph else dict(given)
    )
    if shape.text_graph and isinstance(linker, TitleLinker) and len(linker):
        # A passage mentioning a name leads to the document named by it (titled, or about it by its
        # subject), as a title link would: the entity node alone spreads the walk over every
        # passage that mentions the name (docs/multihop.md, "Names without titles").
        ppr_options = {"names": linker, **ppr_options}
    if isinstance(scorer, AdaptiveScorer):
        # The walk starts from the passages this query's fusion trusts: the rankings the scorer
        # weighs more (by their confidence, as far as the store leaves to them) pick the seeds
        # by as much. At strength 0 (titled corpora) the multipliers are 1: the seeds are as before.
        ppr_options = {"seed_boost": scorer.boosts, **ppr_options}
    return ppr_options


def _opt_in_stages(
    graph_store: GraphStore,
    weights: Mapping[str, float] | None,
    stage_options: Mapping[str, Mapping[str, Any]],
    opts: Mapping[str, Mapping[str, Any]],
) -> list[Stage]:
    """temporal, pagerank, access: those asked for, each with a weight for its signal."""
    opted = [key for key in _OPT_IN if key in stage_options]
    if opted:
        signals = {key: opts[key].get("signal", key) for key in opted}
        unweighted = [signals[key] for key in opted if weights is None or not weights.get(signals[key])]
        if unweighted:
            raise InvalidInput(
                f"multihop: signal(s) {unweighted} of opt-in stage(s) have no weight; "
                f"pass weights, e.g. {{**MULTIHOP_WEIGHTS, {unweighted[0]!r}: 0.5}}"
            )
    stages: list[Stage] = []
    if "temporal" in opted:
        stages.append(TemporalDecay(**opts["temporal"]))
    if "pagerank" in opted:
        stages.append(PageRank(graph_store, **opts["pagerank"]))
    if "access" in opted:
        stages.append(AccessPopularity(**opts["access"]))
    return stages


def _lexicon(bm25: BM25Index | None) -> PassageLexicon | None:
    """The words of ``bm25``'s passages for :class:`~graphfuse.Passages` (none without a passage index)."""
    return PassageLexicon(bm25.passages) if bm25 is not None and bm25.passages is not None else None


def lexical(
    *,
    bm25: BM25Index,
    graph_store: GraphStore | None = None,
    **bm25_options: Any,
) -> Pipeline:
    """BM25 only (the preset ``"bm25"``): :class:`BM25Search` over the corpus index, scored by ``bm25``.

    With a ``graph_store``, a :class:`~graphfuse.stages.Hydrate` stage loads each result's
    document (title, text) and drops documents an unfinished index run left ``pending``, as
    every other preset does, and a chunked document's results are its best passages by words
    (:class:`~graphfuse.Passages`, lexical only). When ``bm25`` holds
    :attr:`~BM25Index.passages` (a store whose pages the indexer split), the search runs over
    those passages, so a long page ranks by its best passage (as in :func:`multihop`); without a
    ``graph_store`` it searches whole pages, whose ids are the results' ids.
    """
    index = _by_passage(bm25) if graph_store is not None else bm25
    stages: list[Stage] = [BM25Search(index, **bm25_options)]
    passages = None
    if graph_store is not None:
        stages.append(Hydrate(graph_store))
        passages = Passages(graph_store, terms=_lexicon(bm25))
    return Pipeline(stages, WeightedScorer({"bm25": 1.0}), passages=passages)


def hybrid(
    vector_store: VectorStore,
    embedder: Embedder,
    *,
    bm25: BM25Index,
    graph_store: GraphStore | None = None,
    weights: Mapping[str, float] | None = None,
) -> Pipeline:
    """Vector and BM25 search fused by reciprocal rank (the preset ``"hybrid"``), equal weights by default.

    With a ``graph_store``, results are hydrated (and ``pending`` documents dropped) as in
    :func:`lexical`, and are passages (:class:`~graphfuse.Passages`). When ``bm25`` holds
    :attr:`~BM25Index.passages`, the BM25 search runs over those passages: the vector search
    finds the chunks of a split page, and reciprocal rank fusion adds up the two ranks of a
    passage only when both searches return it under the same id.
    """
    stages: list[Stage] = [SemanticSearch(vector_store, embedder), BM25Search(_by_passage(bm25))]
    passages = None
    if graph_store is not None:
        stages.append(Hydrate(graph_store))
        passages = Passages(graph_store, vector_store, embedder, terms=_lexicon(bm25))
    return Pipeline(
        stages,
        ReciprocalRankFusion({"semantic": 1.0, "bm25": 1.0} if weights is None else weights, normalize=True),
        passages=passages,
    )
