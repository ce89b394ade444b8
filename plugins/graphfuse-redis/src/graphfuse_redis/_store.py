"""RedisCacheStore: GraphFuse's CacheStore protocol on redis-py's asyncio client."""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as redis_errors

from graphfuse import AuthenticationFailed, ConnectionFailed, InvalidInput
from graphfuse.retry import RetryPolicy, call_with_retry

__all__ = ["RedisCacheStore"]

# ':' is the separator between namespace and key, so it may not appear in a namespace:
# otherwise namespace "a" + key "b:c" and namespace "a:b" + key "c" would share a Redis key.
_NAMESPACE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def _ttl_ms(ttl: float | None, what: str) -> int | None:
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
        raise InvalidInput(f"{what} must be a positive number of seconds, got {ttl!r}")
    return max(1, math.ceil(ttl * 1000))


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise InvalidInput(f"cache key must be a string, got {type(key).__name__}")
    return key


def _check_value(key: str, value: object) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise InvalidInput(f"cache value for {key!r} must be bytes, got {type(value).__name__}")


class RedisCacheStore:
    """A bytes cache in Redis with optional TTL, every key prefixed by ``namespace + ":"``.

    Args:
        url: a ``redis://``, ``rediss://`` or ``unix://`` URL (database and password included).
        namespace: key prefix; stores with different namespaces never see each other's keys.
            Letters, digits, ``_``, ``.`` and ``-`` (no ``:``).
        default_ttl: TTL in seconds used when a call passes none (``None``: keys never expire).
        socket_timeout: seconds to wait for a reply before raising ``ConnectionFailed``.
        connect_timeout: seconds to wait for a connection.
        max_connections: size of the connection pool (``None``: redis-py's default).
        retry: how connection failures are retried (default ``RetryPolicy(attempts=3)``);
            every call also stops at the caller's :func:`graphfuse.deadline`.

    The client is created once, here, and connects lazily; :meth:`close` releases it. Its
    connections belong to the event loop that first used them, so share one store within one
    event loop (GraphFuse's synchronous entry points all run on a single private loop).
    Connection problems raise :class:`~graphfuse.ConnectionFailed`; refused credentials
    raise :class:`~graphfuse.AuthenticationFailed`.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        namespace: str = "graphfuse",
        default_ttl: float | None = None,
        socket_timeout: float = 5.0,
        connect_timeout: float = 5.0,
        max_connections: int | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise InvalidInput(f"redis url must start with redis://, rediss:// or unix://, got {url!r}")
        if not isinstance(namespace, str) or not _NAMESPACE.match(namespace):
            raise InvalidInput(f"redis namespace {namespace!r} is not valid: 1-64 letters, digits, '_', '.' or '-'")
        self._default_ttl_ms = _ttl_ms(default_ttl, "default_ttl")
        for name, value in (("socket_timeout", socket_timeout), ("connect_timeout", connect_timeout)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InvalidInput(f"{name} must be a positive number of seconds, got {value!r}")
        self._retry = retry if retry is not None else RetryPolicy(attempts=3, initial=0.1, maximum=2.0, jitter=0.1)
        if not isinstance(self._retry, RetryPolicy):
            raise InvalidInput(f"retry must be a graphfuse.retry.RetryPolicy, got {type(retry).__name__}")
        self._namespace = namespace
        self._prefix = namespace + ":"
        options: dict[str, Any] = {
            "socket_timeout": float(socket_timeout),
            "socket_connect_timeout": float(connect_timeout),
            "decode_responses": False,
        }
        if max_connections is not None:
            options["max_connections"] = max_connections
        try:
            self._client: aioredis.Redis = aioredis.Redis.from_url(url, **options)
        except ValueError as exc:
            raise InvalidInput(f"redis url {url!r} is not valid: {exc}") from exc
        self._closed = False

    @property
    def namespace(self) -> str:
        """The key prefix (without the ``:`` separator)."""
        return self._namespace

    def _key(self, key: object) -> str:
        return self._prefix + _check_key(key)

    def _ttl(self, ttl: float | None) -> int | None:
        return self._default_ttl_ms if ttl is None else _ttl_ms(ttl, "ttl")

    async def _call(self, what: str, start: Callable[[], Awaitable[Any]]) -> Any:
        if self._closed:
            raise ConnectionFailed("the redis cache store is closed")
        return await call_with_retry(lambda: self._once(what, start), self._retry, describe=f"redis {what}")

    async def _once(self, what: str, start: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await start()
        except redis_errors.AuthenticationError as exc:
            raise AuthenticationFailed(f"redis refused the credentials ({what}): {exc}") from exc
        except redis_errors.ResponseError as exc:
            message = str(exc)
            if message.startswith(("NOAUTH", "WRONGPASS", "NOPERM")):
                raise AuthenticationFailed(f"redis refused the credentials ({what}): {message}") from exc
            raise ConnectionFailed(f"redis answered {what} with an error: {message}") from exc
        except (redis_errors.RedisError, OSError) as exc:
            raise ConnectionFailed(f"redis {what} failed: {type(exc).__name__}: {exc}") from exc

    async def get(self, key: str) -> bytes | None:
        """The value stored under ``key``, or ``None`` (missing or expired)."""
        full = self._key(key)
        value: bytes | None = await self._call("GET", lambda: self._client.get(full))
        return value

    async def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        """One value (or ``None``) per key, in order, with a single ``MGET``."""
        full = [self._key(k) for k in keys]
        if not full:
            return []
        values: list[bytes | None] = await self._call("MGET", lambda: self._client.mget(full))
        return values

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        """Store ``value`` under ``key``; ``ttl`` in seconds (else ``default_ttl``)."""
        full = self._key(key)
        data = _check_value(key, value)
        px = self._ttl(ttl)
        await self._call("SET", lambda: self._client.set(full, data, px=px))

    async def set_many(self, items: Mapping[str, bytes], *, ttl: float | None = None) -> None:
        """Store every item in one MULTI/EXEC transaction (all or nothing); same TTL for all."""
        px = self._ttl(ttl)
        checked = {self._key(k): _check_value(k, v) for k, v in items.items()}
        if not checked:
            return

        async def transaction() -> Any:
            # A new pipeline per attempt: redis-py empties a pipeline when it executes.
            pipe = self._client.pipeline(transaction=True)
            for full, data in checked.items():
                pipe.set(full, data, px=px)
            return await pipe.execute()

        await self._call("SET pipeline", transaction)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; ``True`` when it existed."""
        full = self._key(key)
        removed: int = await self._call("DEL", lambda: self._client.delete(full))
        return removed > 0

    async def close(self) -> None:
        """Close the client and its connection pool (idempotent)."""
        if self._closed:
            return
        self._closed = True
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"RedisCacheStore(namespace={self._namespace!r})"
