"""A GraphFuse graph store on Neo4j (the official ``neo4j`` driver, async)."""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._store import Neo4jGraphStore

__all__ = ["Neo4jGraphStore"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_neo4j._plugin`` imports this package, and must not pay for importing ``neo4j``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, {"Neo4jGraphStore": "._store"})
