"""Cohere embeddings and reranking for GraphFuse, through the official ``cohere`` SDK.

Registered as the embedder ``cohere`` and the reranker ``cohere`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_cohere import CohereEmbedder, CohereReranker
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._embedder import CohereEmbedder
    from ._reranker import CohereReranker

__all__ = ["CohereEmbedder", "CohereReranker"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_cohere._plugin`` imports this package, and must not pay for importing ``cohere``.
_SOURCES = {"CohereEmbedder": "._embedder", "CohereReranker": "._reranker"}


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
