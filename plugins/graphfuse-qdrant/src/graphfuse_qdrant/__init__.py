"""A GraphFuse vector store on Qdrant: a server by URL, or qdrant-client's embedded local mode."""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._filters import to_qdrant_filter
    from ._store import QdrantVectorStore

__all__ = ["QdrantVectorStore", "to_qdrant_filter"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_qdrant._plugin`` imports this package, and must not pay for importing ``qdrant_client``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"QdrantVectorStore": "._store", "to_qdrant_filter": "._filters"})
