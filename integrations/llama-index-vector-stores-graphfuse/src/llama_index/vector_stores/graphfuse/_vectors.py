"""The vectors LlamaIndex computed, handed to GraphFuse as an embedder's answers.

LlamaIndex embeds nodes and queries with the user's ``embed_model`` before it calls a vector
store; GraphFuse's indexer and stages ask an :class:`~graphfuse.Embedder`. These two answer
with the vectors LlamaIndex passed, and with the store's own embedder (a store built by
``graphfuse index``) only for a text LlamaIndex gave no vector for. :func:`embed_passages`
embeds the store's passages with an ``embed_model`` given to the store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar

from llama_index.core.embeddings import BaseEmbedding

from graphfuse import Embedder, InvalidInput

__all__ = ["HOST_MODEL", "NodeVectors", "QueryVectors", "embed_passages", "given_query"]

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


async def embed_passages(model: BaseEmbedding, texts: Sequence[str], dimension: int) -> dict[str, list[float]]:
    """``texts`` embedded by ``model`` (LlamaIndex's ``aget_text_embedding_batch``), by text.

    :class:`~graphfuse.InvalidInput` when a vector's size is not ``dimension`` (the size of the
    vectors the index's ``embed_model`` made for the nodes): then it is another model."""
    unique = list(dict.fromkeys(texts))
    if not unique:
        return {}
    vectors = await model.aget_text_embedding_batch(unique)
    for vector in vectors:
        if len(vector) != dimension:
            raise InvalidInput(
                f"GraphFuseVectorStore's embed_model ({type(model).__name__}) makes {len(vector)}-d vectors but the "
                f"nodes' embeddings are {dimension}-d: give the store the embed_model the index embeds with"
            )
    return {t: list(v) for t, v in zip(unique, vectors, strict=True)}


class NodeVectors:
    """An embedder answering the indexer with the nodes' own embeddings, by the text indexed.

    ``given`` maps a text to the vector LlamaIndex computed for it (new nodes); ``stored`` maps
    a text to the ids whose stored vectors it reuses (nodes indexed before, re-read when their
    relations change), read through ``fetch``. A text in neither is embedded by ``model`` (the
    ``embed_model`` given to the store), or without one raises :class:`~graphfuse.InvalidInput`.
    """

    model_name = HOST_MODEL

    def __init__(
        self,
        dimension: int,
        given: Mapping[str, Sequence[float]],
        stored: Mapping[str, str],
        fetch: Callable[[Sequence[str]], Awaitable[Mapping[str, Sequence[float]]]] | None,
        model: BaseEmbedding | None = None,
    ) -> None:
        self._dimension = dimension
        self._given = given
        self._stored = stored
        self._fetch = fetch
        self._model = model

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
        made: Mapping[str, Sequence[float]] = {}
        if self._model is not None:
            missing = [t for t in texts if t not in self._given and found.get(self._stored.get(t, "")) is None]
            made = await embed_passages(self._model, missing, self._dimension)
        out: list[list[float]] = []
        for text in texts:
            vector = self._given.get(text)
            if vector is None and text in self._stored:
                vector = found.get(self._stored[text])
            if vector is None:
                vector = made.get(text)
            if vector is None:
                raise InvalidInput(
                    f"GraphFuseVectorStore has no embedding for the node text {text[:60]!r}: add nodes with the "
                    "embeddings LlamaIndex computed (VectorStoreIndex does)"
                )
            out.append(list(vector))
        return out
