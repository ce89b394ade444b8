"""HashingEmbedder: deterministic feature-hashing vectors, for tests and offline demos."""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Sequence

from .._core._errors import InvalidInput
from ._texts import check_texts

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+", re.UNICODE)


@functools.lru_cache(maxsize=200_000)
def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    # blake2b, not hash(): Python's string hash is salted per process.
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dimension, 1.0 if (value >> 63) & 1 else -1.0


class HashingEmbedder:
    """A test utility, not a semantic model: texts sharing words and spellings get similar vectors.

    Each text becomes signed feature-hashed counts of its lower-cased words, word bigrams and
    character trigrams, L2-normalised. Deterministic across processes and machines, needs no
    model and no network. Queries and documents embed the same way.
    """

    model_id = "hashing-v1"

    def __init__(self, dimension: int = 384) -> None:
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 8:
            raise InvalidInput(f"dimension must be an integer of at least 8, got {dimension!r}")
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        """The vector length."""
        return self._dimension

    def embed(self, text: str) -> list[float]:
        """The vector of one text (synchronous; the async methods call this)."""
        if not isinstance(text, str):
            raise InvalidInput(f"texts must be strings, got {type(text).__name__}")
        words = _WORD.findall(text.lower())
        features = [f"w:{w}" for w in words]
        features += [f"b:{a} {b}" for a, b in itertools.pairwise(words)]
        for w in words:
            padded = f"^{w}$"
            features += [f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2)]
        if not features:
            features = ["empty:"]
        vector = [0.0] * self._dimension
        for feature in features:
            index, sign = _bucket(feature, self._dimension)
            vector[index] += sign
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0.0:  # every feature cancelled out: fall back to a fixed direction
            vector[_bucket("empty:", self._dimension)[0]] = 1.0
            norm = 1.0
        return [v / norm for v in vector]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return [self.embed(t) for t in check_texts(texts)]

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a query (same as a document's)."""
        return self.embed(text)

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self._dimension})"
