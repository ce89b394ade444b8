"""QdrantVectorStore: GraphFuse's VectorStore protocol on qdrant-client."""

from __future__ import annotations

import asyncio
import json
import math
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from qdrant_client import AsyncQdrantClient, QdrantClient, models
from qdrant_client.common.client_exceptions import ResourceExhaustedResponse
from qdrant_client.http.exceptions import UnexpectedResponse

from graphfuse import (
    AuthenticationFailed,
    ConnectionFailed,
    GraphFuseError,
    InvalidInput,
    MetadataFilter,
    NotFound,
    RateLimited,
    StoreCorrupted,
    VectorHit,
    VectorRecord,
)
from graphfuse.retry import RetryPolicy, call_with_retry, error_for_status

from ._filters import EXACT_INT, to_qdrant_filter

__all__ = ["ID_KEY", "QdrantVectorStore", "point_id"]

RESERVED_PREFIX = "_graphfuse_"
"""Payload keys starting with this belong to graphfuse-qdrant (metadata may not use them)."""
ID_KEY = "_graphfuse_id"
"""The payload key holding the original GraphFuse id."""
KEYS_KEY = "_graphfuse_keys"
"""The payload key listing every metadata key (what ``$exists`` reads)."""
METADATA_KEY = "_graphfuse_metadata"
"""The payload key holding the whole metadata as JSON."""

# Fixed forever: changing it would orphan every point already written.
_ID_NAMESPACE = uuid.UUID("6f1c2f4e-4b7a-5d0e-9a53-5f1d0c6a9e11")


def point_id(doc_id: str) -> str:
    """The Qdrant point id (a UUID string) for a GraphFuse id: ``uuid5`` of a fixed namespace."""
    return str(uuid.uuid5(_ID_NAMESPACE, doc_id))


def translate_error(exc: BaseException, what: str) -> GraphFuseError:
    """Map a qdrant-client (HTTP or gRPC) exception to the GraphFuse hierarchy."""
    if isinstance(exc, GraphFuseError):
        return exc
    if isinstance(exc, ResourceExhaustedResponse):
        return RateLimited(f"qdrant {what}: rate limited: {exc}", retry_after=float(exc.retry_after_s))
    if isinstance(exc, UnexpectedResponse):
        detail = f"{exc.reason_phrase}: {exc.content[:300]!r}"
        if exc.status_code == 404:
            return NotFound(f"qdrant {what} answered HTTP 404: {detail}")
        headers = dict(exc.headers.items()) if exc.headers else None
        return error_for_status(exc.status_code, provider=f"qdrant {what}", detail=detail, headers=headers)
    try:
        import grpc
    except ImportError:  # pragma: no cover - grpcio is a qdrant-client dependency
        grpc = None
    if grpc is not None and isinstance(exc, grpc.RpcError):
        code = exc.code() if hasattr(exc, "code") else None
        detail = f"qdrant {what}: gRPC {code}: {exc}"
        if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
            return AuthenticationFailed(detail)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return RateLimited(detail)
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            return InvalidInput(detail)
        if code == grpc.StatusCode.NOT_FOUND:
            return NotFound(detail)
        return ConnectionFailed(detail)
    return ConnectionFailed(f"qdrant {what} failed: {type(exc).__name__}: {exc}")


def _check_vector(record: VectorRecord, dimension: int) -> list[float]:
    values = list(record.vector)
    if len(values) != dimension:
        raise InvalidInput(f"vector {record.id!r} has {len(values)} dimensions, the collection has {dimension}")
    out: list[float] = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise InvalidInput(f"vector {record.id!r} holds a value that is not a finite number: {v!r}")
        out.append(float(v))
    return out


