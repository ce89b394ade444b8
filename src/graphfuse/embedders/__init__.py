"""Built-in embedders, and what other components share with them.

- :class:`LocalEmbedder`: all-MiniLM-L6-v2 on this machine (extra ``graphfuse[local]``).
- :class:`HashingEmbedder`: deterministic feature hashing, a test utility with no model.
- :class:`CachingEmbedder`: wraps any embedder with any :class:`~graphfuse.CacheStore`.
- :func:`embedder_identity` (which vectors are comparable), :func:`check_texts` (the input check
  of every embedder and reranker) and :func:`memo_for` (a :class:`VectorMemo` of the vectors one
  embedder returned, shared by context assembly and the bi-encoder reranker).
"""

from ._caching import CachingEmbedder
from ._hashing import HashingEmbedder
from ._identity import embedder_identity
from ._local import LocalEmbedder
from ._memo import VectorMemo, memo_for
from ._texts import check_texts

__all__ = [
    "CachingEmbedder",
    "HashingEmbedder",
    "LocalEmbedder",
    "VectorMemo",
    "check_texts",
    "embedder_identity",
    "memo_for",
]
