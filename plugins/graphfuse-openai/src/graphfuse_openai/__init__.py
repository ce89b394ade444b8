"""OpenAI embeddings for GraphFuse, through the official ``openai`` SDK.

Registered as the embedder ``openai`` (entry point group ``graphfuse``); or use the class
directly::

    from graphfuse_openai import OpenAIEmbedder
"""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._embedder import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_openai._plugin`` imports this package, and must not pay for importing ``openai``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"OpenAIEmbedder": "._embedder"})
