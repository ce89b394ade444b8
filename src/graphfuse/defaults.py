"""The tuned defaults: every number GraphFuse chose by measuring it, in one place.

Each constant's docstring says what it sets and links the section of the docs that holds its
measurements (``docs/PAGE.md#section``: the sweep, the sets it ran on, what the neighbours
scored). The components read their defaults from here; passing an argument, a weight or a
stage option overrides any of them for one pipeline. Changing a value here changes behaviour:
re-run the measurements its section gives.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "ADAPTIVE_LEXICAL_WEIGHT",
    "ADAPTIVE_REFERENCE",
    "ADAPTIVE_TIME_BOOST",
    "ADAPTIVE_VECTOR_BOOST",
    "ASSUMED_SIMILARITY",
    "BRIDGE_SEEDS",
    "CHUNK_OVERLAP",
    "CHUNK_TOKENS",
    "COVERAGE",
    "DENSITY",
    "DENSITY_OFFSET",
    "DOCUMENT_CACHE_CHARS",
    "DOCUMENT_TOP",
    "DOCUMENT_WEIGHT",
    "EVIDENCE_WEIGHTS",
    "FUSED_SPLIT_SHARE",
    "FUSED_WEIGHT",
    "HUB_SHARE",
    "MAX_PER_DOCUMENT",
    "MAX_POOL",
    "MIN_POOL",
    "MULTIHOP_WEIGHTS",
    "PASSAGE_LEXICAL",
    "POOL_PER_BUDGET",
    "SEED_SIGNALS",
    "TEXT_GRAPH_BRIDGE_NAMES",
    "TEXT_GRAPH_BRIDGE_PER_NAME",
    "TEXT_GRAPH_DAMPING",
    "WHOLE_PAGE_CHUNKS",
]

# Indexing: how documents are cut into passages.

CHUNK_TOKENS = 256
"""Tokens of a passage, at most: a longer document is cut into chunks of this many tokens
(:class:`~graphfuse.indexing.TokenChunker`). The one chunk size of the indexer, ``graphfuse
index``, the server's ingest and ``graphfuse eval`` (each takes ``--max-tokens`` / ``max_tokens``
for another size); the dev sets at 256 and 512: docs/multihop.md#passage-size."""

CHUNK_OVERLAP = 32
"""Tokens two consecutive chunks of a document share (``max_tokens - 1`` for a chunk size
below it): docs/multihop.md#passage-size."""

# Retrieval: the multihop preset and its scorer.

MULTIHOP_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"semantic": 1.0, "entity": 1.0, "ppr": 3.0, "bridge": 0.5, "time": 1.0, "event": 1.0, "rerank": 0.5}
)
"""Weights of the ``multihop`` preset's signals (the base its adaptive scorer starts from).

``time`` and ``event`` are the time-aware stage's signals (dated stores only); ``bm25`` has no
weight of its own: it adds candidates and seeds the walk (:data:`SEED_SIGNALS`). Chosen on the
dev halves of 2Wiki, MuSiQue and HotpotQA, ``bridge`` also on LiHua-World and title-stripped
2Wiki: docs/multihop.md#the-multihop-preset, docs/multihop.md#the-bridge-stage.
"""

SEED_SIGNALS: Mapping[str, float] = MappingProxyType({"semantic": 1.0, "bm25": 0.6, "entity": 1.0})
"""How :class:`~graphfuse.multihop.PersonalizedPageRank` and
:class:`~graphfuse.multihop.BridgeSearch` weigh a candidate's signals to pick their seeds;
BM25 helps most here, as a seed rather than a scored signal:
docs/multihop.md#seeds-and-hops-on-a-text-graph."""

FUSED_WEIGHT = 80.0
"""Weight of the ``fused`` signal (vector and BM25 ranks fused by passage) on a store of split
pages, at adaptive strength 0; it is ``FUSED_WEIGHT * (1 + 2 * strength)``, 240 on a store
without titles. Swept from 40 to 400 on eight documentation stores (docs_pydantic and HTTPX's
docs, 512 and 256 tokens, titled and title-stripped): docs/multihop.md#long-pages."""

FUSED_SPLIT_SHARE = 0.5
"""The :func:`~graphfuse.multihop.split_share` from which ``multihop`` fuses the first-stage
ranks (documentation: 0.85 on docs_pydantic and FastAPI's docs; 0.011 on 2Wiki, whose few long
articles were split): docs/multihop.md#long-pages."""

DOCUMENT_WEIGHT = 1.0
"""Weight of the ``document`` signal (a passage's whole document's BM25 match) at adaptive
strength 1; it is ``DOCUMENT_WEIGHT * strength``. Swept from 0.75 to 1.5 on LiHua-World
(R@5 0.885-0.901, 1 the best): docs/multihop.md#document-evidence-on-chunked-conversations."""

DOCUMENT_TOP = 5
"""How many of the best-matching documents give their passages the ``document`` signal (3, 4-8
and 10 swept on LiHua-World, 5 the best):
docs/multihop.md#document-evidence-on-chunked-conversations."""

BRIDGE_SEEDS = 2
"""How many of the best candidates the bridge stage reads names from (three gave MuSiQue R@5
0.722): docs/multihop.md#the-bridge-stage."""

TEXT_GRAPH_DAMPING = 0.85
"""PageRank damping of ``multihop``'s walk over an entity graph built from the text (0.5,
the stage's own default, over title links): through entity nodes a bridge is two steps, not
one: docs/multihop.md#the-bridge-stage."""