def _payload(record: VectorRecord) -> dict[str, Any]:
    """The point's payload: the id, the list of metadata keys, and the scalar values.

    Only scalars are top-level payload fields, because Qdrant matches a list field when any
    element matches, where :meth:`graphfuse.MetadataFilter.matches` compares the whole value
    (a list never equals a scalar); ``$exists`` reads :data:`KEYS_KEY` (so a ``null`` value
    exists, as in the reference). The whole metadata is kept as JSON under
    :data:`METADATA_KEY`.
    """
    for key in record.metadata:
        if isinstance(key, str) and key.startswith(RESERVED_PREFIX):
            raise InvalidInput(f"vector {record.id!r}: metadata key {key!r} is reserved by graphfuse-qdrant")
    try:
        encoded = json.dumps(dict(record.metadata), allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"vector {record.id!r}: metadata must be JSON-serialisable: {exc}") from exc
    payload: dict[str, Any] = {ID_KEY: record.id, KEYS_KEY: sorted(record.metadata), METADATA_KEY: encoded}
    for key, value in record.metadata.items():
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > EXACT_INT:
            raise InvalidInput(
                f"vector {record.id!r}: metadata {key!r} = {value} is beyond +-2**53, where Qdrant's "
                "number comparisons (64-bit floats) are no longer exact; store it as a string"
            )
        if isinstance(value, (str, int, float)):
            payload[key] = value
    return payload


