"""GraphFuse node postprocessors for LlamaIndex.

Signal postprocessors (temporal decay, PageRank, access, graph expansion, rerank, any
registered stage) add GraphFuse signals to nodes under the metadata key
``"graphfuse_signals"`` (kept out of embedding and LLM text),
:class:`WeightedFusionPostprocessor` turns them into the final score and order
(:class:`SignalChainPostprocessor` runs signal postprocessors and the fusion as one step), and
:class:`ContextPostprocessor` packs the nodes into a token budget; each has a native async path.
Guide: ``docs/integrations/llama-index.md``.
"""

from ._access import AccessPostprocessor
from ._chain import SignalChainPostprocessor
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
    "SignalChainPostprocessor",
    "StagePostprocessor",
    "TemporalDecayPostprocessor",
    "WeightedFusionPostprocessor",
]
