"""``graphfuse compare``: answer questions with LLM-only, basic RAG and GraphRAG; judge; report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .. import presets
from .._errors import InvalidInput, NotFound
from .._passages import check_granularity, check_max_per_document
from .._sync import run_sync
from ..stores import DEFAULT_STORE
from ._context import shaped
from ._errors import err_console, reports_errors
from ._options import Granularity, MaxPerDocument

__all__ = ["parse_model", "register", "run_compare"]

CACHE_FILE = "compare-cache.sqlite"
DEFAULT_PIPELINES = "llm_only,basic_rag,graphrag"


def parse_model(spec: str, option: str) -> tuple[str, dict[str, Any]]:
    """``NAME:MODEL`` (a registered generator and its model) -> ``(NAME, {"model": MODEL})``."""
    name, _, model = spec.partition(":")
    if not name or (":" in spec and not model):
        raise InvalidInput(f"{option} must look like NAME:MODEL (e.g. openai:gpt-4o-mini), got {spec!r}")
    return name, ({"model": model} if model else {})


def _generator(spec: str, option: str) -> Any:
    from ..plugins import get_registry

    name, options = parse_model(spec, option)
    return get_registry().create("generator", name, **options)


def _check_names(names: list[str]) -> list[str]:
    from ..compare import BUILTIN_PIPELINES

    cleaned = [n.strip() for n in names if n.strip()]
    if not cleaned:
        raise InvalidInput("--pipelines is empty")
    known = [*BUILTIN_PIPELINES, *presets.names()]
    for name in cleaned:
        if name not in known:
            raise NotFound(f"unknown pipeline {name!r}; known: {', '.join(known)} (built-ins, then presets)")
    return list(dict.fromkeys(cleaned))


async def run_compare(
    *,
    store_dir: str,
    questions_path: str,
    pipeline_names: list[str],
    llm: str,
    judge: str | None,
    concurrency: int = 4,
    budget: int = 3000,
    top_k: int = 5,
    graph_format: str = "evidence",
    max_tokens: int = 256,
    threshold: float = 7.0,
    judge_repeats: int = 1,
    cache_path: str | None = None,
    use_cache: bool = True,
    seed: int = 0,
    progress: Any = None,
    granularity: str | None = None,
    max_per_document: int | None = None,
    bertscore: bool = False,
) -> Any:
    """Validate everything, open the store, run the comparison; returns the ComparisonReport.

    ``granularity`` and ``max_per_document`` shape every retrieval pipeline's results as in
    ``graphfuse query`` (passages by default; whole documents cut to ``max_document_tokens``).
    ``bertscore`` adds BERTScore F1 with the offline MiniLM model (``graphfuse[local]``).
    """
    from ..compare import (
        BUILTIN_PIPELINES,
        BERTScore,
        CompareCache,
        Judge,
        acompare_pipelines,
        builtin_pipelines,
        context_pipeline,
        load_questions,
    )
    from ..stores import open_store

    names = _check_names(pipeline_names)
    if granularity is not None:
        check_granularity(granularity)
    if max_per_document is not None:
        check_max_per_document(max_per_document, "--max-per-document")
    questions = load_questions(questions_path)
    generator = _generator(llm, "--llm")
    judge_generator = generator if judge is None else _generator(judge, "--judge")
    generators = [generator] if judge_generator is generator else [generator, judge_generator]
    closers: list[Any] = [getattr(g, "close", None) for g in generators]
    cache = None
    try:
        store = None
        if any(n != "llm_only" for n in names):
            store = await open_store(store_dir)
            closers.append(store.close)
        pipelines: dict[str, Any] = {}
        for name in names:
            if name == "llm_only":
                pipelines[name] = builtin_pipelines([name])[name]
                continue
            assert store is not None
            if name == "basic_rag":
                vector = shaped(await store.pipeline("minimal"), granularity, max_per_document)
                pipelines[name] = builtin_pipelines([name], vector=vector, budget=budget, top_k=top_k)[name]
            elif name == "graphrag":
                graph = shaped(await store.pipeline("multihop"), granularity, max_per_document)
                pipelines[name] = builtin_pipelines([name], graph=graph, budget=budget, graph_format=graph_format)[name]
            else:
                assert name not in BUILTIN_PIPELINES
                chosen = shaped(await store.pipeline(name), granularity, max_per_document)
                pipelines[name] = context_pipeline(chosen, budget=budget, name=name)
        if use_cache:
            cache = CompareCache(cache_path or Path(store_dir) / CACHE_FILE)
        return await acompare_pipelines(
            questions,
            pipelines,
            generator,
            judge=Judge(judge_generator, threshold=threshold, repeats=judge_repeats),
            bertscore=BERTScore() if bertscore else None,
            concurrency=concurrency,
            max_tokens=max_tokens,
            cache=cache,
            progress=progress,
            seed=seed,
        )
    finally:
        if cache is not None:
            cache.close()
        for close in reversed(closers):
            if close is not None:
                await close()


def _table(data: dict[str, Any]) -> Table:
    table = Table(title="GraphFuse answer comparison")
    columns = (
        ("prompt_tokens_mean", "prompt tok", "{:.0f}"),
        ("completion_tokens_mean", "compl. tok", "{:.1f}"),
        ("latency_p50_ms", "p50 ms", "{:.0f}"),
        ("exact_match", "EM", "{:.3f}"),
        ("f1", "F1", "{:.3f}"),
        ("bertscore_f1", "BERTScore", "{:.3f}"),
        ("judge.score", "judge", "{:.2f}"),
        ("judge.pass_rate", "pass", "{:.3f}"),
        ("judge.failures", "judge fail", "{}"),
        ("errors", "errors", "{}"),
    )
    table.add_column("pipeline")
    for _, label, _ in columns:
        table.add_column(label, justify="right")
    for name, summary in data["pipelines"].items():
        cells = []
        for key, _, fmt in columns:
            head, _, tail = key.partition(".")
            value = summary.get(head)
            if tail:
                value = value.get(tail) if isinstance(value, dict) else None
            cells.append("n/a" if value is None else fmt.format(value))
        table.add_row(name, *cells)
    return table


@reports_errors
def compare_command(
    questions: Annotated[
        str | None, typer.Option("--questions", help="Questions JSONL: {id, question, answer?} a line.")
    ] = None,
    llm: Annotated[
        str | None, typer.Option("--llm", help="The answering model, NAME:MODEL (e.g. openai:gpt-4o-mini).")
    ] = None,
    store: Annotated[str, typer.Option("--store", help="Store directory (from `graphfuse index`).")] = DEFAULT_STORE,
    pipelines: Annotated[
        str, typer.Option("--pipelines", help="Comma-separated: llm_only, basic_rag, graphrag, or a preset name.")
    ] = DEFAULT_PIPELINES,
    judge: Annotated[
        str | None, typer.Option("--judge", help="The judge model, NAME:MODEL (default: the --llm model).")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Answers in flight at once.")] = 4,
    json_out: Annotated[str | None, typer.Option("--json", help="Write the comparison as JSON to this file.")] = None,
    report: Annotated[
        str | None,
        typer.Option("--report", help="Write report.md, tokens.png, judge_radar.png, latency.png here."),
    ] = None,
    budget: Annotated[int, typer.Option("--budget", min=1, help="Context budget in tokens.")] = 3000,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="Passages for basic_rag.")] = 5,
    graph_format: Annotated[
        str, typer.Option("--graph-format", help="graphrag's context: evidence or graph.")
    ] = "evidence",
    max_tokens: Annotated[int, typer.Option("--max-tokens", min=1, help="Answer token cap.")] = 256,
    threshold: Annotated[float, typer.Option("--threshold", min=0, max=10, help="Judge pass mark (0-10).")] = 7.0,
    judge_repeats: Annotated[int, typer.Option("--judge-repeats", min=1, help="Verdicts per answer.")] = 1,
    cache: Annotated[
        str | None, typer.Option("--cache", help=f"Answer/verdict cache (default <store>/{CACHE_FILE}).")
    ] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the cache.")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the shuffled task order.")] = 0,
    granularity: Granularity = None,
    max_per_document: MaxPerDocument = None,
    bertscore: Annotated[
        bool,
        typer.Option("--bertscore", help="Also score answers with BERTScore F1 (offline MiniLM; graphfuse[local])."),
    ] = False,
) -> None:
    """Answer questions three ways (LLM only, basic RAG, GraphRAG), judge the answers, compare."""
    missing = [
        f
        for f, v in (("--llm NAME:MODEL (e.g. --llm openai:gpt-4o-mini)", llm), ("--questions FILE", questions))
        if v is None
    ]
    if missing:
        err_console.print(
            "graphfuse compare needs " + " and ".join(missing) + ": it answers each question with a language "
            "model (a registered generator; `graphfuse plugins` lists them, graphfuse-openai provides 'openai')",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(2)
    assert llm is not None
    assert questions is not None
    console = Console(stderr=True)
    with Progress(
        TextColumn("comparing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task("compare", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        result = run_sync(
            run_compare(
                store_dir=store,
                questions_path=questions,
                pipeline_names=pipelines.split(","),
                llm=llm,
                judge=judge,
                concurrency=concurrency,
                budget=budget,
                top_k=top_k,
                graph_format=graph_format,
                max_tokens=max_tokens,
                threshold=threshold,
                judge_repeats=judge_repeats,
                cache_path=cache,
                use_cache=not no_cache,
                seed=seed,
                progress=progress,
                granularity=granularity,
                max_per_document=max_per_document,
                bertscore=bertscore,
            )
        )
    data = result.to_dict()
    Console().print(_table(data))
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, markup=False)
    if json_out is not None:
        Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from ..compare import write_report

        path = write_report(result, report)
        console.print(f"report: {path}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
