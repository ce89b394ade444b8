"""Contract test suites for backend and provider authors (pytest classes to subclass).

Subclass a contract in your own tests and provide the fixture it names::

    from graphfuse.testing import GraphStoreContract

    class TestMyStore(GraphStoreContract):
        @pytest.fixture
        async def graph_store(self):
            s = MyStore(...)
            yield s
            await s.close()

:class:`ChatCompletionsServer` is a local stand-in for OpenAI's chat-completions API, for
testing generators and judges (and running the comparison docs) without the internet.

:func:`modules_imported_by` tells which modules a fresh interpreter imports, for a test that
keeps loading a plugin cheap (its SDK imported only when a component is built).

Each suite module is imported lazily, so importing this package does not import pytest
until a suite is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._cache_store import CacheStoreContract
    from ._chat_server import ChatCompletionsServer
    from ._embedder import EmbedderContract
    from ._graph_store import GraphStoreContract
    from ._imports import modules_imported_by
    from ._reranker import RerankerContract
    from ._vector_store import VectorStoreContract

__all__ = [
    "CacheStoreContract",
    "ChatCompletionsServer",
    "EmbedderContract",
    "GraphStoreContract",
    "RerankerContract",
    "VectorStoreContract",
    "modules_imported_by",
]

_MODULES = {
    "GraphStoreContract": "._graph_store",
    "VectorStoreContract": "._vector_store",
    "CacheStoreContract": "._cache_store",
    "EmbedderContract": "._embedder",
    "RerankerContract": "._reranker",
    "modules_imported_by": "._imports",
    "ChatCompletionsServer": "._chat_server",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'graphfuse.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
