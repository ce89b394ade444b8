"""The eight built-in stages.

Each stage has a ``name`` (the key of its per-call options, changeable with ``name=`` so a
pipeline can hold two of a kind) and writes one signal (named after the stage kind, changeable
with ``signal=``). Constructor arguments are validated (:class:`~graphfuse.InvalidInput`
naming the argument); per-call options are validated by ``check_options`` before a run starts.
They (and the multi-hop and time-aware stages) derive from :class:`NamedStage`, which a
third-party stage may derive from too.

================== ============ =========== ==============================================
class              name         signal      what it does
================== ============ =========== ==============================================
SemanticSearch     semantic     semantic    vector search for the query (ids only)
Hydrate            hydrate      (none)      loads full documents from the graph store
GraphExpansion     graph        graph       adds related documents, ``decay ** distance``
TemporalDecay      temporal     temporal    ``0.5 ** (age / half_life)``
PageRank           pagerank     pagerank    pre-computed centrality, ``default`` if absent
AccessPopularity   access       access      access counter normalised across candidates
Rerank             rerank       rerank      reranker scores for the ``top_k`` best
ParentAggregation  aggregate    (combined)  one candidate per document: chunks + parent
================== ============ =========== ==============================================
"""

from ._access import AccessPopularity
from ._aggregate import ParentAggregation
from ._graph import GraphExpansion
from ._hydrate import Hydrate
from ._named import NamedStage
from ._pagerank import PageRank
from ._rerank import Rerank
from ._semantic import SemanticSearch
from ._temporal import TemporalDecay

__all__ = [
    "AccessPopularity",
    "GraphExpansion",
    "Hydrate",
    "NamedStage",
    "PageRank",
    "ParentAggregation",
    "Rerank",
    "SemanticSearch",
    "TemporalDecay",
]
