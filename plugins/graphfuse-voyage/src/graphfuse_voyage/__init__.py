"""Voyage AI embeddings and reranking for GraphFuse, through the official ``voyageai`` SDK.

Registered as the embedder ``voyage`` and the reranker ``voyage`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_voyage import VoyageEmbedder, VoyageReranker
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._embedder import VoyageEmbedder
    from ._reranker import VoyageReranker

__all__ = ["VoyageEmbedder", "VoyageReranker"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_voyage._plugin`` imports this package, and must not pay for importing ``voyageai``.
_SOURCES = {"VoyageEmbedder": "._embedder", "VoyageReranker": "._reranker"}


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
