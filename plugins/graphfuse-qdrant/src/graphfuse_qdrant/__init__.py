"""A GraphFuse vector store on Qdrant: a server by URL, or qdrant-client's embedded local mode."""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._filters import to_qdrant_filter
    from ._store import QdrantVectorStore

__all__ = ["QdrantVectorStore", "to_qdrant_filter"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_qdrant._plugin`` imports this package, and must not pay for importing ``qdrant_client``.
_SOURCES = {"QdrantVectorStore": "._store", "to_qdrant_filter": "._filters"}


def _import_public(name: str) -> object:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(source, __name__), name)
    globals()[name] = value  # later lookups find it without coming back here
    return value


def __dir__() -> list[str]:
    return list(__all__)


if not TYPE_CHECKING:
    # Hidden from type checkers: a visible module __getattr__ would make them accept any name.
    __getattr__ = _import_public
