"""Built-in components, registered through the same hooks as any plugin.

Loaded by :mod:`graphfuse.plugins` as the plugin ``builtins`` (also declared as the core's
entry point). Every factory imports its class lazily, so listing plugins stays cheap.

Stage options are the stage class's keyword arguments; ``temporal`` also takes
``half_life_days`` (a number, for TOML specs where a ``timedelta`` cannot be written);
``bm25`` and ``entity_seeds`` take ``corpus`` (files or directories, as for ``graphfuse
index``), since they index the corpus text and titles themselves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from ._core._errors import InvalidInput
from .plugins import Components, hookimpl
from .plugins.hookspecs import Register, RegisterPreset

__all__ = [
    "register_cache_stores",
    "register_embedders",
    "register_entity_extractors",
    "register_graph_stores",
    "register_presets",
    "register_rerankers",
    "register_scorers",
    "register_stages",
    "register_token_counters",
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


def _aggregate(components: Components, **options: Any) -> Any:
    from .stages import ParentAggregation

    return ParentAggregation(**options)


def _rerank(components: Components, **options: Any) -> Any:
    from .stages import Rerank

    return Rerank(components.require("reranker", by="stage 'rerank'"), **options)


Corpus = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def _corpus_records(corpus: Corpus) -> Any:
    from .indexing import read_sources

    return read_sources([corpus] if isinstance(corpus, (str, os.PathLike)) else list(corpus))


def _bm25_index(corpus: Corpus, k1: float, b: float, *, subjects: bool = False) -> Any:
    from .multihop import BM25Index, subject_span

    records = list(_corpus_records(corpus))
    texts = ((r.id, f"{r.title} {r.text}" if r.title else r.text, r.metadata) for r in records)
    if not subjects:
        return BM25Index(texts, k1=k1, b=b)
    leads = ((r.id, lead, r.metadata) for r in records if (lead := subject_span(r.text)) is not None)
    return BM25Index(texts, k1=k1, b=b, subjects=leads)


def _bm25(components: Components, *, corpus: Corpus, k1: float = 1.2, b: float = 0.75, **options: Any) -> Any:
    from .multihop import BM25Search

    return BM25Search(_bm25_index(corpus, k1, b), **options)


def _bridge(components: Components, *, corpus: Corpus, k1: float = 1.2, b: float = 0.75, **options: Any) -> Any:
    from .multihop import BridgeSearch

    return BridgeSearch(_bm25_index(corpus, k1, b, subjects=True), **options)


def _entity_seeds(components: Components, *, corpus: Corpus, **options: Any) -> Any:
    from .indexing import TitleLinker
    from .multihop import EntitySeeds

    graph_store = components.require("graph_store", by="stage 'entity_seeds'")
    linker = TitleLinker()
    for r in _corpus_records(corpus):
        if r.title:
            linker.add(r.title, r.id)
    return EntitySeeds(graph_store, linker, **options)


def _ppr(components: Components, **options: Any) -> Any:
    from .multihop import PersonalizedPageRank

    return PersonalizedPageRank(components.require("graph_store", by="stage 'ppr'"), **options)


def _time(components: Components, *, corpus: Corpus | None = None, **options: Any) -> Any:
    from .timeaware import TimeAware, Timeline

    timeline = None if corpus is None else Timeline((r.id, r.created_at) for r in _corpus_records(corpus))
    return TimeAware(timeline, **options)


@hookimpl
def register_stages(register: Register) -> None:
    """semantic, hydrate, graph, temporal, pagerank, access, rerank, aggregate; bm25 (``corpus``, ``k1``, ``b``,
    ``limit``), entity_seeds (``corpus``, ``limit``, ...), bridge (``corpus``, ``seeds``, ``limit``, ...), ppr
    (the multi-hop stages); time (``corpus``
    for its timeline, ``mode``, ``reference``, ...: the time-aware stage).
    """
    register("semantic", _semantic)
    register("hydrate", _hydrate)
    register("graph", _graph)
    register("temporal", _temporal)
    register("pagerank", _pagerank)
    register("access", _access)
    register("rerank", _rerank)
    register("aggregate", _aggregate)
    register("bm25", _bm25)
    register("entity_seeds", _entity_seeds)
    register("bridge", _bridge)
    register("ppr", _ppr)
    register("time", _time)


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


def _embedding_reranker(
    *, embedder: Any, embedder_options: Mapping[str, Any] | None = None, vector_store: Any = None
) -> Any:
    from .plugins import get_registry
    from .rerankers import EmbeddingReranker

    if isinstance(embedder, str):
        embedder = get_registry().create("embedder", embedder, **(embedder_options or {}))
    elif embedder_options:
        raise InvalidInput("embedder_options apply only when embedder is a registered name")
    return EmbeddingReranker(embedder, vector_store=vector_store)


def _cross_encoder(**options: Any) -> Any:
    from .rerankers import CrossEncoderReranker

    return CrossEncoderReranker(**options)


@hookimpl
def register_rerankers(register: Register) -> None:
    """embedding (``embedder``: an Embedder or a registered name; ``embedder_options``; ``vector_store``),
    cross-encoder."""
    register("embedding", _embedding_reranker)
    register("cross-encoder", _cross_encoder)


def _memory_cache(**options: Any) -> Any:
    from .stores import InMemoryCacheStore

    return InMemoryCacheStore(**options)


@hookimpl
def register_cache_stores(register: Register) -> None:
    """memory."""
    register("memory", _memory_cache)


_COMPONENTS = ("graph_store", "vector_store", "embedder")


@hookimpl
def register_presets(register: RegisterPreset) -> None:
    """standard, no_rerank, minimal, multihop, bm25, hybrid (see :mod:`graphfuse.presets`)."""
    register(
        "standard",
        "graphfuse.presets:standard",
        needs=(*_COMPONENTS, "reranker"),
        description="all seven stages, weighted; reranks",
    )
    register("no_rerank", "graphfuse.presets:no_rerank", needs=_COMPONENTS, description="standard without rerank")
    register(
        "minimal",
        "graphfuse.presets:minimal",
        needs=("vector_store", "embedder"),
        uses=("graph_store",),
        description="vector search (hydrated when a graph store is given)",
    )
    register(
        "multihop",
        "graphfuse.multihop:multihop",
        needs=(*_COMPONENTS, "corpus_indexes"),
        description="hybrid seeds, entity links and Personalized PageRank for multi-hop questions",
    )
    register(
        "bm25",
        "graphfuse.multihop:lexical",
        needs=("corpus_indexes",),
        uses=("graph_store",),
        description="BM25 only (passages when a graph store is given)",
    )
    register(
        "hybrid",
        "graphfuse.multihop:hybrid",
        needs=("vector_store", "embedder", "corpus_indexes"),
        uses=("graph_store",),
        description="vector + BM25 search by reciprocal rank fusion (passages when a graph store is given)",
    )


def _tiktoken_counter(encoding: str) -> Any:
    def factory(**options: Any) -> Any:
        from .context import TiktokenCounter

        if options:
            raise InvalidInput(f"token counter {encoding!r} takes no options, got {sorted(options)}")
        return TiktokenCounter(encoding)

    return factory


def _regex_counter(**options: Any) -> Any:
    from .context import RegexTokenCounter

    return RegexTokenCounter(**options)


@hookimpl
def register_token_counters(register: Register) -> None:
    """cl100k_base, o200k_base (tiktoken, offline; ``graphfuse[tokens]``), regex (the fallback estimate)."""
    register("cl100k_base", _tiktoken_counter("cl100k_base"))
    register("o200k_base", _tiktoken_counter("o200k_base"))
    register("regex", _regex_counter)


def _text_entities(**options: Any) -> Any:
    from .indexing import TextEntityExtractor

    return TextEntityExtractor(**options)


def _llm_graph(*, model: str | None = None, generator: Any = None, base_url: str | None = None, **options: Any) -> Any:
    from .indexing import LLMGraphExtractor
    from .plugins import get_registry

    if generator is None:
        # ``model`` is a registered generator and its model, NAME:MODEL (default openai:gpt-4o-mini).
        name, _, chosen = (model or "openai:gpt-4o-mini").partition(":")
        settings: dict[str, Any] = {"model": chosen} if chosen else {}
        if base_url is not None:
            settings["base_url"] = base_url
        generator = get_registry().create("generator", name, **settings)
    elif model is not None or base_url is not None:
        raise InvalidInput("give the llm extractor a generator, or model= and base_url=, not both")
    return LLMGraphExtractor(generator, **options)


@hookimpl
def register_entity_extractors(register: Register) -> None:
    """text: proper-noun phrases (:class:`~graphfuse.indexing.TextEntityExtractor`, offline, no model);
    llm: typed entities and relations asked of a generator (:class:`~graphfuse.indexing.LLMGraphExtractor`;
    ``model`` is NAME:MODEL of a registered generator, e.g. ``openai:gpt-4o-mini``)."""
    register("text", _text_entities)
    register("llm", _llm_graph)