TEXT_GRAPH_BRIDGE_PER_NAME = 4
"""On a store without titles, how many of a seed's names the bridge stage searches one at a
time (two or three names were worse on LiHua-World or title-stripped 2Wiki):
docs/multihop.md#the-bridge-stage."""

TEXT_GRAPH_BRIDGE_NAMES = 16
"""On a store without titles, how many of a passage's names the bridge stage considers (8 on
titled stores; title-stripped 2Wiki R@5 0.844 against 0.782 with 8): docs/multihop.md#the-bridge-stage."""

ADAPTIVE_LEXICAL_WEIGHT = 2.0
"""The adaptive scorer's BM25 weight at full confidence and strength (4 and 8 were not
better): docs/multihop.md#adaptive-fusion-the-default."""

ADAPTIVE_VECTOR_BOOST = 2.0
"""How much the adaptive scorer raises the vector weight at full confidence and strength
(``1 + boost``): docs/multihop.md#adaptive-fusion-the-default."""

ADAPTIVE_REFERENCE = 0.4
"""The ranking confidence at which the adaptive scorer gives a ranking its full weight or boost
(``min(1, confidence / reference)``): docs/multihop.md#adaptive-fusion-the-default."""

ADAPTIVE_TIME_BOOST = 2.0
"""How much the adaptive scorer raises the ``time`` and ``event`` weights at full strength
(1.5, 2, 3 and 4 swept on LiHua-World, the only dated dev set):
docs/multihop.md#adaptive-fusion-the-default."""

# Passages: which passages of a page a result shows.

MAX_PER_DOCUMENT = 1
"""Passages of one document in a result list, at most (caps 1, 2 and 3 measured on
docs_pydantic): docs/evaluation.md#passages-on-documentation."""

PASSAGE_LEXICAL = 0.5
"""Share of an in-page BM25 score, beside the cosine, in choosing a page's passage (cosine
only and words only were worse on docs_pydantic): docs/evaluation.md#passages-on-documentation."""

HUB_SHARE = 0.2
"""A page holding more than this share of the vector store's chunks is a hub, whose passages
rank lower (FastAPI's release notes): docs/evaluation.md#passages-on-documentation."""

# Context: which sentences the evidence format keeps under a budget.

EVIDENCE_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "decay": 1.75,
        "terms": 0.58,
        "title": 0.65,
        "query_entity": 0.1,
        "bridge": 0.35,
        "subject": 0.6,
        "linked": 1.0,
        "cue": 0.46,
        "semantic": 1.0,
        "relation": 0.5,
        "restated": 0.25,
        "shared": 0.5,
    }
)
"""The weights of an evidence sentence's score.

``decay``: a result's rank weight is ``1 / (1 + decay * rank)``; ``terms``: times the share of
the query's content terms the sentence holds (each weighted by rarity); ``title``: times the
share of the query's terms in the title of a document the query does not name;
``query_entity``, ``bridge``, ``subject``, ``cue``: for naming a query entity, naming a bridge
document, being a passage's first sentence, holding what the question asks for (a date, a
number, a place); ``linked``: the share of its namer's rank weight a bridge document keeps;
``semantic``: times the cosine similarity to the query (with an embedder); ``relation``: times
the similarity to the question without the names it asks about, in a document the question
does not name; ``restated``: the share a sentence of a named document keeps when it is neither
its first nor names a bridge; ``shared``: the share of its rank weight a document sharing a
rare name with the best-ranked one rises to. Searched on the 2Wiki and MuSiQue dev questions,
checked on HotpotQA's: docs/context.md#what-a-context-costs-and-holds-measured.
"""

COVERAGE = 2.16
"""Weight of the query terms a sentence adds to those already selected (the hops of a question
use different words: cover them all): docs/context.md#what-a-context-costs-and-holds-measured."""

DENSITY = 0.33
"""Evidence is taken by gain per ``(tokens + DENSITY_OFFSET) ** DENSITY``: a short sentence
stating the fact beats a long one that also restates the question (1.0, pure density, favours
fragments): docs/context.md#what-a-context-costs-and-holds-measured."""

DENSITY_OFFSET = 8
"""Tokens added to a sentence's count in its density cost (see :data:`DENSITY`):
docs/context.md#what-a-context-costs-and-holds-measured."""

WHOLE_PAGE_CHUNKS = 2
"""A returned chunk of a page at most this many chunks long gives evidence the whole page (2Wiki
dev 0.841 against 0.832 without; three chunks cost docs_pydantic one question):
docs/context.md#the-formats, docs/benchmarks.md#context-on-the-dev-sets."""

ASSUMED_SIMILARITY = 0.6
"""The similarity a sentence is assumed to reach when sentences are ranked for embedding (a
question and the sentence answering it score 0.5-0.8 with MiniLM):
docs/context.md#what-an-embedder-costs."""

MIN_POOL = 4096
"""Tokens of sentences embedded whatever the budget (every sentence of a usual top 10 of
paragraphs): docs/context.md#what-an-embedder-costs."""

MAX_POOL = 32_768
"""Tokens of sentences embedded at most, whatever the budget: docs/context.md#what-an-embedder-costs."""

POOL_PER_BUDGET = 8
"""Tokens of sentences embedded per token of budget, between :data:`MIN_POOL` and
:data:`MAX_POOL`: docs/context.md#what-an-embedder-costs."""

# Stores: what the embedded store keeps in memory between reads.

DOCUMENT_CACHE_CHARS = 16_000_000
"""Characters of decoded documents (text and stored metadata) the embedded graph store keeps for
its file's current generation, emptied by any write (about 16 MB of text; a documentation site
of a few thousand passages fits whole): docs/multihop.md#query-cost-on-documentation."""
