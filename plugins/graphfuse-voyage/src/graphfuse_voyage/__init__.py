"""Voyage AI embeddings and reranking for GraphFuse, through the official ``voyageai`` SDK.

Registered as the embedder ``voyage`` and the reranker ``voyage`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_voyage import VoyageEmbedder, VoyageReranker
"""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._embedder import VoyageEmbedder
    from ._reranker import VoyageReranker

__all__ = ["VoyageEmbedder", "VoyageReranker"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_voyage._plugin`` imports this package, and must not pay for importing ``voyageai``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"VoyageEmbedder": "._embedder", "VoyageReranker": "._reranker"})
