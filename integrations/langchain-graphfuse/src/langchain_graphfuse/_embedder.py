"""A LangChain ``Embeddings`` as a GraphFuse embedder."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

from graphfuse import InvalidInput
from graphfuse.validation import check_positive_int, check_vector, check_vectors

__all__ = ["LangChainEmbedder"]


class LangChainEmbedder:
    """Use any LangChain ``Embeddings`` where GraphFuse wants an :class:`~graphfuse.Embedder`.

    Calls ``aembed_documents``/``aembed_query`` (native async where the LangChain class has it).
    ``dimension`` is the vector size; when omitted it is measured once, in the constructor,
    with one ``embed_query`` call. Every returned vector is checked (count, size, finite floats).
    ``model_id`` names the LangChain class and its model (``model`` or ``model_name``), so a
    store records which embeddings its vectors came from.
    """

    __slots__ = ("_dimension", "_embeddings")

    def __init__(self, embeddings: Embeddings, *, dimension: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise InvalidInput(f"embeddings must be a langchain_core Embeddings, got {type(embeddings).__name__}")
        self._embeddings = embeddings
        if dimension is None:
            dimension = len(embeddings.embed_query("dimension probe"))
        self._dimension = check_positive_int(dimension, "dimension")

    @property
    def dimension(self) -> int:
        """The size of every vector."""
        return self._dimension

    @property
    def model_id(self) -> str:
        """``module.Class`` of the LangChain embeddings, with ``/model`` when it names one."""
        cls = type(self._embeddings)
        model = next(
            (v for a in ("model", "model_name") if isinstance(v := getattr(self._embeddings, a, None), str) and v), ""
        )
        return f"{cls.__module__}.{cls.__qualname__}" + (f"/{model}" if model else "")

    @property
    def embeddings(self) -> Embeddings:
        """The wrapped LangChain embeddings."""
        return self._embeddings

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self._embeddings).__name__}, dimension={self._dimension})"

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        if not texts:
            return []
        vectors = await self._embeddings.aembed_documents(list(texts))
        return check_vectors(vectors, len(texts), self._dimension, type(self._embeddings).__name__)

    async def embed_query(self, text: str) -> list[float]:
        """The query vector."""
        vector = await self._embeddings.aembed_query(text)
        return check_vector(vector, self._dimension, type(self._embeddings).__name__)
