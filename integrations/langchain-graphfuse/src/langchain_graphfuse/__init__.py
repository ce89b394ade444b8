"""GraphFuse for LangChain: graph-aware, recency-aware, popularity-aware retrieval.

:class:`GraphFuseVectorStore` is the front door: ``GraphFuseVectorStore.from_documents(docs,
embeddings).as_retriever()`` indexes a loader's documents into a GraphFuse store and retrieves
with the ``multihop`` preset.
:class:`GraphFuseRetriever` serves a GraphFuse pipeline as a retriever; the ``...Runnable``
stages, :class:`WeightedFusion`, :class:`GraphExpansionRetriever` and
:class:`GraphFuseCompressor` add GraphFuse's signals to any retriever's documents;
:class:`GraphFuseContextFormatter` packs them into a token budget; adapters carry LangChain
components into GraphFuse and back. Signals, the query and the score travel under
``Document.metadata["graphfuse"]``, the one key GraphFuse adds. Guide:
``docs/integrations/langchain.md``.
"""

from ._chain import SignalChainRunnable
from ._compare import LangChainAnswerPipeline, LangChainGenerator
from ._compressor import GraphFuseCompressor
from ._context import GraphFuseContextFormatter, GraphFuseContextWithSources
from ._documents import METADATA_KEY, RETRIEVAL_SIGNAL
from ._embedder import LangChainEmbedder
from ._embeddings import GraphFuseEmbeddings
from ._expansion import GraphExpansionRetriever
from ._fusion import FUSION_WEIGHTS, WeightedFusion
from ._graphfuse_store import DEFAULT_PRESET, GraphFuseVectorStore
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
    "DEFAULT_PRESET",
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
    "GraphFuseVectorStore",
    "LangChainAnswerPipeline",
    "LangChainEmbedder",
    "LangChainGenerator",
    "LangChainSearch",
    "LangChainVectorStore",
    "PageRankRunnable",
    "RerankRunnable",
    "SignalChainRunnable",
    "StageRunnable",
    "TemporalDecayRunnable",
    "WeightedFusion",
    "__version__",
    "source_records",
    "with_query",
]
