"""GraphFuse retrievers for LlamaIndex, and adapters that let LlamaIndex components serve GraphFuse.

:class:`GraphFuseRetriever` serves a GraphFuse pipeline, :class:`GraphExpansionRetriever` and
:class:`FusionRetriever` wrap LlamaIndex retrievers, adapters carry embeddings, vector stores
and LLMs both ways, and :mod:`llama_index.retrievers.graphfuse.nodes` is the LlamaIndex side of
GraphFuse's records layer. Signals and contributions travel under :data:`SIGNALS_KEY` and
:data:`CONTRIBUTIONS_KEY`, kept out of embedding, LLM text and the node hash. Guide:
``docs/integrations/llama-index.md``.
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
