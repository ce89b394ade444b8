"""CachingEmbedder: embeddings cached in any CacheStore, only misses sent to the model."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np

from .._core._errors import InvalidInput
from .._core._protocols import CacheStore, Embedder
from ._identity import embedder_identity
from ._texts import check_texts

__all__ = ["CachingEmbedder"]


class CachingEmbedder:
    """Wraps an embedder with a cache (``InMemoryCacheStore``, Redis, ...).

    The key is ``namespace`` (default: the inner embedder's class, model and dimension),
    the kind (``doc`` or ``query``, since asymmetric models embed them differently) and the
    SHA-256 of the text; the value is the float32 vector. On ``embed_documents`` every
    distinct miss goes to the inner embedder in one batch. ``ttl`` (seconds) is passed to
    the cache; ``None`` keeps entries until the cache evicts them.
    """

    def __init__(
        self, embedder: Embedder, cache: CacheStore, *, namespace: str | None = None, ttl: float | None = None
    ) -> None:
        if namespace is not None and (not isinstance(namespace, str) or not namespace):
            raise InvalidInput(f"namespace must be a non-empty string, got {namespace!r}")
        if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not ttl > 0):
            raise InvalidInput(f"ttl must be a positive number of seconds or None, got {ttl!r}")
        self._inner = embedder
        self._cache = cache
        self._ttl = ttl
        self.namespace = namespace or embedder_identity(embedder)

    @property
    def dimension(self) -> int:
        """The inner embedder's dimension."""
        return self._inner.dimension

    @property
    def model_id(self) -> str:
        """The namespace: vectors under it are interchangeable."""
        return self.namespace

    def _key(self, kind: str, text: str) -> str:
        return f"graphfuse:emb:{self.namespace}:{kind}:{hashlib.sha256(text.encode('utf-8')).hexdigest()}"

    def _decode(self, value: bytes | None) -> list[float] | None:
        if value is None or len(value) != 4 * self.dimension:
            return None  # missing, or written under another dimension: recompute
        return [float(x) for x in np.frombuffer(value, dtype=np.float32)]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text; cached ones from the cache, the rest in one inner call."""
        batch = check_texts(texts)
        if not batch:
            return []
        keys = [self._key("doc", t) for t in batch]
        found = [self._decode(v) for v in await self._cache.get_many(keys)]
        missing = list(dict.fromkeys(t for t, v in zip(batch, found, strict=True) if v is None))
        if missing:
            computed = await self._inner.embed_documents(missing)
            if len(computed) != len(missing):
                raise InvalidInput(
                    f"embedder {self.namespace!r} returned {len(computed)} vectors for {len(missing)} texts"
                )
            fresh = dict(zip(missing, (self._check(v) for v in computed), strict=True))
            await self._cache.set_many(
                {self._key("doc", t): np.asarray(v, dtype=np.float32).tobytes() for t, v in fresh.items()},
                ttl=self._ttl,
            )
            found = [v if v is not None else fresh[t] for t, v in zip(batch, found, strict=True)]
        return [v for v in found if v is not None]

    async def embed_query(self, text: str) -> list[float]:
        """The query vector, from the cache when present."""
        if not isinstance(text, str):
            raise InvalidInput(f"query text must be a string, got {type(text).__name__}")
        key = self._key("query", text)
        cached = self._decode(await self._cache.get(key))
        if cached is not None:
            return cached
        vector = self._check(await self._inner.embed_query(text))
        await self._cache.set(key, np.asarray(vector, dtype=np.float32).tobytes(), ttl=self._ttl)
        return vector

    def _check(self, vector: Sequence[float]) -> list[float]:
        values = [float(x) for x in vector]
        if len(values) != self.dimension or not all(math.isfinite(x) for x in values):
            raise InvalidInput(
                f"embedder {self.namespace!r} returned a vector that is not {self.dimension} finite floats"
            )
        # Round through float32 so a miss returns exactly what a later hit will.
        return [float(x) for x in np.asarray(values, dtype=np.float32)]

    def __repr__(self) -> str:
        return f"CachingEmbedder({self._inner!r}, namespace={self.namespace!r})"
