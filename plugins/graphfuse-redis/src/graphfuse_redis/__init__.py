"""A GraphFuse cache store on Redis (redis-py's asyncio client)."""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._store import RedisCacheStore

__all__ = ["RedisCacheStore"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_redis._plugin`` imports this package, and must not pay for importing ``redis``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"RedisCacheStore": "._store"})
