"""OpenAI embeddings and chat completions for GraphFuse, through the official ``openai`` SDK.

Registered as the embedder ``openai`` and the generator ``openai`` (entry point group
``graphfuse``); or use the classes directly::

    from graphfuse_openai import OpenAIEmbedder, OpenAIGenerator
"""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._embedder import OpenAIEmbedder
    from ._generator import OpenAIGenerator

__all__ = ["OpenAIEmbedder", "OpenAIGenerator"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_openai._plugin`` imports this package, and must not pay for importing ``openai``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"OpenAIEmbedder": "._embedder", "OpenAIGenerator": "._generator"})
