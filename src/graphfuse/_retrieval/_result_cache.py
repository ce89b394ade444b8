"""ResultCache: a pipeline's results kept in any CacheStore, invalidated by every write to its stores.

The key is everything that decides a result list: the cache's namespace, the pipeline's identity,
the stores' generations (:class:`~graphfuse.Versioned`), the query text, its filter (a tenant is
a filter condition in GraphFuse), the per-call stage options, ``top_k``, ``min_score`` and the
passage shaping. A cache is an optimisation, so it is the one place where a failure does not
stop the query: a store that does not answer is a miss with a warning (and is left alone for
``cooldown`` seconds), a damaged or foreign entry is a miss. See docs/stages.md, "Result cache".
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from types import MappingProxyType
from typing import Any

from .._core._capabilities import Versioned
from .._core._errors import DeadlineExceeded, InvalidInput
from .._core._observability import RESULT_CACHE_ERRORS, RESULT_CACHE_HITS, RESULT_CACHE_MISSES, logger, tracer
from .._core._protocols import CacheStore
from .._core._types import Document, Query, Result

__all__ = ["DEFAULT_RESULT_TTL", "ResultCache"]

DEFAULT_RESULT_TTL = 300.0
"""Seconds a cached result list lives unless told otherwise (the design's search cache: 300 s)."""

_FORMAT = "graphfuse.results"
_VERSION = 1
_KEY_PREFIX = f"graphfuse:results:v{_VERSION}:"
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")
_SCALARS = (str, int, float, bool, type(None))


class _Uncacheable(Exception):
    """This request or its results cannot be cached exactly (logged at debug level, counted)."""


def _positive(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise InvalidInput(f"{what} must be a positive number of seconds, got {value!r}")
    return float(value)


def _stable(value: Any) -> Any:
    """A JSON form of a key part; a value whose repr names a memory address cannot be part of a key."""
    if isinstance(value, _SCALARS):
        if isinstance(value, float) and not math.isfinite(value):
            return repr(value)
        return value
    if isinstance(value, Mapping):
        return {str(k): _stable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_stable(v) for v in value]
    text = repr(value)
    if _ADDRESS.search(text):
        raise _Uncacheable(f"{type(value).__name__} has no stable repr")
    return f"{type(value).__qualname__}:{text}"


def _exact(value: Any, where: str) -> None:
    """Raise _Uncacheable unless JSON gives ``value`` back exactly (no tuples, sets or objects)."""
    kind = type(value)
    if kind is float:
        if not math.isfinite(value):
            raise _Uncacheable(f"{where}: non-finite number")
    elif kind is dict or kind is MappingProxyType:
        for k, v in value.items():
            if type(k) is not str:
                raise _Uncacheable(f"{where}: key {k!r} is not a string")
            _exact(v, where)
    elif kind is list:
        for v in value:
            _exact(v, where)
    elif kind not in (str, int, bool, type(None)):
        raise _Uncacheable(f"{where}: a {kind.__name__} does not round-trip through JSON")


def _time(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _encode(results: Sequence[Result], digest: str) -> bytes:
    rows = []
    for r in results:
        doc = r.document
        for part in (doc.metadata, r.signals, r.contributions):
            _exact(part, f"result {doc.id!r}")
        _exact(r.score, f"result {doc.id!r}")
        rows.append(
            [
                doc.id,
                doc.content,
                dict(doc.metadata),
                _time(doc.created_at),
                _time(doc.updated_at),
                r.score,
                dict(r.signals),
                dict(r.contributions),
            ]
        )
    body = {"format": _FORMAT, "version": _VERSION, "key": digest, "results": rows}
    return json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _floats(value: object) -> dict[str, float]:
    if not isinstance(value, dict):
        raise ValueError("not a mapping")
    out: dict[str, float] = {}
    for k, v in value.items():
        if not isinstance(k, str) or type(v) not in (int, float):
            raise ValueError("not a mapping of names to numbers")
        out[k] = v
    return out


def _decode(data: bytes, digest: str) -> list[Result]:
    """The results of an entry written by :func:`_encode` for ``digest``; ValueError for anything else."""
    body = json.loads(data.decode("utf-8"))
    if (
        not isinstance(body, dict)
        or body.get("format") != _FORMAT
        or body.get("version") != _VERSION
        or body.get("key") != digest
        or not isinstance(body.get("results"), list)
    ):
        raise ValueError("not a result list of this format written for this key")
    out = []
    for row in body["results"]:
        if not isinstance(row, list) or len(row) != 8:
            raise ValueError("a result row of the wrong shape")
        doc_id, content, metadata, created, updated, score, signals, contributions = row
        if not isinstance(metadata, dict) or type(score) not in (int, float):
            raise ValueError("a result row of the wrong types")
        if not all(t is None or isinstance(t, str) for t in (created, updated)):
            raise ValueError("a timestamp that is not a string")
        document = Document(
            doc_id,
            content,
            metadata,
            None if created is None else datetime.fromisoformat(created),
            None if updated is None else datetime.fromisoformat(updated),
        )
        out.append(
            Result(document, score, MappingProxyType(_floats(signals)), MappingProxyType(_floats(contributions)))
        )
    return out


class ResultCache:
    """Pipeline results cached in a :class:`~graphfuse.CacheStore` for ``ttl`` seconds.

    Attach it with :meth:`graphfuse.Pipeline.with_result_cache`; a request may skip it with
    ``aretrieve(..., cache=False)``.

    Args:
        cache: where entries live: :class:`~graphfuse.stores.InMemoryCacheStore` (in-process,
            bounded in entries) or ``graphfuse_redis.RedisCacheStore`` (shared by processes).
        stores: the stores the pipelines read (graph store, vector store). Each store's
            ``generation()`` (:class:`~graphfuse.Versioned`) is part of every key, so any write
            to any of them makes every earlier entry unreachable.
        ttl: seconds an entry lives (default 300). It also bounds how old a time-dependent
            signal (temporal decay's "now") may be.
        namespace: shared by every cache that should see the same entries (across processes,
            with Redis): give one namespace only to caches over the same stores. ``None`` (the
            default): entries are this object's alone.
        allow_unversioned: accept stores without ``generation()`` (Neo4j, Qdrant): a write then
            leaves stale entries until their TTL ends. Without it such a store is refused.
        max_entry_bytes: a result list larger than this is not stored (default 1 MiB).
        timeout: seconds a cache call may take before it counts as unavailable (default 1).
        cooldown: seconds the cache is left alone after it failed (default 30): queries then
            miss at once instead of waiting for a cache that is down.
    """

    def __init__(
        self,
        cache: CacheStore,
        stores: Sequence[object],
        *,
        ttl: float = DEFAULT_RESULT_TTL,
        namespace: str | None = None,
        allow_unversioned: bool = False,
        max_entry_bytes: int = 1 << 20,
        timeout: float = 1.0,
        cooldown: float = 30.0,
    ) -> None:
        missing = [m for m in ("get", "set") if not callable(getattr(cache, m, None))]
        if missing:
            raise InvalidInput(f"cache must be a graphfuse.CacheStore, {type(cache).__name__} has no {missing[0]}()")
        if isinstance(stores, (str, bytes)) or not isinstance(stores, Sequence):
            raise InvalidInput(f"stores must be a sequence of stores, got {type(stores).__name__}")
        if not isinstance(allow_unversioned, bool):
            raise InvalidInput(f"allow_unversioned must be a bool, got {allow_unversioned!r}")
        unversioned = [s for s in stores if not isinstance(s, Versioned)]
        if not stores and not allow_unversioned:
            raise InvalidInput(
                "a result cache needs the stores its pipelines read (their generation() invalidates it); "
                "pass allow_unversioned=True to rely on the TTL alone"
            )
        if unversioned and not allow_unversioned:
            names = ", ".join(type(s).__name__ for s in unversioned)
            raise InvalidInput(
                f"{names} cannot say when it was written to (no generation()), so cached results could outlive "
                "a write; pass allow_unversioned=True to accept that the TTL alone bounds their age"
            )
        if namespace is not None and (not isinstance(namespace, str) or not namespace.strip()):
            raise InvalidInput(f"namespace must be a non-empty string or None, got {namespace!r}")
        if isinstance(max_entry_bytes, bool) or not isinstance(max_entry_bytes, int) or max_entry_bytes < 1:
            raise InvalidInput(f"max_entry_bytes must be a positive integer, got {max_entry_bytes!r}")
        self._cache = cache
        self._versioned: tuple[Versioned, ...] = tuple(s for s in stores if isinstance(s, Versioned))
        self._ttl = _positive(ttl, "ttl")
        self._timeout = _positive(timeout, "timeout")
        self._cooldown = _positive(cooldown, "cooldown")
        self._namespace = namespace if namespace is not None else f"local-{uuid.uuid4().hex}"
        self._max_bytes = max_entry_bytes
        self._unversioned = bool(unversioned) or not stores
        self._down_until = 0.0
        self._counts = {"hits": 0, "misses": 0, "errors": 0}

    @property
    def ttl(self) -> float:
        """Seconds an entry lives."""
        return self._ttl

    @property
    def cache_store(self) -> CacheStore:
        """The cache store entries live in."""
        return self._cache

    @property
    def versioned(self) -> bool:
        """True when every store says when it was written to (a write invalidates the cache at once)."""
        return not self._unversioned

    @property
    def counts(self) -> dict[str, int]:
        """Hits, misses and cache store errors of this object so far (the metrics count all caches)."""
        return dict(self._counts)

    def pipeline_identity(self, name: str | None, parts: Sequence[object]) -> str:
        """The identity a pipeline's entries are filed under (called by ``Pipeline.with_result_cache``).

        Without ``name`` it is unique to this call: only that pipeline object finds its entries.
        With one it is ``name`` and a digest of ``parts`` (the reprs of the stages, the scorer and the
        passage selection), so processes building the same pipeline share entries and a changed
        configuration under the same name never reads the old one's. A part whose repr names a
        memory address (no configuration shown) is refused.
        """
        if name is None:
            return f"pipeline-{uuid.uuid4().hex}"
        if not isinstance(name, str) or not name.strip():
            raise InvalidInput(f"name must be a non-empty string or None, got {name!r}")
        shown = [p if isinstance(p, (str, bool, type(None))) else repr(p) for p in parts]
        for text in shown:
            if isinstance(text, str) and _ADDRESS.search(text):
                raise InvalidInput(
                    f"result cache name {name!r}: {text[:80]} shows no configuration (its repr is a memory "
                    "address), so a differently configured pipeline could read its entries; give that "
                    "component a __repr__ naming its settings, or attach the cache without a name"
                )
        digest = hashlib.sha256(json.dumps(shown).encode("utf-8")).hexdigest()[:16]
        return f"{name}:{digest}"

    def _key(self, identity: str, q: Query, shape: Sequence[object], versions: list[object]) -> tuple[str, str]:
        conditions = [] if q.filter is None else [[c.key, c.op, _stable(c.value)] for c in q.filter.conditions]
        parts = [
            self._namespace,
            identity,
            versions,
            q.text,
            sorted(conditions, key=json.dumps),
            _stable(q.options),
            _stable(list(shape)),
        ]
        digest = hashlib.sha256(json.dumps(parts, ensure_ascii=False, allow_nan=False).encode("utf-8")).hexdigest()
        return _KEY_PREFIX + digest, digest

    async def _versions(self) -> list[object]:
        found = await asyncio.gather(*(s.generation() for s in self._versioned))
        return [_stable(v) for v in found]

    def _failed(self, operation: str, exc: BaseException) -> None:
        self._counts["errors"] += 1
        RESULT_CACHE_ERRORS.add(1, {"operation": operation})
        self._down_until = time.monotonic() + self._cooldown
        logger.warning(
            "result cache %s failed (%s: %s): queries run without it for %g s",
            operation,
            type(exc).__name__,
            exc,
            self._cooldown,
        )

    def _miss(self, reason: str) -> None:
        self._counts["misses"] += 1
        RESULT_CACHE_MISSES.add(1, {"reason": reason})

    async def fetch(
        self, identity: str, query: Query, shape: Sequence[object], run: Callable[[], Awaitable[list[Result]]]
    ) -> list[Result]:
        """The cached results for this request, else ``await run()`` (stored for the next one).

        ``shape`` holds the request's other arguments (``top_k``, ``min_score``, passage shaping).
        Called by :meth:`graphfuse.Pipeline.aretrieve`; errors of ``run`` propagate unchanged.
        """
        with tracer.start_as_current_span("graphfuse.result_cache") as span:
            if time.monotonic() < self._down_until:
                self._miss("unavailable")
                span.set_attribute("graphfuse.result_cache.hit", False)
                return await run()
            try:
                versions = await self._versions()
            except (asyncio.CancelledError, DeadlineExceeded):
                raise
            except Exception as exc:  # the store itself: the run that follows reports it
                logger.debug("result cache skipped: a store's generation() failed: %s", exc)
                RESULT_CACHE_ERRORS.add(1, {"operation": "generation"})
                self._miss("unavailable")
                span.set_attribute("graphfuse.result_cache.hit", False)
                return await run()
            try:
                key, digest = self._key(identity, query, shape, versions)
            except _Uncacheable as exc:
                logger.debug("result cache skipped: %s", exc)
                self._miss("uncacheable")
                span.set_attribute("graphfuse.result_cache.hit", False)
                return await run()
            found = await self._get(key)
            if found is not None:
                try:
                    results = _decode(found, digest)
                except Exception:  # damaged, foreign, or nested past the parser: never the user's error
                    logger.debug("result cache entry %s is unreadable: a miss", key)
                    self._miss("unreadable")
                else:
                    self._counts["hits"] += 1
                    RESULT_CACHE_HITS.add(1)
                    span.set_attribute("graphfuse.result_cache.hit", True)
                    return results
            elif time.monotonic() < self._down_until:
                self._miss("unavailable")
            else:
                self._miss("absent")
            span.set_attribute("graphfuse.result_cache.hit", False)
            results = await run()
            await self._store(key, digest, results, versions)
            return results

    async def _get(self, key: str) -> bytes | None:
        try:
            value = await asyncio.wait_for(self._cache.get(key), self._timeout)
        except (asyncio.CancelledError, DeadlineExceeded):
            raise
        except Exception as exc:  # an optimisation failing: a miss, said once per cooldown
            self._failed("get", exc)
            return None
        return value if isinstance(value, (bytes, bytearray)) else None

    async def _store(self, key: str, digest: str, results: list[Result], versions: list[object]) -> None:
        if time.monotonic() < self._down_until:
            return
        try:
            data = _encode(results, digest)
        except (_Uncacheable, ValueError) as exc:
            logger.debug("results not cached: %s", exc)
            return
        if len(data) > self._max_bytes:
            logger.debug("results not cached: %d bytes, more than max_entry_bytes %d", len(data), self._max_bytes)
            return
        try:
            if await self._versions() != versions:
                return  # a write landed during the run: these results may mix both states
        except (asyncio.CancelledError, DeadlineExceeded):
            raise
        except Exception:
            return
        try:
            await asyncio.wait_for(self._cache.set(key, data, ttl=self._ttl), self._timeout)
        except (asyncio.CancelledError, DeadlineExceeded):
            raise
        except Exception as exc:
            self._failed("set", exc)

    def __repr__(self) -> str:
        return f"ResultCache({self._cache!r}, ttl={self._ttl:g})"
