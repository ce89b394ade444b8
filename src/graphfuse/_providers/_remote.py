"""Base classes for embedders and rerankers that call a remote API in batches.

They hold what every provider plugin would otherwise repeat: argument validation, splitting
inputs into batches of the provider's size, and checking each answer (one vector of the right
size per text; one score in [0, 1] per document, put back in input order). A subclass only
sends one batch.
"""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar, TypeVar

from .._core._errors import AuthenticationFailed, InvalidInput
from ._retry import RetryPolicy

__all__ = ["RemoteEmbedder", "RemoteReranker", "api_key"]

_R = TypeVar("_R", bound="_Remote")


def api_key(explicit: str | None, *variables: str, provider: str) -> str:
    """``explicit``, else the first of the environment ``variables`` that is set.

    Raises :class:`~graphfuse.AuthenticationFailed` naming the variables when there is none.
    """
    key = explicit or next((os.environ[name] for name in variables if os.environ.get(name)), None)
    if not key:
        raise AuthenticationFailed(f"no {provider} API key: pass api_key= or set {' or '.join(variables)}")
    return key


def _check_strings(values: Sequence[str], what: str) -> list[str]:
    if isinstance(values, str) or not all(isinstance(v, str) for v in values):
        raise InvalidInput(f"{what} must be a sequence of strings")
    return list(values)


class _Remote:
    provider: ClassVar[str] = "the provider"
    max_batch: ClassVar[int] = 1

    def __init__(self, model: str, *, batch_size: int, timeout: float, retry: RetryPolicy) -> None:
        if not isinstance(model, str) or not model:
            raise InvalidInput(f"model must be a non-empty string, got {model!r}")
        limit = self.max_batch
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= limit:
            raise InvalidInput(f"batch_size must be an int in 1..{limit} ({self.provider}'s limit), got {batch_size!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < math.inf:
            raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
        if not isinstance(retry, RetryPolicy):
            raise InvalidInput(f"retry must be a graphfuse.retry.RetryPolicy, got {retry!r}")
        self._model = model
        self._batch_size = batch_size
        self._timeout = float(timeout)
        self._retry = retry

    @property
    def model(self) -> str:
        """The provider's model name."""
        return self._model

    @property
    def batch_size(self) -> int:
        """The most inputs sent in one request."""
        return self._batch_size

    @property
    def timeout(self) -> float:
        """Seconds allowed per request (the caller's deadline may cut it shorter)."""
        return self._timeout

    @property
    def retry(self) -> RetryPolicy:
        """The policy for retryable failures (429, 5xx, network errors)."""
        return self._retry

    def _batches(self, items: list[str]) -> list[list[str]]:
        return [items[i : i + self._batch_size] for i in range(0, len(items), self._batch_size)]

    async def close(self) -> None:
        """Release the HTTP client, if the subclass keeps one."""

    async def __aenter__(self: _R) -> _R:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


class RemoteEmbedder(_Remote, ABC):
    """Base of an :class:`~graphfuse.Embedder` backed by a remote API.

    Set the class attributes ``provider`` (its name in messages) and ``max_batch`` (the most
    texts per request) and implement :meth:`_embed_batch`. Inputs are validated and sent in
    batches of ``batch_size``, one request after another; an answer with the wrong number of
    vectors, or a vector whose length is not ``dimension``, raises
    :class:`~graphfuse.InvalidInput` naming the provider.
    """

    def __init__(self, model: str, *, dimension: int, batch_size: int, timeout: float, retry: RetryPolicy) -> None:
        super().__init__(model, batch_size=batch_size, timeout=timeout, retry=retry)
        if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:
            raise InvalidInput(f"dimension must be a positive int, got {dimension!r}")
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        """The length of every vector returned."""
        return self._dimension

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self._model!r}, dimension={self._dimension}, batch_size={self._batch_size})"
        )

    @abstractmethod
    async def _embed_batch(self, texts: list[str], *, query: bool) -> list[list[float]]:
        """Embed at most ``batch_size`` texts (queries when ``query``); vectors in input order."""

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order."""
        vectors: list[list[float]] = []
        for batch in self._batches(_check_strings(texts, "texts")):
            vectors.extend(self._checked(batch, await self._embed_batch(batch, query=False)))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """The vector of a search query."""
        if not isinstance(text, str):
            raise InvalidInput(f"text must be a string, got {type(text).__name__}")
        [vector] = self._checked([text], await self._embed_batch([text], query=True))
        return vector

    def _checked(self, batch: list[str], vectors: list[list[float]]) -> list[list[float]]:
        where = f"{self.provider} returned"
        if len(vectors) != len(batch):
            raise InvalidInput(f"{where} {len(vectors)} embeddings for {len(batch)} texts (model {self._model!r})")
        for vector in vectors:
            if len(vector) != self._dimension:
                raise InvalidInput(
                    f"{where} a {len(vector)}-dimensional embedding, expected {self._dimension} (model {self._model!r})"
                )
        return [[float(x) for x in vector] for vector in vectors]


class RemoteReranker(_Remote, ABC):
    """Base of a :class:`~graphfuse.Reranker` backed by a remote API.

    Set ``provider`` and ``max_batch`` (the most documents per request) and implement
    :meth:`_rerank_batch`, which returns ``(index, score)`` pairs in any order (providers
    answer best first). They are put back in input order; an answer that does not score every
    document exactly once, or a score outside [0, 1], raises :class:`~graphfuse.InvalidInput`.
    Batches are scored separately, so use it for providers whose scores are absolute.
    """

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self._model!r}, batch_size={self._batch_size})"

    @abstractmethod
    async def _rerank_batch(self, query: str, documents: list[str]) -> Sequence[tuple[int, float]]:
        """Score at most ``batch_size`` documents: ``(index in documents, score)`` pairs."""

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score in [0, 1] per document, in input order."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        scores: list[float] = []
        for batch in self._batches(_check_strings(documents, "documents")):
            scores.extend(self._in_order(len(batch), await self._rerank_batch(query, batch)))
        return scores

    def _in_order(self, count: int, results: Sequence[tuple[int, float]]) -> list[float]:
        scores: list[float | None] = [None] * count
        for index, score in results:
            if not 0 <= index < count or scores[index] is not None:
                raise InvalidInput(f"{self.provider} returned a bad or repeated index {index} for {count} documents")
            if not (math.isfinite(score) and 0.0 <= score <= 1.0):
                raise InvalidInput(f"{self.provider} returned the score {score!r}, outside [0, 1]")
            scores[index] = float(score)
        if len(results) != count:
            raise InvalidInput(f"{self.provider} returned {len(results)} scores for {count} documents")
        return [s for s in scores if s is not None]
