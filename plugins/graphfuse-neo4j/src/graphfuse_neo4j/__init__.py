"""A GraphFuse graph store on Neo4j (the official ``neo4j`` driver, async)."""

from ._store import Neo4jGraphStore

__all__ = ["Neo4jGraphStore"]
