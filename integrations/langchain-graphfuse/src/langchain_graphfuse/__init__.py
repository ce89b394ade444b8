"""GraphFuse for LangChain: graph-aware, recency-aware, popularity-aware retrieval.

- :class:`GraphFuseRetriever`: a GraphFuse pipeline as a retriever.
- :class:`GraphExpansionRetriever`: expand any retriever's documents through a graph store.
- Runnables over ``list[Document]``, composable with ``|``: :class:`TemporalDecay`,
  :class:`PageRank`, :class:`AccessPopularity`, :class:`GraphExpansion`, :class:`Rerank`,
  :class:`StageRunnable` (any stage, or a registered plugin stage by name), then
  :class:`WeightedFusion`; :func:`with_query` makes any retriever's output carry its query.
- :class:`GraphFuseCompressor`: stages as a document compressor.
- :class:`LangChainGenerator`, :class:`LangChainAnswerPipeline`: a chat model, and a retriever
  or runnable, in GraphFuse's answer comparison (:mod:`graphfuse.compare`).
- :class:`LangChainEmbedder`, :class:`LangChainVectorStore`, :class:`LangChainSearch`: LangChain
  components inside GraphFuse (an embedder, a vector store searched by vector, a store searched
  by query text as a stage).

Signals, the query and the fused score travel under ``Document.metadata["graphfuse"]``.
"""

from ._compare import LangChainAnswerPipeline, LangChainGenerator
from ._compressor import GraphFuseCompressor
from ._documents import METADATA_KEY, RETRIEVAL_SIGNAL
from ._embedder import LangChainEmbedder
from ._expansion import GraphExpansionRetriever
from ._fusion import FUSION_WEIGHTS, WeightedFusion
from ._retriever import GraphFuseRetriever
from ._search import LangChainSearch
from ._stages import AccessPopularity, GraphExpansion, PageRank, Rerank, StageRunnable, TemporalDecay, with_query
from ._vectorstore import LangChainVectorStore

__version__ = "0.1.0"

__all__ = [
    "FUSION_WEIGHTS",
    "METADATA_KEY",
    "RETRIEVAL_SIGNAL",
    "AccessPopularity",
    "GraphExpansion",
    "GraphExpansionRetriever",
    "GraphFuseCompressor",
    "GraphFuseRetriever",
    "LangChainAnswerPipeline",
    "LangChainEmbedder",
    "LangChainGenerator",
    "LangChainSearch",
    "LangChainVectorStore",
    "PageRank",
    "Rerank",
    "StageRunnable",
    "TemporalDecay",
    "WeightedFusion",
    "__version__",
    "with_query",
]
