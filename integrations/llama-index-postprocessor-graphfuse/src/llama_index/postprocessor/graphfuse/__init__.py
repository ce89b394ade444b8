"""GraphFuse node postprocessors for LlamaIndex.

Signal postprocessors add one GraphFuse signal to each node and keep the order and scores:
:class:`TemporalDecayPostprocessor`, :class:`PageRankPostprocessor`,
:class:`AccessPostprocessor`; :class:`GraphExpansionPostprocessor` adds related documents;
:class:`RerankPostprocessor` reranks with any GraphFuse reranker;
:class:`WeightedFusionPostprocessor` turns the signals into the final score and order;
:class:`StagePostprocessor` runs any registered GraphFuse stage (plugins included).

Signals travel under the node metadata key ``"graphfuse_signals"`` (excluded from embedding
and LLM text). Every postprocessor has a native async path (``apostprocess_nodes``).
"""

from ._access import AccessPostprocessor
from ._fusion import WeightedFusionPostprocessor
from ._graph import GraphExpansionPostprocessor
from ._pagerank import PageRankPostprocessor
from ._rerank import RerankPostprocessor
from ._stage import StagePostprocessor
from ._temporal import TemporalDecayPostprocessor

__all__ = [
    "AccessPostprocessor",
    "GraphExpansionPostprocessor",
    "PageRankPostprocessor",
    "RerankPostprocessor",
    "StagePostprocessor",
    "TemporalDecayPostprocessor",
    "WeightedFusionPostprocessor",
]
