"""The evaluation harness: index a corpus, run named pipelines over queries, compute metrics."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import presets
from .._core._capabilities import DocumentListing
from .._core._errors import InvalidInput
from .._core._protocols import Embedder, GraphStore, VectorStore
from .._core._sync import sync_form
from .._core._types import Document, Result
from ..context import GraphCaps, get_token_counter
from ..defaults import CHUNK_TOKENS, MAX_PER_DOCUMENT
from ..indexing import (
    EntityExtractor,
    Indexer,
    IndexReport,
    RegexTokenizer,
    SourceRecord,
    TokenChunker,
    embedding_text,
    wants_entity_graph,
)
from ..rerankers import EmbeddingReranker
from ._context import ContextReport, aevaluate_contexts
from ._data import EvalQuery
from ._fusion import FusionSummary, FusionTally
from ._gaps import gaps_json
from ._metrics import ndcg_at_k, percentile, recall_at_k, reciprocal_rank
from ._peer import llamaindex_fusion

__all__ = [
    "PIPELINES",
    "EvalReport",
    "PipelineMetrics",
    "aevaluate",
    "check_pipelines",
    "evaluate",
    "pipeline_names",
]

PIPELINES = ("vector", "bm25", "hybrid", "standard", "multihop", "llamaindex-fusion")
"""The built-in pipeline names ``evaluate`` knows; any preset of the catalogue is accepted too
(:func:`pipeline_names`)."""

VECTOR = "vector"
"""An alias of the ``minimal`` preset (vector search, hydrated)."""
PEER = "llamaindex-fusion"
"""The LlamaIndex peer baseline (not a preset)."""

_TOP_K = 10
Retriever = Callable[[str], Awaitable[tuple[list[str], float, list[Result]]]]
"""``question -> (document id per result slot, seconds, the results as returned)``."""


@dataclass
class PipelineMetrics:
    """One pipeline's metrics over the evaluated queries (latencies in milliseconds)."""

    recall_at_2: float
    recall_at_5: float
    ndcg_at_10: float
    mrr: float
    latency_p50_ms: float
    latency_p95_ms: float
    context_tokens_at_5: float
    n_queries: int
    by_tag: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """Per query tag and value (``{"type": {"multi_hop": {"recall@5": ..., "n_queries": ...}}}``)."""
    fusion: FusionSummary | None = None
    """The weights a weighted-sum scorer gave each signal over the queries (``None`` for another scorer)."""

    def as_json(self) -> dict[str, Any]:
        """The JSON keys of ``graphfuse eval --json`` (``by_tag`` only when queries carry tags,
        ``fusion`` only for a weighted-sum scorer: :class:`~graphfuse.evaluation.FusionSummary`)."""
        out: dict[str, Any] = {
            "recall@2": self.recall_at_2,
            "recall@5": self.recall_at_5,
            "ndcg@10": self.ndcg_at_10,
            "mrr": self.mrr,
            "latency_p50_ms": self.latency_p50_ms,
            "latency_p95_ms": self.latency_p95_ms,
            "context_tokens@5": self.context_tokens_at_5,
            "n_queries": self.n_queries,
        }
        if self.by_tag:
            out["by_tag"] = self.by_tag
        if self.fusion is not None:
            out["fusion"] = self.fusion.as_json()
        return out


@dataclass
class EvalReport:
    """Metrics per pipeline; ``complete`` is false when queries were left out (see ``warnings``)."""

    pipelines: dict[str, PipelineMetrics]
    n_queries: int
    complete: bool = True
    warnings: list[str] = field(default_factory=list)
    index: IndexReport | None = None
    context: ContextReport | None = None
    scoring: str = ""
    """How results were scored against the gold ids (passages by their document; the cap used)."""
    index_seconds: float | None = None

    def as_json(self) -> dict[str, Any]:
        """``{"pipelines": {NAME: {...}}, "multihop_gap", "n_queries", "complete", "warnings", "index",
        "scoring", "index_seconds"}`` (+ ``context*``); ``multihop_gap`` as
        :func:`~graphfuse.evaluation.gaps_json` gives it."""
        out = {
            "pipelines": {name: m.as_json() for name, m in self.pipelines.items()},
            "multihop_gap": gaps_json(self.pipelines),
            "n_queries": self.n_queries,
            "complete": self.complete,
            "warnings": list(self.warnings),
            "index": asdict(self.index) if self.index is not None else None,
            "scoring": self.scoring,
            "index_seconds": self.index_seconds,
        }
        if self.context is not None:
            out.update(self.context.as_json())
        return out


