"""The Voyage AI embedder (``/v1/embeddings``)."""

from __future__ import annotations

from voyageai.client_async import AsyncClient

from graphfuse import InvalidInput
from graphfuse.providers import RemoteEmbedder
from graphfuse.retry import RetryPolicy

from ._client import DEFAULT_RETRY, VoyageConnection

__all__ = ["VoyageEmbedder"]

# Output sizes of Voyage's embedding models: (default, the other sizes ``output_dimension`` may ask for).
_FLEXIBLE_SIZES = (256, 512, 1024, 2048)
_MODELS: dict[str, tuple[int, tuple[int, ...]]] = {
    "voyage-3": (1024, ()),
    "voyage-3-lite": (512, ()),
    "voyage-3-large": (1024, _FLEXIBLE_SIZES),
    "voyage-3.5": (1024, _FLEXIBLE_SIZES),
    "voyage-3.5-lite": (1024, _FLEXIBLE_SIZES),
    "voyage-code-3": (1024, _FLEXIBLE_SIZES),
    "voyage-finance-2": (1024, ()),
    "voyage-law-2": (1024, ()),
    "voyage-multilingual-2": (1024, ()),
    "voyage-large-2-instruct": (1024, ()),
    "voyage-large-2": (1536, ()),
    "voyage-code-2": (1536, ()),
    "voyage-2": (1024, ()),
}


def _dimension(model: str, output_dimension: int | None) -> int:
    if not isinstance(model, str):
        raise InvalidInput(f"model must be a non-empty string, got {model!r}")
    if model not in _MODELS:
        if output_dimension is None:
            raise InvalidInput(f"the dimension of Voyage AI model {model!r} is not known: pass output_dimension=")
        return output_dimension
    default, allowed = _MODELS[model]
    if output_dimension is None or output_dimension == default:
        return default
    if output_dimension not in allowed:
        sizes = f"one of {allowed}" if allowed else f"only {default}"
        raise InvalidInput(f"Voyage AI model {model!r} supports output_dimension {sizes}, got {output_dimension!r}")
    return output_dimension


class VoyageEmbedder(RemoteEmbedder):
    """Embeds text with Voyage AI's embeddings API through the official ``voyageai`` SDK.

    Documents are embedded with ``input_type="document"`` and queries with ``"query"``, in
    requests of at most ``batch_size`` texts (Voyage accepts up to 1000 per request, within a
    per-model token budget: lower it for long texts), one request after another.

    - ``output_dimension``: the vector size to ask for (256, 512, 1024 or 2048 on the flexible
      models, e.g. ``voyage-3.5``); required for a model this class does not know.
    - ``api_key``: defaults to the ``VOYAGE_API_KEY`` environment variable; without one,
      :class:`~graphfuse.AuthenticationFailed` is raised here.
    - ``base_url``: the API root, default ``https://api.voyageai.com/v1``.
    - ``timeout``: seconds per HTTP request, capped by the caller's :func:`graphfuse.deadline`.
    - ``retry``: the :class:`~graphfuse.retry.RetryPolicy` for 429, 5xx and network errors.

    Errors: 401/403 -> :class:`~graphfuse.AuthenticationFailed`, 429 ->
    :class:`~graphfuse.RateLimited`, 5xx/timeouts -> :class:`~graphfuse.ConnectionFailed`,
    400/422 or a malformed response -> :class:`~graphfuse.InvalidInput`.
    """

    provider = "Voyage AI"
    max_batch = 1000

    def __init__(
        self,
        model: str = "voyage-3",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        output_dimension: int | None = None,
        batch_size: int = 128,
        timeout: float = 30.0,
        retry: RetryPolicy = DEFAULT_RETRY,
    ) -> None:
        size = _dimension(model, output_dimension)
        super().__init__(model, dimension=size, batch_size=batch_size, timeout=timeout, retry=retry)
        self._output_dimension = output_dimension
        self._connection = VoyageConnection(api_key, base_url=base_url, timeout=self.timeout, retry=self.retry)

    async def _embed_batch(self, texts: list[str], *, query: bool) -> list[list[float]]:
        async def request(client: AsyncClient) -> list[list[float]]:
            result = await client.embed(
                texts,
                model=self.model,
                input_type="query" if query else "document",
                output_dimension=self._output_dimension,
            )
            return [[float(x) for x in vector] for vector in result.embeddings]

        return await self._connection.call("embed", request)
