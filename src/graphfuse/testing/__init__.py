"""Contract test suites for backend and provider authors (pytest classes to subclass).

Subclass a contract (:class:`GraphStoreContract`, ...) in your own tests and provide the
fixture it names; :class:`ChatCompletionsServer` is a local stand-in for OpenAI's
chat-completions API and :class:`LlamaCppServer` a real llama.cpp server (``xllamacpp``);
:func:`modules_imported_by` tells which modules a fresh interpreter
imports. Suites are imported lazily, so importing this package does not import pytest. See
docs/testing.md.
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
    from ._llama_server import LlamaCppServer, gguf_in_package
    from ._reranker import RerankerContract
    from ._vector_store import VectorStoreContract

__all__ = [
    "CacheStoreContract",
    "ChatCompletionsServer",
    "EmbedderContract",
    "GraphStoreContract",
    "LlamaCppServer",
    "RerankerContract",
    "VectorStoreContract",
    "gguf_in_package",
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
    "LlamaCppServer": "._llama_server",
    "gguf_in_package": "._llama_server",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'graphfuse.testing' has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