def pipeline_names() -> list[str]:
    """Every name ``evaluate`` accepts: ``vector``, each preset of the catalogue, ``llamaindex-fusion``."""
    return [VECTOR, *(n for n in presets.names() if n != VECTOR), PEER]


def check_pipelines(names: Sequence[str]) -> list[str]:
    """Validate pipeline names (unknown ones raise ``InvalidInput`` listing the known)."""
    known = pipeline_names()
    cleaned = [n.strip() for n in names if n.strip()]
    if not cleaned:
        raise InvalidInput(f"no pipeline given; known pipelines: {', '.join(known)}")
    unknown = [n for n in cleaned if n not in known]
    if unknown:
        raise InvalidInput(f"unknown pipeline(s) {unknown}; known pipelines: {', '.join(known)}")
    dup = sorted({n for n in cleaned if cleaned.count(n) > 1})
    if dup:
        raise InvalidInput(f"pipeline(s) named twice: {dup}")
    return cleaned


class _QueryVectors:
    """An embedder whose ``embed_query`` answers from precomputed vectors (latency excludes embedding)."""

    def __init__(self, inner: Embedder, vectors: Mapping[str, list[float]]) -> None:
        self._inner = inner
        self._vectors = vectors

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        vector = self._vectors.get(text)
        return vector if vector is not None else await self._inner.embed_query(text)


def _doc_ids(results: Sequence[Result]) -> list[str]:
    # Each result slot counts as its document (a passage as the page it comes from), so two
    # passages of one page take two of the top k slots, as they do in what an LLM reads.
    return [r.document_id for r in results]


def _whole(record: SourceRecord, score: float) -> Result:
    """A whole record as a result (the peer baseline returns documents, not passages)."""
    meta = dict(record.metadata)
    if record.title:
        meta["title"] = record.title
    return Result(Document(record.id, record.text, meta), score, {})


