"""GraphFuse retrievers for LlamaIndex, and adapters that let LlamaIndex components serve GraphFuse.

- :class:`GraphFuseRetriever`: a GraphFuse pipeline as a LlamaIndex retriever.
- :class:`GraphExpansionRetriever`: graph expansion around any LlamaIndex retriever.
- :class:`FusionRetriever`: weighted fusion (RRF or weighted scores) of several retrievers.
- :class:`LlamaIndexEmbedder` / :class:`LlamaIndexVectorStore`: a LlamaIndex embedding or
  vector store used as a GraphFuse ``Embedder`` / ``VectorStore``.
- :class:`GraphFuseEmbedding`: a GraphFuse ``Embedder`` used as a LlamaIndex embedding.
- :class:`LlamaIndexGenerator` / :class:`LlamaIndexAnswerPipeline`: a LlamaIndex ``LLM``, and a
  retriever or query engine, in GraphFuse's answer comparison (:mod:`graphfuse.compare`).
- :func:`source_records`: LlamaIndex documents as GraphFuse source records, for
  ``graphfuse.indexing.Indexer`` to build the graph that the retrievers walk.
- :mod:`llama_index.retrievers.graphfuse.nodes`: LlamaIndex nodes on GraphFuse's records layer
  (:mod:`graphfuse.records`), shared with ``llama-index-postprocessor-graphfuse`` and open to any
  LlamaIndex component built on GraphFuse.

GraphFuse signals travel on nodes under the metadata key :data:`SIGNALS_KEY`
(``"graphfuse_signals"``) and a retriever's score contributions under
:data:`CONTRIBUTIONS_KEY` (``"graphfuse_contributions"``); both are excluded from embedding and
LLM text and from the node hash. No other GraphFuse key reaches a node: the indexer's internal
``graphfuse_*`` bookkeeping stays in the store. Nodes GraphFuse builds are
:class:`GraphFuseNode` objects (``TextNode`` with ``ref_doc_id`` set to the parent document).
"""

from ._compare import LlamaIndexAnswerPipeline, LlamaIndexGenerator
from ._embedding import GraphFuseEmbedding, LlamaIndexEmbedder
from ._expansion_retriever import GraphExpansionRetriever
from ._fusion import FusionRetriever
from ._ingest import source_records
from ._retriever import GraphFuseRetriever
from ._vector_store import LlamaIndexVectorStore, to_metadata_filters
from .nodes import CONTRIBUTIONS_KEY, SIGNALS_KEY, GraphFuseNode

__all__ = [
    "CONTRIBUTIONS_KEY",
    "SIGNALS_KEY",
    "FusionRetriever",
    "GraphExpansionRetriever",
    "GraphFuseEmbedding",
    "GraphFuseNode",
    "GraphFuseRetriever",
    "LlamaIndexAnswerPipeline",
    "LlamaIndexEmbedder",
    "LlamaIndexGenerator",
    "LlamaIndexVectorStore",
    "source_records",
    "to_metadata_filters",
]
