"""The vectors LlamaIndex computed, handed to GraphFuse as an embedder's answers.

LlamaIndex embeds nodes and queries with the user's ``embed_model`` before it calls a vector
store; GraphFuse's indexer and stages ask an :class:`~graphfuse.Embedder`. These two answer
with the vectors LlamaIndex passed, and with the store's own embedder (a store built by
``graphfuse index``) only for a text LlamaIndex gave no vector for.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar

from graphfuse import Embedder, InvalidInput

__all__ = ["HOST_MODEL", "NodeVectors", "QueryVectors", "given_query"]

HOST_MODEL = "llama-index embed_model"
"""The model name GraphFuse records for vectors a LlamaIndex ``embed_model`` made."""

given_query: ContextVar[tuple[str, Sequence[float]] | None] = ContextVar("graphfuse_llama_query", default=None)
"""The query text and the vector LlamaIndex computed for it, set for one ``query`` call."""


class QueryVectors:
    """An embedder whose query vector is the one LlamaIndex passed with the query (:data:`given_query`).

    ``fallback`` (the store's own embedder, when it has one) embeds what LlamaIndex gave no
    vector for; without one, such a call raises :class:`~graphfuse.InvalidInput`.
    """

    model_name = HOST_MODEL

    def __init__(self, dimension: int, fallback: Embedder | None) -> None:
        self._dimension = dimension
        self._fallback = fallback

    @property
    def dimension(self) -> int:
        """The vector size."""
        return self._dimension

    async def embed_query(self, text: str) -> list[float]:
        given = given_query.get()
        if given is not None and given[0] == text:
            return list(given[1])
        if self._fallback is not None:
            return list(await self._fallback.embed_query(text))
        raise InvalidInput(
            "GraphFuseVectorStore got no query embedding: it searches with the vector LlamaIndex computes "
            "with your embed_model (VectorStoreIndex's retriever passes it as VectorStoreQuery.query_embedding)"
        )

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self._fallback is not None:
            return [list(v) for v in await self._fallback.embed_documents(texts)]
        raise InvalidInput(
            "GraphFuseVectorStore embeds no text itself: the vectors are the ones LlamaIndex computed with your "
            "embed_model"
        )


class NodeVectors:
    """An embedder answering the indexer with the nodes' own embeddings, by the text indexed.

    ``given`` maps a text to the vector LlamaIndex computed for it (new nodes); ``stored`` maps
    a text to the ids whose stored vectors it reuses (nodes indexed before, re-read when their
    relations change), read through ``fetch``. A text in neither raises
    :class:`~graphfuse.InvalidInput`.
    """

    model_name = HOST_MODEL

    def __init__(
        self,
        dimension: int,
        given: Mapping[str, Sequence[float]],
        stored: Mapping[str, str],
        fetch: Callable[[Sequence[str]], Awaitable[Mapping[str, Sequence[float]]]] | None,
    ) -> None:
        self._dimension = dimension
        self._given = given
        self._stored = stored
        self._fetch = fetch

    @property
    def dimension(self) -> int:
        """The vector size."""
        return self._dimension

    async def embed_query(self, text: str) -> list[float]:
        raise InvalidInput("GraphFuseVectorStore's indexing embedder embeds no query")

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        wanted = [self._stored[t] for t in texts if t not in self._given and t in self._stored]
        found: Mapping[str, Sequence[float]] = {}
        if wanted and self._fetch is not None:
            found = await self._fetch(wanted)
        out: list[list[float]] = []
        for text in texts:
            vector = self._given.get(text)
            if vector is None and text in self._stored:
                vector = found.get(self._stored[text])
            if vector is None:
                raise InvalidInput(
                    f"GraphFuseVectorStore has no embedding for the node text {text[:60]!r}: add nodes with the "
                    "embeddings LlamaIndex computed (VectorStoreIndex does)"
                )
            out.append(list(vector))
        return out
