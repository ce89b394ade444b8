"""GraphFuse for LangChain: graph-aware, recency-aware, popularity-aware retrieval.

- :class:`GraphFuseRetriever`: a GraphFuse pipeline as a retriever.
- :class:`GraphExpansionRetriever`: expand any retriever's documents through a graph store.
- Runnables over ``list[Document]``, composable with ``|``: :class:`TemporalDecayRunnable`,
  :class:`PageRankRunnable`, :class:`AccessPopularityRunnable`, :class:`GraphExpansionRunnable`,
  :class:`RerankRunnable`, :class:`StageRunnable` (any stage, or a registered plugin stage by
  name), then :class:`WeightedFusion`; :func:`with_query` makes any retriever's output carry its
  query. (The ``...Runnable`` suffix keeps them apart from the core stages of the same
  computation in :mod:`graphfuse.stages`.)
- :class:`GraphFuseCompressor`: stages as a document compressor.
- :class:`GraphFuseContextFormatter`: retrieved documents (or a query, retrieved) packed into an
  LLM context within a token budget, in place of ``format_docs``;
  :class:`GraphFuseContextWithSources` (``.with_sources()``) keeps the sources for citation.
- :class:`LangChainGenerator`, :class:`LangChainAnswerPipeline`: a chat model, and a retriever
  or runnable, in GraphFuse's answer comparison (:mod:`graphfuse.compare`).
- :class:`LangChainEmbedder`, :class:`LangChainVectorStore`, :class:`LangChainSearch`: LangChain
  components inside GraphFuse (an embedder, a vector store searched by vector, a store searched
  by query text as a stage).
- :class:`GraphFuseEmbeddings`: a GraphFuse embedder as a LangChain ``Embeddings``.
- :func:`source_records`: loaded LangChain documents as GraphFuse source records, for
  ``graphfuse.indexing.Indexer`` to build the graph that the retrievers walk.

Signals, the query and the fused score travel under ``Document.metadata["graphfuse"]``, the one
key GraphFuse adds (its internal ``graphfuse_*`` bookkeeping never leaves the store).
"""

from ._compare import LangChainAnswerPipeline, LangChainGenerator
from ._compressor import GraphFuseCompressor
from ._context import GraphFuseContextFormatter, GraphFuseContextWithSources
from ._documents import METADATA_KEY, RETRIEVAL_SIGNAL
from ._embedder import LangChainEmbedder
from ._embeddings import GraphFuseEmbeddings
from ._expansion import GraphExpansionRetriever
from ._fusion import FUSION_WEIGHTS, WeightedFusion
from ._ingest import source_records
from ._retriever import GraphFuseRetriever
from ._search import LangChainSearch
from ._stages import (
    AccessPopularityRunnable,
    GraphExpansionRunnable,
    PageRankRunnable,
    RerankRunnable,
    StageRunnable,
    TemporalDecayRunnable,
    with_query,
)
from ._vectorstore import LangChainVectorStore

__version__ = "0.1.0"

__all__ = [
    "FUSION_WEIGHTS",
    "METADATA_KEY",
    "RETRIEVAL_SIGNAL",
    "AccessPopularityRunnable",
    "GraphExpansionRetriever",
    "GraphExpansionRunnable",
    "GraphFuseCompressor",
    "GraphFuseContextFormatter",
    "GraphFuseContextWithSources",
    "GraphFuseEmbeddings",
    "GraphFuseRetriever",
    "LangChainAnswerPipeline",
    "LangChainEmbedder",
    "LangChainGenerator",
    "LangChainSearch",
    "LangChainVectorStore",
    "PageRankRunnable",
    "RerankRunnable",
    "StageRunnable",
    "TemporalDecayRunnable",
    "WeightedFusion",
    "__version__",
    "source_records",
    "with_query",
]
