"""Retrieval evaluation: Recall@k (HippoRAG's definition), nDCG, MRR, latency, context size.

``graphfuse eval`` is the command-line front end; :func:`evaluate` is the Python one::

    corpus = load_corpus("corpus.jsonl")
    queries = load_queries("queries.jsonl")
    queries, warnings = check_gold(queries, {r.id for r in corpus}, allow_missing=False)
    report = await evaluate(corpus, queries, ["vector", "multihop"], graph_store=g, vector_store=v, embedder=e)
"""

from ._data import EvalQuery, check_gold, load_corpus, load_queries, strip_titles
from ._embedding_cache import SQLiteCache
from ._files import CACHE_FILE, evaluate_files
from ._harness import PIPELINES, EvalReport, PipelineMetrics, check_pipelines, evaluate, pipeline_names
from ._metrics import ndcg_at_k, percentile, recall_at_k, reciprocal_rank
from ._report import markdown_table, write_report

__all__ = [
    "CACHE_FILE",
    "PIPELINES",
    "EvalQuery",
    "EvalReport",
    "PipelineMetrics",
    "SQLiteCache",
    "check_gold",
    "check_pipelines",
    "evaluate",
    "evaluate_files",
    "load_corpus",
    "load_queries",
    "markdown_table",
    "ndcg_at_k",
    "percentile",
    "pipeline_names",
    "recall_at_k",
    "reciprocal_rank",
    "strip_titles",
    "write_report",
]
