"""Built-in components, registered through the same hooks as any plugin.

Loaded by :mod:`graphfuse.plugins` as the plugin ``builtins`` (also declared as the core's
entry point). Every factory imports its class lazily, so listing plugins stays cheap.

Stage options are the stage class's keyword arguments; ``temporal`` also takes
``half_life_days`` (a number, for TOML specs where a ``timedelta`` cannot be written).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ._errors import InvalidInput
from .plugins import Components, hookimpl
from .plugins.hookspecs import Register

__all__ = [
    "register_cache_stores",
    "register_embedders",
    "register_graph_stores",
    "register_rerankers",
    "register_scorers",
    "register_stages",
    "register_vector_stores",
]


def _semantic(components: Components, **options: Any) -> Any:
    from .stages import SemanticSearch

    by = "stage 'semantic'"
    return SemanticSearch(components.require("vector_store", by=by), components.require("embedder", by=by), **options)


def _hydrate(components: Components, **options: Any) -> Any:
    from .stages import Hydrate

    return Hydrate(components.require("graph_store", by="stage 'hydrate'"), **options)


def _graph(components: Components, **options: Any) -> Any:
    from .stages import GraphExpansion

    return GraphExpansion(components.require("graph_store", by="stage 'graph'"), **options)


def _temporal(components: Components, *, half_life_days: float | None = None, **options: Any) -> Any:
    from .stages import TemporalDecay

    if half_life_days is not None:
        if "half_life" in options:
            raise InvalidInput("give half_life or half_life_days, not both")
        if isinstance(half_life_days, bool) or not isinstance(half_life_days, (int, float)):
            raise InvalidInput(f"half_life_days must be a number, got {half_life_days!r}")
        options["half_life"] = timedelta(days=half_life_days)
    return TemporalDecay(**options)


def _pagerank(components: Components, **options: Any) -> Any:
    from .stages import PageRank

    return PageRank(components.require("graph_store", by="stage 'pagerank'"), **options)


def _access(components: Components, **options: Any) -> Any:
    from .stages import AccessPopularity

    return AccessPopularity(**options)


def _rerank(components: Components, **options: Any) -> Any:
    from .stages import Rerank

    return Rerank(components.require("reranker", by="stage 'rerank'"), **options)


@hookimpl
def register_stages(register: Register) -> None:
    """semantic, hydrate, graph, temporal, pagerank, access, rerank."""
    register("semantic", _semantic)
    register("hydrate", _hydrate)
    register("graph", _graph)
    register("temporal", _temporal)
    register("pagerank", _pagerank)
    register("access", _access)
    register("rerank", _rerank)


def _weighted(**options: Any) -> Any:
    from .scoring import WeightedScorer

    return WeightedScorer(**options)


def _rrf(**options: Any) -> Any:
    from .scoring import ReciprocalRankFusion

    return ReciprocalRankFusion(**options)


@hookimpl
def register_scorers(register: Register) -> None:
    """weighted (``weights``), rrf (``weights``, ``k``)."""
    register("weighted", _weighted)
    register("rrf", _rrf)


def _sqlite_graph(**options: Any) -> Any:
    from .stores import SQLiteGraphStore

    return SQLiteGraphStore(**options)


def _memory_graph(**options: Any) -> Any:
    from .stores import InMemoryGraphStore

    return InMemoryGraphStore(**options)


@hookimpl
def register_graph_stores(register: Register) -> None:
    """sqlite (``path``), memory."""
    register("sqlite", _sqlite_graph)
    register("memory", _memory_graph)


def _local_vectors(*, path: str, **options: Any) -> Any:
    from .stores import LocalVectorStore

    return LocalVectorStore(path, **options)


def _memory_vectors(**options: Any) -> Any:
    from .stores import LocalVectorStore

    return LocalVectorStore(None, **options)


@hookimpl
def register_vector_stores(register: Register) -> None:
    """local (``path``, ``dimension``), memory (``dimension``)."""
    register("local", _local_vectors)
    register("memory", _memory_vectors)


def _hashing(**options: Any) -> Any:
    from .embedders import HashingEmbedder

    return HashingEmbedder(**options)


def _local_embedder(**options: Any) -> Any:
    from .embedders import LocalEmbedder

    return LocalEmbedder(**options)


@hookimpl
def register_embedders(register: Register) -> None:
    """hashing (``dimension``), local (``model_path``; needs ``graphfuse[local]``)."""
    register("hashing", _hashing)
    register("local", _local_embedder)


def _embedding_reranker(*, embedder: Any, embedder_options: Mapping[str, Any] | None = None) -> Any:
    from .plugins import get_registry
    from .rerankers import EmbeddingReranker

    if isinstance(embedder, str):
        embedder = get_registry().create("embedder", embedder, **(embedder_options or {}))
    elif embedder_options:
        raise InvalidInput("embedder_options apply only when embedder is a registered name")
    return EmbeddingReranker(embedder)


def _cross_encoder(**options: Any) -> Any:
    from .rerankers import CrossEncoderReranker

    return CrossEncoderReranker(**options)


@hookimpl
def register_rerankers(register: Register) -> None:
    """embedding (``embedder``: an Embedder or a registered name; ``embedder_options``), cross-encoder."""
    register("embedding", _embedding_reranker)
    register("cross-encoder", _cross_encoder)


def _memory_cache(**options: Any) -> Any:
    from .stores import InMemoryCacheStore

    return InMemoryCacheStore(**options)


@hookimpl
def register_cache_stores(register: Register) -> None:
    """memory."""
    register("memory", _memory_cache)
