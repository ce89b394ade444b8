"""``graphfuse eval``: index a corpus, run pipelines over queries with gold passages, report metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ..defaults import CHUNK_TOKENS
from ..evaluation import CACHE_FILE, GAP_METRICS, evaluate_files, fusion_rows, multihop_gaps
from ._errors import reports_errors
from ._options import LlmGraphBaseUrl, LlmGraphModel, MaxTokens, Overlap, llm_graph_options
from ._progress import StepBars

__all__ = ["register"]


@reports_errors
def eval_command(
    corpus: Annotated[str, typer.Option("--corpus", help="Corpus JSONL: {id, title?, text} a line.")],
    queries: Annotated[str, typer.Option("--queries", help="Queries JSONL: {id, question, gold_ids} a line.")],
    pipeline: Annotated[
        str,
        typer.Option(
            "--pipeline", help="Comma-separated: vector, bm25, hybrid, standard, multihop, llamaindex-fusion."
        ),
    ] = "vector,multihop",
    store: Annotated[
        str | None, typer.Option("--store", help="Store directory to index into and reuse (default: in memory).")
    ] = None,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="Registered embedder name (default: local, else hashing).")
    ] = None,
    cache: Annotated[
        str | None, typer.Option("--cache", help=f"Embedding cache file (default with --store: <store>/{CACHE_FILE}).")
    ] = None,
    json_out: Annotated[str | None, typer.Option("--json", help="Write the metrics as JSON to this file.")] = None,
    report: Annotated[
        str | None, typer.Option("--report", help="Write report.md and recall.png into this directory.")
    ] = None,
    max_tokens: MaxTokens = CHUNK_TOKENS,
    overlap: Overlap = None,
    allow_missing_gold: Annotated[
        bool,
        typer.Option("--allow-missing-gold", help="Leave out queries whose gold ids are not in the corpus (counted)."),
    ] = False,
    context_budget: Annotated[
        str | None,
        typer.Option(
            "--context-budget",
            help="Also measure contexts (answer in context, tokens) at these budgets: tokens or shares of "
            "vector/passages, comma-separated (e.g. 250 or 20%,35%,50%).",
        ),
    ] = None,
    strip_titles: Annotated[
        bool,
        typer.Option("--strip-titles", help="Index without titles and links (titles also cut from the text)."),
    ] = False,
    max_per_document: Annotated[
        int | None,
        typer.Option("--max-per-document", min=1, help="Passages of one document per result list (default 2)."),
    ] = None,
    granularity: Annotated[
        str | None,
        typer.Option("--granularity", help="Results as 'passage' (default) or whole 'document's, every pipeline."),
    ] = None,
    entity_extractor: Annotated[
        list[str] | None,
        typer.Option(
            "--entity-extractor",
            help="Entity extractor for the text graph, NAME or NAME:MODEL (repeatable; default: text, when the "
            "corpus wants a text graph). Naming one builds the text graph.",
            show_default=False,
        ),
    ] = None,
    llm: LlmGraphModel = None,
    llm_base_url: LlmGraphBaseUrl = None,
    adaptive: Annotated[
        bool | None,
        typer.Option(
            "--adaptive/--fixed-weights",
            help="multihop with adaptive fusion (weights per query) or fixed weights (default: the preset's).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Evaluate retrieval pipelines: Recall@2/@5 (HippoRAG), nDCG@10, MRR, latency, context tokens."""
    console = Console(stderr=True)
    budgets = None
    if context_budget is not None:
        from ..evaluation import parse_context_budgets

        budgets = parse_context_budgets(context_budget)
    with StepBars(console) as bars:
        result = evaluate_files(
            corpus,
            queries,
            pipeline.split(","),
            store_dir=store,
            embedder_name=embedder,
            cache_path=cache,
            allow_missing_gold=allow_missing_gold,
            max_tokens=max_tokens,
            overlap=overlap,
            strip_titles=strip_titles,
            progress=lambda msg: console.print(msg, highlight=False, markup=False),
            advance=bars.advance,
            context_budgets=budgets or (),
            max_per_document=max_per_document,
            granularity=granularity,
            entity_extractors=entity_extractor,
            entity_extractor_options={"llm": llm_graph_options(entity_extractor, llm, llm_base_url)},
            adaptive=adaptive,
        )
    table = Table(title="GraphFuse evaluation" + ("" if result.complete else " (INCOMPLETE)"))
    columns = (
        ("recall@2", "R@2"),
        ("recall@5", "R@5"),
        ("ndcg@10", "nDCG@10"),
        ("mrr", "MRR"),
        ("latency_p50_ms", "p50 ms"),
        ("latency_p95_ms", "p95 ms"),
        ("context_tokens@5", "tok@5"),
    )
    table.add_column("pipeline")
    for _, label in columns:
        table.add_column(label, justify="right")
    for name, metrics in result.pipelines.items():
        values = metrics.as_json()
        cells = [f"{values[key]:.3f}" if key[0] in "rnm" else f"{values[key]:.1f}" for key, _ in columns]
        table.add_row(name, *cells)
    Console().print(table)
    if result.scoring:
        console.print(f"scoring: {result.scoring}", highlight=False, markup=False)
    gaps = multihop_gaps(result.pipelines)
    if gaps:
        gap_table = Table(title="multihop against the best of bm25, minimal, hybrid (those run)")
        for label in ("metric", "multihop", "best part", "best", "gap", ""):
            gap_table.add_column(label, justify="left" if label in ("metric", "best part", "") else "right")
        labels = dict(GAP_METRICS)
        for g in gaps:
            flag = "NEGATIVE" if g.negative else ""
            gap_table.add_row(
                labels[g.metric], f"{g.multihop:.3f}", g.best_pipeline, f"{g.best:.3f}", f"{g.gap:+.3f}", flag
            )
        Console().print(gap_table)
    rows = fusion_rows(result)
    if rows:
        fusion_table = Table(title="Fusion weights per query (over the queries whose results hold the signal)")
        for label in ("pipeline", "fusion", "signal", "mean", "min", "max", "queries"):
            fusion_table.add_column(label, justify="left" if label in ("pipeline", "fusion", "signal") else "right")
        for row in rows:
            fusion_table.add_row(*row)
        Console().print(fusion_table)
    if result.context is not None:
        ctx_table = Table(title=f"Context (budget {result.context.budget} tokens, counter {result.context.counter})")
        for column in ("pipeline/format", "answer in context", "tokens", "n"):
            ctx_table.add_column(column, justify="left" if column == "pipeline/format" else "right")
        for key, cm in result.context.entries.items():
            ctx_table.add_row(key, f"{cm.answer_in_context:.3f}", f"{cm.context_tokens:.1f}", str(cm.n))
        Console().print(ctx_table)
    tagged = [(name, m.by_tag) for name, m in result.pipelines.items() if m.by_tag]
    if tagged:
        by_tag = Table(title="By query tag")
        for label in ("pipeline", "tag", "queries", "R@2", "R@5", "nDCG@10", "MRR"):
            by_tag.add_column(label, justify="left" if label in ("pipeline", "tag") else "right")
        for name, tags in tagged:
            for tag, values in tags.items():
                for value, m in values.items():
                    cells = [f"{m[k]:.3f}" for k in ("recall@2", "recall@5", "ndcg@10", "mrr")]
                    by_tag.add_row(name, f"{tag}={value}", str(int(m["n_queries"])), *cells)
        Console().print(by_tag)
    if json_out is not None:
        Path(json_out).write_text(json.dumps(result.as_json(), indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from ..evaluation import write_report

        write_report(result, report)
    for w in result.warnings:
        console.print(f"warning: {w}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
