"""A GraphFuse vector store on Qdrant: a server by URL, or qdrant-client's embedded local mode."""

from ._filters import to_qdrant_filter
from ._store import QdrantVectorStore

__all__ = ["QdrantVectorStore", "to_qdrant_filter"]
