"""The embedded backends: no server, one machine.

- :class:`SQLiteGraphStore`: documents and typed relations in SQLite (WAL), traversal and
  PageRank over an in-memory CSR adjacency built from it.
- :class:`InMemoryGraphStore`: the same semantics in process memory, as a fake for tests.
- :class:`LocalVectorStore`: exact cosine search with numpy, optionally persisted in SQLite.
- :class:`InMemoryCacheStore`: a bytes cache with TTL and an LRU bound.
- :class:`LocalStore`: a store directory (graph + vectors + manifest) opened in one call.
- :func:`open_store` / :class:`StoreDirectory`: a store directory opened with the components
  (embedder, backends) recorded in its manifest: the same for Python users and the CLI.
- :func:`pagerank_scores`: the PageRank model the embedded stores use, for other graph backends.
- :func:`check_store`: integrity check (and repair) of a store directory (``graphfuse check``).
"""

from ._cache_store import InMemoryCacheStore
from ._check import StoreCheck, acheck_store, check_store
from ._directory import DEFAULT_STORE, GIVEN_EMBEDDER, StoreDirectory, aopen_store, default_embedder, open_store
from ._graph_index import pagerank_scores
from ._local_store import LocalStore
from ._memory_graph import InMemoryGraphStore
from ._sqlite_graph import SQLiteGraphStore
from ._vector_store import LocalVectorStore

__all__ = [
    "DEFAULT_STORE",
    "GIVEN_EMBEDDER",
    "InMemoryCacheStore",
    "InMemoryGraphStore",
    "LocalStore",
    "LocalVectorStore",
    "SQLiteGraphStore",
    "StoreCheck",
    "StoreDirectory",
    "acheck_store",
    "aopen_store",
    "check_store",
    "default_embedder",
    "open_store",
    "pagerank_scores",
]