class QdrantVectorStore:
    """Vectors in a Qdrant collection (cosine distance), on a server or embedded.

    Modes (give at most one of ``url``, ``path``, ``location``):

    - ``url="http://host:6333"`` (with ``api_key``, ``prefer_grpc``): a Qdrant server, driven
      by ``AsyncQdrantClient``.
    - ``path="/dir"``: qdrant-client's embedded local mode, persisted in ``/dir`` (one process
      at a time may open it).
    - ``location=":memory:"`` (also the default when nothing is given): local mode in memory.

    Server calls that fail with a connection error, a 5xx or a 429 are retried with ``retry``
    (default ``RetryPolicy(attempts=3)``: every operation here is idempotent), and every call
    stops at the caller's :func:`graphfuse.deadline`.

    Local mode is a pure-Python scan that would block the event loop, so its calls run on a
    worker thread (one at a time) through the synchronous client.

    The collection is created on first write with the batch's dimension (or ``dimension``, if
    given) and cosine distance; an existing collection of another dimension raises
    :class:`~graphfuse.InvalidInput` and is never recreated. GraphFuse ids map to point ids
    with :func:`point_id` (``uuid5``); the original id is kept in the payload under
    :data:`ID_KEY`, beside the scalar metadata values that filters run against (see
    :func:`~graphfuse_qdrant.to_qdrant_filter`: the results are those of
    :meth:`graphfuse.MetadataFilter.matches`). Integers beyond +-2**53 are refused
    (``InvalidInput``): Qdrant compares numbers as 64-bit floats. Upserts are validated as a
    whole before anything is written, then sent in batches of ``batch_size``.
    """

    def __init__(
        self,
        collection: str,
        *,
        url: str | None = None,
        api_key: str | None = None,
        prefer_grpc: bool = False,
        path: str | None = None,
        location: str | None = None,
        timeout: int = 30,
        batch_size: int = 256,
        dimension: int | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not isinstance(collection, str) or not collection.strip() or "/" in collection or len(collection) > 255:
            raise InvalidInput(f"qdrant collection name {collection!r} is not valid")
        if sum(x is not None for x in (url, path, location)) > 1:
            raise InvalidInput("give at most one of url, path and location")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInput(f"batch_size must be a positive integer, got {batch_size!r}")
        if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1):
            raise InvalidInput(f"dimension must be a positive integer, got {dimension!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
            raise InvalidInput(f"timeout must be a positive whole number of seconds, got {timeout!r}")
        self._retry = retry if retry is not None else RetryPolicy(attempts=3, initial=0.2, maximum=5.0)
        if not isinstance(self._retry, RetryPolicy):
            raise InvalidInput(f"retry must be a graphfuse.retry.RetryPolicy, got {type(retry).__name__}")
        self._collection = collection
        self._batch_size = batch_size
        self._dimension = dimension
        self._ready = False
        self._lock = asyncio.Lock()
        self._closed = False
        self._local = url is None and (location is None or location == ":memory:")
        self._sync: QdrantClient | None = None
        self._async: AsyncQdrantClient | None = None
        self._thread_lock = threading.Lock()
        try:
            if self._local:
                self._sync = QdrantClient(path=path) if path is not None else QdrantClient(location=":memory:")
            else:
                self._async = AsyncQdrantClient(
                    url=url,
                    location=location,
                    api_key=api_key,
                    prefer_grpc=prefer_grpc,
                    timeout=timeout,
                    # The version check is a blocking request inside the constructor.
                    check_compatibility=False,
                )
        except RuntimeError as exc:
            # qdrant-client local mode refuses a folder another client holds.
            raise ConnectionFailed(f"qdrant local storage {path!r} is not available: {exc}") from exc
        except ValueError as exc:
            raise InvalidInput(f"qdrant client options are not valid: {exc}") from exc

    @property
    def collection(self) -> str:
        """The collection name."""
        return self._collection

    @property
    def dimension(self) -> int | None:
        """The collection's vector size, once known (after the first write or lookup)."""
        return self._dimension

    async def _call(self, what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        if self._closed:
            raise ConnectionFailed("the qdrant vector store is closed")
        return await call_with_retry(
            lambda: self._once(what, method, args, kwargs), self._retry, describe=f"qdrant {what}"
        )

    async def _once(self, what: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            if self._async is not None:
                return await getattr(self._async, method)(*args, **kwargs)
            assert self._sync is not None
            return await asyncio.to_thread(self._call_local, method, args, kwargs)
        except Exception as exc:
            raise translate_error(exc, what) from exc

    def _call_local(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with self._thread_lock:
            return getattr(self._sync, method)(*args, **kwargs)

    async def _existing_dimension(self) -> int | None:
        if not await self._call("collection lookup", "collection_exists", self._collection):
            return None
        info = await self._call("collection lookup", "get_collection", self._collection)
        vectors = info.config.params.vectors
        if not isinstance(vectors, models.VectorParams):
            raise InvalidInput(
                f"qdrant collection {self._collection!r} uses named vectors; graphfuse-qdrant needs one unnamed vector"
            )
        if vectors.distance != models.Distance.COSINE:
            raise InvalidInput(
                f"qdrant collection {self._collection!r} uses {vectors.distance} distance; "
                "graphfuse-qdrant needs Cosine"
            )
        return int(vectors.size)

    async def _ensure(self, dimension: int | None) -> bool:
        """Make sure the collection exists (creating it when ``dimension`` is given); True if it does."""
        if self._ready:
            return True
        async with self._lock:
            if self._ready:
                return True
            existing = await self._existing_dimension()
            if existing is not None:
                if self._dimension is not None and existing != self._dimension:
                    raise InvalidInput(
                        f"qdrant collection {self._collection!r} has dimension {existing}, "
                        f"expected {self._dimension}; it is not recreated (use another collection name)"
                    )
                self._dimension = existing
            else:
                size = self._dimension or dimension
                if size is None:
                    return False
                await self._call(
                    "create collection",
                    "create_collection",
                    self._collection,
                    vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE),
                )
                self._dimension = size
            self._ready = True
            return True

    async def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace ``records`` by id; validates everything before writing anything."""
        records = list(records)
        if not records:
            return
        for record in records:
            if not isinstance(record, VectorRecord):
                raise InvalidInput(f"expected VectorRecord, got {type(record).__name__}")
        dimension = self._dimension or len(list(records[0].vector))
        points = [
            models.PointStruct(id=point_id(r.id), vector=_check_vector(r, dimension), payload=_payload(r))
            for r in records
        ]
        await self._ensure(dimension)
        if self._dimension != dimension:
            raise InvalidInput(f"vectors have {dimension} dimensions, the collection has {self._dimension}")
        for start in range(0, len(points), self._batch_size):
            await self._call(
                "upsert", "upsert", self._collection, points=points[start : start + self._batch_size], wait=True
            )

    async def search(
        self,
        vector: Sequence[float],
        *,
        limit: int = 50,
        filter: MetadataFilter | Mapping[str, Any] | None = None,
        min_score: float | None = None,
    ) -> list[VectorHit]:
        """The ``limit`` most similar vectors (cosine), best first, after ``filter`` and ``min_score``."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInput(f"limit must be a non-negative integer, got {limit!r}")
        if min_score is not None and (
            isinstance(min_score, bool) or not isinstance(min_score, (int, float)) or not math.isfinite(min_score)
        ):
            raise InvalidInput(f"min_score must be a finite number, got {min_score!r}")
        query_filter = to_qdrant_filter(filter)
        query = [float(v) for v in vector]
        if not all(math.isfinite(v) for v in query):
            raise InvalidInput("query vector holds a value that is not a finite number")
        if not await self._ensure(None):
            return []
        if len(query) != self._dimension:
            raise InvalidInput(f"query vector has {len(query)} dimensions, the collection has {self._dimension}")
        if limit == 0:
            return []
        response = await self._call(
            "search",
            "query_points",
            self._collection,
            query=query,
            query_filter=query_filter,
            limit=limit,
            score_threshold=min_score,
            with_payload=[ID_KEY],
        )
        return [VectorHit(str(p.payload[ID_KEY]), float(p.score)) for p in response.points]

    async def get_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored vector of each of ``ids`` that has one: :class:`graphfuse.VectorSource`.

        Qdrant keeps cosine vectors L2-normalised, so these are the unit vectors of what was
        written. Ids without a point are left out; ``[]`` (or no collection yet) gives ``{}``.
        A bare string or a non-string id raises :class:`~graphfuse.InvalidInput`.
        """
        if isinstance(ids, (str, bytes)):
            raise InvalidInput(f"ids must be a sequence of strings, not a single {type(ids).__name__}")
        wanted = list(dict.fromkeys(ids))
        for value in wanted:
            if not isinstance(value, str):
                raise InvalidInput(f"ids must be strings, got {type(value).__name__}")
        if not wanted or not await self._ensure(None):
            return {}
        found: dict[str, list[float]] = {}
        for start in range(0, len(wanted), self._batch_size):
            batch = wanted[start : start + self._batch_size]
            point_ids: list[models.ExtendedPointId] = [point_id(i) for i in batch]
            records = await self._call(
                "get vectors", "retrieve", self._collection, ids=point_ids, with_payload=[ID_KEY], with_vectors=True
            )
            for record in records:
                doc_id = (record.payload or {}).get(ID_KEY)
                vector = record.vector
                if not isinstance(doc_id, str) or not isinstance(vector, list) or len(vector) != self._dimension:
                    raise StoreCorrupted(
                        f"qdrant collection {self._collection!r}: point {record.id} has no GraphFuse id "
                        f"or no unnamed vector of {self._dimension} dimensions"
                    )
                found[doc_id] = [float(x) for x in vector]
        return {i: found[i] for i in wanted if i in found}

    async def delete(self, ids: Sequence[str]) -> int:
        """Delete by id; returns how many of ``ids`` existed."""
        unique = list(dict.fromkeys(ids))
        if not unique or not await self._ensure(None):
            return 0
        point_ids: list[models.ExtendedPointId] = [point_id(i) for i in unique]
        existing = await self._call(
            "delete", "retrieve", self._collection, ids=point_ids, with_payload=False, with_vectors=False
        )
        if not existing:
            return 0
        await self._call(
            "delete",
            "delete",
            self._collection,
            points_selector=models.PointIdsList(points=[p.id for p in existing]),
            wait=True,
        )
        return len(existing)

    async def count(self) -> int:
        """How many vectors the collection holds (0 before it exists)."""
        if not await self._ensure(None):
            return 0
        result = await self._call("count", "count", self._collection, exact=True)
        return int(result.count)

    async def close(self) -> None:
        """Close the client (idempotent). Local mode releases its storage folder."""
        if self._closed:
            return
        self._closed = True
        if self._async is not None:
            await self._async.close()
        elif self._sync is not None:
            await asyncio.to_thread(self._sync.close)

    def __repr__(self) -> str:
        mode = "local" if self._local else "server"
        return f"QdrantVectorStore(collection={self._collection!r}, mode={mode!r})"
