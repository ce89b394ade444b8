"""A GraphFuse embedder as a LangChain ``Embeddings``."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from graphfuse import Embedder, InvalidInput, run_sync

__all__ = ["GraphFuseEmbeddings"]


class GraphFuseEmbeddings(Embeddings):
    """Use any GraphFuse :class:`~graphfuse.Embedder` (``HashingEmbedder``, ``LocalEmbedder``, a
    plugin's) where LangChain wants ``Embeddings``: in a LangChain vector store, a semantic
    splitter, ``CacheBackedEmbeddings``...

    ``aembed_documents``/``aembed_query`` await the embedder on the caller's loop (native async);
    ``embed_documents``/``embed_query`` run the same coroutines through :func:`graphfuse.run_sync`,
    which also works inside a running event loop. Document texts go through
    ``embed_documents`` and queries through ``embed_query`` (query-side embedding, for models that
    embed the two differently). ``dimension`` is the embedder's.
    """

    def __init__(self, embedder: Embedder) -> None:
        for method in ("embed_documents", "embed_query"):
            if not callable(getattr(embedder, method, None)):
                raise InvalidInput(f"embedder must be a graphfuse Embedder (with {method!r}), got {embedder!r}")
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        """The wrapped GraphFuse embedder."""
        return self._embedder

    @property
    def dimension(self) -> int:
        """The size of every vector."""
        return self._embedder.dimension

    def __repr__(self) -> str:
        return f"GraphFuseEmbeddings({self._embedder!r})"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed document texts (sync)."""
        return run_sync(self.aembed_documents(texts))

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (sync)."""
        return run_sync(self.aembed_query(text))

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed document texts on the caller's loop."""
        if isinstance(texts, str):
            raise InvalidInput("texts must be a list of strings, not a string")
        if not texts:
            return []
        vectors = await self._embedder.embed_documents(list(texts))
        return [[float(x) for x in v] for v in vectors]

    async def aembed_query(self, text: str) -> list[float]:
        """Embed a query on the caller's loop."""
        return [float(x) for x in await self._embedder.embed_query(text)]
