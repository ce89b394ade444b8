"""Cohere embeddings and reranking for GraphFuse, through the official ``cohere`` SDK.

Registered as the embedder ``cohere`` and the reranker ``cohere`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_cohere import CohereEmbedder, CohereReranker
"""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._embedder import CohereEmbedder
    from ._reranker import CohereReranker

__all__ = ["CohereEmbedder", "CohereReranker"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_cohere._plugin`` imports this package, and must not pay for importing ``cohere``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"CohereEmbedder": "._embedder", "CohereReranker": "._reranker"})
