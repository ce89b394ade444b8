"""Retrieval evaluation: Recall@k (HippoRAG's definition), nDCG, MRR, latency, context size.

``graphfuse eval`` is the command-line front end; :func:`evaluate` is the Python one::

    corpus = load_corpus("corpus.jsonl")
    queries = load_queries("queries.jsonl")
    queries, warnings = check_gold(queries, {r.id for r in corpus}, allow_missing=False)
    report = evaluate(corpus, queries, ["vector", "multihop"], graph_store=g, vector_store=v, embedder=e)
"""

from ._context import (
    ContextMetrics,
    ContextReport,
    aevaluate_contexts,
    answer_in_text,
    evaluate_contexts,
    normalize_answer,
    parse_context_budgets,
)
from ._data import (
    MAX_JSONL_FILE_BYTES,
    MAX_JSONL_LINE_BYTES,
    EvalQuery,
    check_gold,
    load_corpus,
    load_queries,
    strip_titles,
)
from ._embedding_cache import SQLiteCache
from ._files import CACHE_FILE, aevaluate_files, evaluate_files
from ._fusion import FusionSummary, SignalWeight, query_weights
from ._gaps import GAP_METRICS, MetricGap, gaps_json, multihop_gaps
from ._harness import (
    PIPELINES,
    EvalReport,
    PipelineMetrics,
    aevaluate,
    check_pipelines,
    evaluate,
    pipeline_names,
)
from ._metrics import ndcg_at_k, percentile, recall_at_k, reciprocal_rank
from ._report import context_table, fusion_rows, fusion_table, gap_table, markdown_table, write_report

__all__ = [
    "CACHE_FILE",
    "GAP_METRICS",
    "MAX_JSONL_FILE_BYTES",
    "MAX_JSONL_LINE_BYTES",
    "PIPELINES",
    "ContextMetrics",
    "ContextReport",
    "EvalQuery",
    "EvalReport",
    "FusionSummary",
    "MetricGap",
    "PipelineMetrics",
    "SQLiteCache",
    "SignalWeight",
    "aevaluate",
    "aevaluate_contexts",
    "aevaluate_files",
    "answer_in_text",
    "check_gold",
    "check_pipelines",
    "context_table",
    "evaluate",
    "evaluate_contexts",
    "evaluate_files",
    "fusion_rows",
    "fusion_table",
    "gap_table",
    "gaps_json",
    "load_corpus",
    "load_queries",
    "markdown_table",
    "multihop_gaps",
    "ndcg_at_k",
    "normalize_answer",
    "parse_context_budgets",
    "percentile",
    "pipeline_names",
    "query_weights",
    "recall_at_k",
    "reciprocal_rank",
    "strip_titles",
    "write_report",
]