async def aevaluate(
    corpus: Sequence[SourceRecord],
    queries: Sequence[EvalQuery],
    pipelines: Sequence[str],
    *,
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    warnings: Sequence[str] = (),
    max_tokens: int = CHUNK_TOKENS,
    overlap: int | None = None,
    progress: Callable[[str], None] | None = None,
    advance: Callable[[str, int, int], None] | None = None,
    context_budgets: Sequence[int | float] = (),
    token_counter: Any = None,
    max_per_document: int | None = None,
    granularity: str | None = None,
    text_extractors: Sequence[EntityExtractor] | None = None,
    adaptive: bool | None = None,
    graph_caps: GraphCaps | None = None,
) -> EvalReport:
    """Index ``corpus`` (unchanged documents are skipped), then run every pipeline on ``queries``.

    The corpus is indexed with :meth:`~graphfuse.indexing.Indexer.for_records`, and each pipeline
    is built from what the store then holds (:func:`~graphfuse.multihop.corpus_inputs`), as a
    query builds it: presets that read the whole corpus (``bm25``, ``hybrid``, ``multihop``)
    need a graph store that lists its documents (:class:`~graphfuse.DocumentListing`).

    ``progress`` receives one line per step; ``advance(step, done, total)`` is called as each
    step moves on (indexing: documents; embedding queries; each pipeline: queries), for a
    progress bar.

    Latency is the time of the retrieval call per query, with query embeddings computed
    beforehand for every pipeline alike. ``warnings`` (from loading) are carried into the
    report, which is marked incomplete when there are any. Passages of up to ``max_tokens``
    tokens (default :data:`~graphfuse.defaults.CHUNK_TOKENS`, the indexer's) are indexed whole;
    longer ones are cut into chunks of that many, ``overlap`` shared
    (:meth:`~graphfuse.indexing.TokenChunker.sized`: the chunks of ``graphfuse index
    --max-tokens --overlap``).

    ``context_budgets`` (token counts, or floats: shares of ``vector/passages``' tokens) add
    context metrics (:func:`~graphfuse.evaluation.evaluate_contexts`) counted with
    ``token_counter`` (default :func:`~graphfuse.context.get_token_counter`), sentences scored
    with ``embedder`` too (as :func:`~graphfuse.context.retrieve_context` does); ``graph_caps`` caps the
    graph format.

    Results are what the pipelines return by default (passages, at most two of a document,
    :class:`~graphfuse.Passages`), or at ``granularity`` / ``max_per_document`` when given (every
    preset alike); each result slot is scored as its document (``Result.document_id``) against
    the gold ids, so Recall@k is over the first k passages an LLM would read.

    ``text_extractors`` find the entities of the text graph (default
    :class:`~graphfuse.indexing.TextEntityExtractor`); giving them builds the text graph even
    on a corpus whose titles would give the graph. ``index_seconds`` in the report is the
    indexing time (embeddings included, unless they come from a cache).

    ``adaptive`` builds ``multihop`` with adaptive fusion (``True``) or fixed weights (``False``);
    ``None`` keeps the preset's default. For every pipeline whose scorer is a weighted sum
    (:class:`~graphfuse.scoring.WeightedScorer`, :class:`~graphfuse.scoring.AdaptiveScorer`) the
    report holds the weights each signal got per query (:attr:`PipelineMetrics.fusion`).
    """
    # scipy (BM25) loads when an evaluation runs, not with `graphfuse --help` (cli imports this package).
    from ..multihop import acorpus_inputs

    names = check_pipelines(pipelines)
    if adaptive is not None and not isinstance(adaptive, bool):
        raise InvalidInput(f"adaptive must be True, False or None, got {adaptive!r}")
    if not queries:
        raise InvalidInput("no queries to evaluate")
    say = progress or (lambda _msg: None)
    step = advance or (lambda _step, _done, _total: None)
    # Built as `graphfuse index` builds it (Indexer.for_records, the same chunker); the corpus
    # inputs are then read back from the store as a query reads them (corpus_inputs), so the
    # pipelines measured are the ones users run.
    chunker = TokenChunker.sized(max_tokens, overlap)
    text_graph = text_extractors is not None or wants_entity_graph(corpus)
    indexer = Indexer.for_records(
        corpus,
        graph_store,
        vector_store,
        embedder,
        entity_graph=text_graph,
        chunker=chunker,
        text_extractors=text_extractors,
    )
    say(f"indexing {len(corpus)} documents" + (" (entity graph from the text)" if text_graph else ""))
    step("reading", 0, len(corpus))
    started = time.perf_counter()
    index_report = await indexer.aindex(
        corpus,
        reading=lambda done: step("reading", done, len(corpus)),
        progress=lambda done: step("indexing", done, len(corpus)),
    )
    index_seconds = time.perf_counter() - started
    inputs = await acorpus_inputs(graph_store) if isinstance(graph_store, DocumentListing) else {}
    say(f"embedding {len(queries)} queries")
    query_vectors: dict[str, list[float]] = {}
    step("embedding queries", 0, len(queries))
    for i, q in enumerate(queries, 1):
        if q.question not in query_vectors:
            query_vectors[q.question] = await embedder.embed_query(q.question)
        step("embedding queries", i, len(queries))
    fixed = _QueryVectors(embedder, query_vectors)
    tokenizer = RegexTokenizer()
    results: dict[str, PipelineMetrics] = {}
    returned: dict[str, dict[str, list[Result]]] = {}
    for name in names:
        say(f"running pipeline {name}")
        retrieve, scorer = await _retriever(
            name,
            corpus,
            graph_store,
            vector_store,
            fixed,
            inputs,
            query_vectors,
            {"max_per_document": max_per_document, "granularity": granularity},
            # The raw weighted sums (same order as the normalised scores): the fusion report
            # shows the weights the scorer chose, not their shares of each query's total.
            ({"normalize": False} | ({} if adaptive is None else {"adaptive": adaptive})) if name == "multihop" else {},
        )
        tally = FusionTally.for_scorer(scorer)
        r2: list[float] = []
        r5: list[float] = []
        nd: list[float] = []
        rr: list[float] = []
        lat: list[float] = []
        ctx: list[float] = []
        step(f"pipeline {name}", 0, len(queries))
        for i, q in enumerate(queries, 1):
            ranked, elapsed, shown = await retrieve(q.question)
            step(f"pipeline {name}", i, len(queries))
            returned.setdefault(name, {})[q.id] = shown  # what a user gets: the contexts are built from it
            if tally is not None:
                tally.add(shown)
            r2.append(recall_at_k(ranked, q.gold_ids, 2))
            r5.append(recall_at_k(ranked, q.gold_ids, 5))
            nd.append(ndcg_at_k(ranked, q.gold_ids, 10))
            rr.append(reciprocal_rank(ranked, q.gold_ids))
            lat.append(elapsed * 1000)
            ctx.append(sum(len(tokenizer.spans(r.document.content or "")) for r in shown[:5]))
        n = len(queries)
        by_tag: dict[str, dict[str, dict[str, float]]] = {}
        groups: dict[tuple[str, str], list[int]] = {}
        for i, q in enumerate(queries):
            for tag, value in q.tags().items():
                groups.setdefault((tag, value), []).append(i)
        for (tag, value), members in sorted(groups.items()):
            k = len(members)
            by_tag.setdefault(tag, {})[value] = {
                "recall@2": sum(r2[i] for i in members) / k,
                "recall@5": sum(r5[i] for i in members) / k,
                "ndcg@10": sum(nd[i] for i in members) / k,
                "mrr": sum(rr[i] for i in members) / k,
                "n_queries": k,
            }
        results[name] = PipelineMetrics(
            sum(r2) / n,
            sum(r5) / n,
            sum(nd) / n,
            sum(rr) / n,
            percentile(lat, 50),
            percentile(lat, 95),
            sum(ctx) / n,
            n,
            by_tag,
            None if tally is None else tally.summary(),
        )
    context = None
    if context_budgets:
        say("measuring contexts")
        context = await aevaluate_contexts(
            returned,
            {q.id: (q.question, q.answer) for q in queries},
            {r.id: r for r in corpus},
            context_budgets,
            counter=token_counter or get_token_counter(),
            graph_store=graph_store,
            embedder=embedder,
            graph_caps=graph_caps,
        )
    return EvalReport(
        results,
        len(queries),
        complete=not warnings,
        warnings=list(warnings),
        index=index_report,
        context=context,
        scoring=scoring_note(granularity, max_per_document),
        index_seconds=index_seconds,
    )


