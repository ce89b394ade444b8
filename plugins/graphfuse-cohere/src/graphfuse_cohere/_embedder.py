"""The Cohere embedder (``/v2/embed``)."""

from __future__ import annotations

from typing import Any

from cohere import AsyncClientV2

from graphfuse import InvalidInput
from graphfuse.providers import RemoteEmbedder
from graphfuse.retry import RetryPolicy

from ._client import DEFAULT_RETRY, CohereConnection

__all__ = ["CohereEmbedder"]

# Output sizes of Cohere's embedding models; the flexible ones take ``output_dimension``.
_FIXED = {
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
    "embed-english-v2.0": 4096,
    "embed-english-light-v2.0": 1024,
    "embed-multilingual-v2.0": 768,
}
_FLEXIBLE = {"embed-v4.0": (1536, (256, 512, 1024, 1536))}


def _dimensions(model: str, dimension: int | None) -> tuple[int, int | None]:
    """The embedding size, and the ``output_dimension`` to request (``None``: the model's own)."""
    if not isinstance(model, str):
        raise InvalidInput(f"model must be a non-empty string, got {model!r}")
    if model in _FIXED:
        if dimension is not None and dimension != _FIXED[model]:
            raise InvalidInput(f"Cohere model {model!r} returns {_FIXED[model]} dimensions, not {dimension!r}")
        return _FIXED[model], None
    if model in _FLEXIBLE:
        default, allowed = _FLEXIBLE[model]
        if dimension is None:
            return default, None
        if dimension not in allowed:
            raise InvalidInput(f"Cohere model {model!r} supports dimension in {allowed}, got {dimension!r}")
        return dimension, dimension
    if dimension is None:
        raise InvalidInput(f"the dimension of Cohere model {model!r} is not known: pass dimension=")
    return dimension, None


class CohereEmbedder(RemoteEmbedder):
    """Embeds text with Cohere's embed API through the official ``cohere`` SDK.

    Documents are embedded with ``input_type="search_document"`` and queries with
    ``"search_query"``, in requests of at most ``batch_size`` (<= 96) texts, one after another.

    - ``dimension``: for the flexible models (``embed-v4.0``), the ``output_dimension`` to ask
      for (256, 512, 1024 or 1536); for the v2/v3 models it must match the model when given;
      for a model this class does not know, it is required and declares the size.
    - ``api_key``: defaults to the ``COHERE_API_KEY`` (or ``CO_API_KEY``) environment variable;
      without one, :class:`~graphfuse.AuthenticationFailed` is raised here.
    - ``base_url``: the API root (default Cohere's, or ``CO_API_URL``).
    - ``timeout``: seconds per HTTP request, capped by the caller's :func:`graphfuse.deadline`.
    - ``retry``: the :class:`~graphfuse.retry.RetryPolicy` for 429, 5xx and network errors.

    Errors: 401/403 -> :class:`~graphfuse.AuthenticationFailed`, 429 ->
    :class:`~graphfuse.RateLimited`, 5xx/timeouts -> :class:`~graphfuse.ConnectionFailed`,
    400/422 or a malformed response -> :class:`~graphfuse.InvalidInput`.
    """

    provider = "Cohere"
    max_batch = 96

    def __init__(
        self,
        model: str = "embed-english-v3.0",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        batch_size: int = 96,
        timeout: float = 30.0,
        retry: RetryPolicy = DEFAULT_RETRY,
    ) -> None:
        size, self._output_dimension = _dimensions(model, dimension)
        super().__init__(model, dimension=size, batch_size=batch_size, timeout=timeout, retry=retry)
        self._connection = CohereConnection(api_key, base_url=base_url, timeout=self.timeout, retry=self.retry)

    async def close(self) -> None:
        """Close the HTTP client."""
        await self._connection.close()

    async def _embed_batch(self, texts: list[str], *, query: bool) -> list[list[float]]:
        # output_dimension is left out, not sent as null, when the model's own size is wanted.
        extra: dict[str, Any] = {} if self._output_dimension is None else {"output_dimension": self._output_dimension}

        async def request(client: AsyncClientV2, timeout: float) -> list[list[float]]:
            response = await client.embed(
                texts=texts,
                model=self.model,
                input_type="search_query" if query else "search_document",
                embedding_types=["float"],
                request_options={"timeout": timeout},
                **extra,
            )
            if response.embeddings.float_ is None:
                raise InvalidInput(f"Cohere returned no float embeddings (model {self.model!r})")
            return response.embeddings.float_

        return await self._connection.call("embed", request)
