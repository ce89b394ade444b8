"""OpenAI embeddings for GraphFuse, through the official ``openai`` SDK.

Registered as the embedder ``openai`` (entry point group ``graphfuse``); or use the class
directly::

    from graphfuse_openai import OpenAIEmbedder
"""

from ._embedder import OpenAIEmbedder

__all__ = ["OpenAIEmbedder"]