evaluate = sync_form(aevaluate)
"""Sync form of :func:`aevaluate`: same arguments, result and errors, no event loop needed."""


def scoring_note(granularity: str | None, max_per_document: int | None) -> str:
    """The sentence a report gives on how results were scored against document-level gold ids."""
    if granularity == "document":
        return "results are whole documents (granularity=document), each scored by its id"
    cap = MAX_PER_DOCUMENT if max_per_document is None else max_per_document
    default = " (the default)" if max_per_document is None else ""
    return (
        "results are passages, each result slot scored by its document (a chunk counts as its parent_id), "
        f"at most {cap} passages per document{default}"
    )


async def _retriever(
    name: str,
    corpus: Sequence[SourceRecord],
    graph_store: GraphStore,
    vector_store: VectorStore,
    embedder: Embedder,
    inputs: Mapping[str, Any],
    query_vectors: Mapping[str, list[float]],
    shape: Mapping[str, Any],
    options: Mapping[str, Any],
) -> tuple[Retriever, object]:
    """The pipeline's retrieval call and its scorer (``None`` for the peer baseline)."""
    if name == PEER:
        return await _peer(corpus, embedder, query_vectors), None
    preset = presets.get("minimal" if name == VECTOR else name)
    reranker = None
    if "reranker" in preset.needs:
        # Offline: the embedder under evaluation reranks (as `graphfuse query` does).
        reranker = EmbeddingReranker(embedder, vector_store=vector_store)
    pipeline = await presets.abuild(
        preset.name,
        graph_store=graph_store,
        vector_store=vector_store,
        embedder=embedder,
        reranker=reranker,
        **inputs,
        **options,
    )

    given = {k: v for k, v in shape.items() if v is not None}

    async def run(question: str) -> tuple[list[str], float, list[Result]]:
        started = time.perf_counter()
        results = await pipeline.aretrieve(question, top_k=_TOP_K, **given)
        elapsed = time.perf_counter() - started
        return _doc_ids(results), elapsed, list(results)

    return run, pipeline.scorer


async def _peer(
    corpus: Sequence[SourceRecord], embedder: Embedder, query_vectors: Mapping[str, list[float]]
) -> Retriever:
    texts = {r.id: embedding_text(r.title, r.text) for r in corpus}
    ids = list(texts)
    vectors: dict[str, list[float]] = {}
    for i in range(0, len(ids), 256):
        part = ids[i : i + 256]
        for doc_id, v in zip(part, await embedder.embed_documents([texts[d] for d in part]), strict=True):
            vectors[doc_id] = v
    fusion = await asyncio.to_thread(llamaindex_fusion, texts, vectors, query_vectors, top_k=_TOP_K)

    by_id = {r.id: r for r in corpus}

    def timed(question: str) -> tuple[list[str], float, list[Result]]:
        started = time.perf_counter()
        nodes = fusion.retrieve(question)
        elapsed = time.perf_counter() - started
        ids = [n.node.node_id for n in nodes]
        shown = [_whole(by_id[i], float(n.score or 0.0)) for i, n in zip(ids, nodes, strict=True) if i in by_id]
        return ids, elapsed, shown

    async def run(question: str) -> tuple[list[str], float, list[Result]]:
        return await asyncio.to_thread(timed, question)

    return run
