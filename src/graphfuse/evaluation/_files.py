"""Evaluation from files: what ``graphfuse eval`` runs, callable from Python and benchmarks."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._sync import sync_form
from .._retrieval._passages import check_granularity, check_max_per_document
from ..context import GraphCaps
from ..defaults import CHUNK_TOKENS
from ..embedders import CachingEmbedder
from ..indexing import LLM_GRAPH_CACHE, LLMGraphExtractor, TokenChunker
from ..indexing import entity_extractors as entity_extractors_named
from ..plugins import EMBEDDER, get_registry
from ..stores import InMemoryGraphStore, LocalVectorStore, aopen_store, default_embedder
from ._data import check_gold, load_corpus, load_queries
from ._data import strip_titles as stripped
from ._embedding_cache import SQLiteCache
from ._harness import EvalReport, aevaluate, check_pipelines

__all__ = ["CACHE_FILE", "aevaluate_files", "evaluate_files"]

CACHE_FILE = "eval-embeddings.sqlite"
"""The embedding cache's file name inside a store directory."""


async def aevaluate_files(
    corpus_path: str | os.PathLike[str],
    queries_path: str | os.PathLike[str],
    pipelines: list[str],
    *,
    store_dir: str | os.PathLike[str] | None = None,
    embedder_name: str | None = None,
    cache_path: str | os.PathLike[str] | None = None,
    allow_missing_gold: bool = False,
    max_tokens: int = CHUNK_TOKENS,
    overlap: int | None = None,
    strip_titles: bool = False,
    progress: Callable[[str], None] | None = None,
    advance: Callable[[str, int, int], None] | None = None,
    context_budgets: Sequence[int | float] = (),
    max_per_document: int | None = None,
    granularity: str | None = None,
    entity_extractors: Sequence[str] | None = None,
    entity_extractor_options: Mapping[str, Mapping[str, Any]] | None = None,
    adaptive: bool | None = None,
    graph_caps: GraphCaps | None = None,
) -> EvalReport:
    """Evaluate from files (what ``graphfuse eval`` runs): validate the inputs, then index and evaluate.

    ``pipelines`` are names of :func:`pipeline_names`; ``progress`` receives one line per step and
    each loading warning; ``advance`` drives a progress bar (see :func:`evaluate`). All input
    checks (pipeline names, corpus, queries, gold ids) run before any store is
    opened. Embeddings go through an on-disk cache (``cache_path``, default
    ``<store>/eval-embeddings.sqlite`` with ``--store``), so a second run embeds nothing.
    ``max_tokens`` and ``overlap`` size the chunks as ``graphfuse index --max-tokens --overlap``
    does (:meth:`~graphfuse.indexing.TokenChunker.sized`; by default the indexer's own).
    With ``strip_titles`` the corpus is indexed without titles and links (:func:`strip_titles`).
    ``max_per_document`` and ``granularity`` shape every pipeline's results (see :func:`evaluate`).
    ``entity_extractors`` name registered entity extractors for the text graph (``NAME`` or
    ``NAME:MODEL``, :func:`~graphfuse.indexing.entity_extractors`); naming any builds the text
    graph. They are built (a model loaded) before any store is opened; ``entity_extractor_options``
    maps an extractor's name to its factory's options (``{"llm": {"model": ..., "base_url": ...}}``;
    with ``store_dir`` the ``llm`` extractor's replies are cached in its
    :data:`~graphfuse.indexing.LLM_GRAPH_CACHE`, so a second run asks the model nothing). ``adaptive`` chooses
    ``multihop``'s fusion, ``graph_caps`` caps the graph format's contexts (see :func:`evaluate`).
    """
    TokenChunker.sized(max_tokens, overlap)  # (bad sizes fail before anything is read)
    if max_per_document is not None:
        check_max_per_document(max_per_document)
    if granularity is not None:
        check_granularity(granularity)
    say = progress or (lambda _msg: None)
    names = check_pipelines(pipelines)
    if adaptive is not None and not isinstance(adaptive, bool):
        raise InvalidInput(f"adaptive must be True, False or None, got {adaptive!r}")
    corpus = load_corpus(corpus_path)
    if strip_titles:
        corpus = stripped(corpus)
    queries = load_queries(queries_path)
    queries, warnings = check_gold(queries, {r.id for r in corpus}, allow_missing=allow_missing_gold)
    for w in warnings:
        say(f"warning: {w}")
    options = {name: dict(given) for name, given in (entity_extractor_options or {}).items()}
    if store_dir is not None:
        options.setdefault("llm", {}).setdefault("cache", Path(store_dir) / LLM_GRAPH_CACHE)
    text_extractors = entity_extractors_named(entity_extractors, options) if entity_extractors else None
    llm = [ex for ex in text_extractors or () if isinstance(ex, LLMGraphExtractor)]
    closers: list[Callable[[], Awaitable[None]]] = []
    graph: GraphStore
    vectors: VectorStore
    embedder: Embedder
    try:
        if store_dir is not None:
            store = await aopen_store(store_dir, create=True, embedder=embedder_name)
            closers.append(store.aclose)
            graph, vectors, embedder = store.graph, store.vectors, store.embedder
            if cache_path is None:
                cache_path = Path(store_dir) / CACHE_FILE
        else:
            name = embedder_name or default_embedder()[0]
            embedder = get_registry().create(EMBEDDER, name)
            graph, vectors = InMemoryGraphStore(), LocalVectorStore(None)
        if cache_path is not None:
            cache = SQLiteCache(cache_path)
            closers.append(cache.close)
            embedder = CachingEmbedder(embedder, cache)
        return await aevaluate(
            corpus,
            queries,
            names,
            graph_store=graph,
            vector_store=vectors,
            embedder=embedder,
            warnings=warnings,
            max_tokens=max_tokens,
            overlap=overlap,
            progress=say,
            advance=advance,
            context_budgets=context_budgets,
            max_per_document=max_per_document,
            granularity=granularity,
            text_extractors=text_extractors,
            adaptive=adaptive,
            graph_caps=graph_caps,
        )
    finally:
        for close in reversed(closers):
            await close()
        for ex in llm:
            say(ex.stats.summary(ex.model))
            ex.close()


evaluate_files = sync_form(aevaluate_files)
"""Sync form of :func:`aevaluate_files`: same arguments, result and errors, no event loop needed."""
