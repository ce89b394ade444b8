"""Registers the ``qdrant`` vector store with GraphFuse (entry point group ``graphfuse``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graphfuse.plugins import hookimpl

if TYPE_CHECKING:
    from ._store import QdrantVectorStore

__all__ = ["make_qdrant_vector_store", "register_vector_stores"]


def make_qdrant_vector_store(**options: Any) -> QdrantVectorStore:
    """Build a :class:`QdrantVectorStore` from options, completed from the environment.

    ``collection`` defaults to ``"graphfuse"``. Without ``url``, ``path`` or ``location``:
    ``$GRAPHFUSE_QDRANT_URL`` (server, with ``$GRAPHFUSE_QDRANT_API_KEY``), else
    ``$GRAPHFUSE_QDRANT_PATH`` (embedded, on disk), else embedded in memory.
    """
    collection = options.pop("collection", "graphfuse")
    if not any(options.get(k) is not None for k in ("url", "path", "location")):
        if url := os.environ.get("GRAPHFUSE_QDRANT_URL"):
            options["url"] = url
        elif path := os.environ.get("GRAPHFUSE_QDRANT_PATH"):
            options["path"] = path
    if options.get("url") is not None and options.get("api_key") is None:
        api_key = os.environ.get("GRAPHFUSE_QDRANT_API_KEY")
        if api_key:
            options["api_key"] = api_key
    from ._store import QdrantVectorStore  # here, not at the top: loading the plugin must not import qdrant_client

    return QdrantVectorStore(collection, **options)


@hookimpl
def register_vector_stores(register: Callable[[str, Callable[..., Any]], None]) -> None:
    register("qdrant", make_qdrant_vector_store)
