"""Built-in embedders.

- :class:`LocalEmbedder`: all-MiniLM-L6-v2 on this machine (extra ``graphfuse[local]``).
- :class:`HashingEmbedder`: deterministic feature hashing, a test utility with no model.
- :class:`CachingEmbedder`: wraps any embedder with any :class:`~graphfuse.CacheStore`.
"""

from ._caching import CachingEmbedder
from ._hashing import HashingEmbedder
from ._local import LocalEmbedder

__all__ = ["CachingEmbedder", "HashingEmbedder", "LocalEmbedder"]
