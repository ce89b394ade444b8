"""Registers the ``neo4j`` graph store with GraphFuse (entry point group ``graphfuse``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphfuse import InvalidInput
from graphfuse.plugins import hookimpl

if TYPE_CHECKING:
    from ._store import Neo4jGraphStore

__all__ = ["make_neo4j_graph_store", "register_graph_stores"]

_ENV = {
    "uri": "GRAPHFUSE_NEO4J_URI",
    "user": "GRAPHFUSE_NEO4J_USER",
    "password": "GRAPHFUSE_NEO4J_PASSWORD",
    "database": "GRAPHFUSE_NEO4J_DATABASE",
}


def make_neo4j_graph_store(**options: Any) -> Neo4jGraphStore:
    """Build a :class:`Neo4jGraphStore`; ``uri``, ``user``, ``password`` and ``database`` default
    to ``$GRAPHFUSE_NEO4J_URI``, ``$GRAPHFUSE_NEO4J_USER``, ``$GRAPHFUSE_NEO4J_PASSWORD`` and
    ``$GRAPHFUSE_NEO4J_DATABASE``."""
    for option, variable in _ENV.items():
        if options.get(option) is None and os.environ.get(variable):
            options[option] = os.environ[variable]
    uri = options.pop("uri", None)
    if uri is None:
        raise InvalidInput("the neo4j graph store needs a uri (option 'uri' or $GRAPHFUSE_NEO4J_URI)")
    from ._store import Neo4jGraphStore  # here, not at the top: loading the plugin must not import neo4j

    return Neo4jGraphStore(uri, **options)


@hookimpl
def register_graph_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    register("neo4j", make_neo4j_graph_store)
