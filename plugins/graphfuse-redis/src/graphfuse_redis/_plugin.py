"""Registers the ``redis`` cache store with GraphFuse (entry point group ``graphfuse``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from graphfuse.plugins import Register, hookimpl

if TYPE_CHECKING:
    from ._store import RedisCacheStore

__all__ = ["make_redis_cache_store", "register_cache_stores"]


def make_redis_cache_store(**options: Any) -> RedisCacheStore:
    """Build a :class:`RedisCacheStore`; ``url`` defaults to ``$GRAPHFUSE_REDIS_URL``."""
    url = options.pop("url", None) or os.environ.get("GRAPHFUSE_REDIS_URL")
    if url:
        options["url"] = url
    from ._store import RedisCacheStore  # here, not at the top: loading the plugin must not import redis

    return RedisCacheStore(**options)


@hookimpl
def register_cache_stores(register: Register) -> None:
    register("redis", make_redis_cache_store)
