"""Voyage AI embeddings and reranking for GraphFuse, through the official ``voyageai`` SDK.

Registered as the embedder ``voyage`` and the reranker ``voyage`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_voyage import VoyageEmbedder, VoyageReranker
"""

from ._embedder import VoyageEmbedder
from ._reranker import VoyageReranker

__all__ = ["VoyageEmbedder", "VoyageReranker"]
