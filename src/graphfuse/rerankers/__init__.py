"""Built-in rerankers.

- :class:`EmbeddingReranker`: bi-encoder rerank with any embedder (the embedded default).
- :class:`CrossEncoderReranker`: a sentence-transformers cross-encoder from a local path.
"""

from ._cross_encoder import CrossEncoderReranker
from ._embedding import EmbeddingReranker

__all__ = ["CrossEncoderReranker", "EmbeddingReranker"]
