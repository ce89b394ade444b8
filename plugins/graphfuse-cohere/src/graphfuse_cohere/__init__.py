"""Cohere embeddings and reranking for GraphFuse, through the official ``cohere`` SDK.

Registered as the embedder ``cohere`` and the reranker ``cohere`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_cohere import CohereEmbedder, CohereReranker
"""

from ._embedder import CohereEmbedder
from ._reranker import CohereReranker

__all__ = ["CohereEmbedder", "CohereReranker"]
