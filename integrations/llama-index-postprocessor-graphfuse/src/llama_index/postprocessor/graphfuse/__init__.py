"""GraphFuse node postprocessors for LlamaIndex.

Signal postprocessors add one GraphFuse signal to each node and keep the order and scores:
:class:`TemporalDecayPostprocessor`, :class:`PageRankPostprocessor`,
:class:`AccessPostprocessor`; :class:`GraphExpansionPostprocessor` adds related documents;
:class:`RerankPostprocessor` reranks with any GraphFuse reranker;
:class:`WeightedFusionPostprocessor` turns the signals into the final score and order;
:class:`StagePostprocessor` runs any registered GraphFuse stage (plugins included);
:class:`ContextPostprocessor` packs the nodes into a token budget with :mod:`graphfuse.context`
(passages, evidence or a serialized subgraph), sources kept for citation.

Signals travel under the node metadata key ``"graphfuse_signals"`` (excluded from embedding
and LLM text). Every postprocessor has a native async path (``apostprocess_nodes``).
"""

from ._access import AccessPostprocessor
from ._context import CONTEXT_KEY, ContextPostprocessor, ContextSourceNode
from ._fusion import WeightedFusionPostprocessor
from ._graph import GraphExpansionPostprocessor
from ._pagerank import PageRankPostprocessor
from ._rerank import RerankPostprocessor
from ._stage import StagePostprocessor
from ._temporal import TemporalDecayPostprocessor

__all__ = [
    "CONTEXT_KEY",
    "AccessPostprocessor",
    "ContextPostprocessor",
    "ContextSourceNode",
    "GraphExpansionPostprocessor",
    "PageRankPostprocessor",
    "RerankPostprocessor",
    "StagePostprocessor",
    "TemporalDecayPostprocessor",
    "WeightedFusionPostprocessor",
]
