"""OpenAI embeddings for GraphFuse, through the official ``openai`` SDK.

Registered as the embedder ``openai`` (entry point group ``graphfuse``); or use the class
directly::

    from graphfuse_openai import OpenAIEmbedder
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._embedder import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_openai._plugin`` imports this package, and must not pay for importing ``openai``.
_SOURCES = {"OpenAIEmbedder": "._embedder"}


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
