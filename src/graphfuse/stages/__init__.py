"""The eight built-in stages.

Each stage has a ``name`` (the key of its per-call options, changeable with ``name=``) and
writes one signal (named after the stage kind, changeable with ``signal=``); constructor
arguments and per-call options are validated before a run starts. They derive from
:class:`NamedStage`, which a third-party stage may derive from too. See docs/stages.md for each
stage, its signal and options.
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
