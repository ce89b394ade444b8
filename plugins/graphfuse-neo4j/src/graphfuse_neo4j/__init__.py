"""A GraphFuse graph store on Neo4j (the official ``neo4j`` driver, async)."""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._store import Neo4jGraphStore

__all__ = ["Neo4jGraphStore"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_neo4j._plugin`` imports this package, and must not pay for importing ``neo4j``.
_SOURCES = {"Neo4jGraphStore": "._store"}


def _import_public(name: str) -> object:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(source, __name__), name)
    globals()[name] = value  # later lookups find it without coming back here
    return value


def __dir__() -> list[str]:
    return list(__all__)


if not TYPE_CHECKING:
    # Hidden from type checkers: a visible module __getattr__ would make them accept any name.
    __getattr__ = _import_public
