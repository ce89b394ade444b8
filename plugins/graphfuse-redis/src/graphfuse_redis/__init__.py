"""A GraphFuse cache store on Redis (redis-py's asyncio client)."""

from ._store import RedisCacheStore

__all__ = ["RedisCacheStore"]
