"""``graphfuse compare``: answer questions with LLM-only, basic RAG and GraphRAG; judge; report."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from .. import presets
from .._core._errors import InvalidInput, NotFound
from .._core._sync import run_sync
from .._retrieval._passages import check_granularity, check_max_per_document
from ..stores import DEFAULT_STORE
from ._context import shaped
from ._errors import err_console, reports_errors
from ._options import Granularity, MaxPerDocument

__all__ = ["build_generator", "parse_model", "register", "run_compare"]

CACHE_FILE = "compare-cache.sqlite"
DEFAULT_PIPELINES = "llm_only,basic_rag,graphrag"
# Tasks in flight when the generator cannot say (OpenAI's own generator says 4 for OpenAI).
DEFAULT_CONCURRENCY = 4


def parse_model(spec: str, option: str) -> tuple[str, dict[str, Any]]:
    """``NAME:MODEL`` (a registered generator and its model) -> ``(NAME, {"model": MODEL})``."""
    name, _, model = spec.partition(":")
    if not name or (":" in spec and not model):
        raise InvalidInput(f"{option} must look like NAME:MODEL (e.g. openai:gpt-4o-mini), got {spec!r}")
    return name, ({"model": model} if model else {})


def build_generator(spec: str, option: str, *, base_url: str | None = None, timeout: float | None = None) -> Any:
    """The registered generator ``NAME:MODEL`` names, with ``base_url`` and ``timeout`` when given.

    A generator that takes neither option raises :class:`~graphfuse.InvalidInput` (from the
    plugin registry) when one is given.
    """
    from ..plugins import get_registry

    name, options = parse_model(spec, option)
    if base_url is not None:
        options["base_url"] = base_url
    if timeout is not None:
        options["timeout"] = timeout
    return get_registry().create("generator", name, **options)


async def _concurrency(generators: list[Any]) -> tuple[int, str]:
    """Tasks in flight when --concurrency is not given: what the generators suggest, else 4."""
    chosen: list[tuple[int, str]] = []
    for generator in generators:
        suggest = getattr(generator, "asuggest_concurrency", None)
        if callable(suggest):
            n = await suggest()
            where = getattr(generator, "endpoint", None) or type(generator).__name__
            chosen.append((int(n), f"suggested by {where}"))
    if not chosen:
        return DEFAULT_CONCURRENCY, "the default"
    return min(chosen)


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
    concurrency: int | None = None,
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
    llm_base_url: str | None = None,
    judge_base_url: str | None = None,
    llm_timeout: float | None = None,
    judge_attempts: int = 3,
    judge_max_tokens: int = 512,
    stop: asyncio.Event | None = None,
    bertscore: bool = False,
) -> Any:
    """Validate everything, open the store, run the comparison; returns the ComparisonReport.

    ``granularity`` and ``max_per_document`` shape every retrieval pipeline's results as in
    ``graphfuse query`` (passages by default; whole documents cut to ``max_document_tokens``).
    ``llm_base_url``/``judge_base_url`` and ``llm_timeout`` go to the generators (the judge's
    URL defaults to the answerer's); ``concurrency`` ``None`` asks the generators
    (``asuggest_concurrency``: a local server's slots), else 4. ``stop`` ends the run early
    with a partial report (see :func:`graphfuse.compare.acompare_pipelines`).
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
    from ..stores import aopen_store

    names = _check_names(pipeline_names)
    if granularity is not None:
        check_granularity(granularity)
    if max_per_document is not None:
        check_max_per_document(max_per_document, "--max-per-document")
    questions = load_questions(questions_path)
    generator = build_generator(llm, "--llm", base_url=llm_base_url, timeout=llm_timeout)
    judge_url = judge_base_url or llm_base_url
    judge_generator = (
        generator
        if judge is None and judge_url == llm_base_url
        else build_generator(judge or llm, "--judge", base_url=judge_url, timeout=llm_timeout)
    )
    generators = [generator] if judge_generator is generator else [generator, judge_generator]
    closers: list[Any] = [getattr(g, "close", None) for g in generators]
    cache = None
    try:
        store = None
        if any(n != "llm_only" for n in names):
            store = await aopen_store(store_dir)
            closers.append(store.aclose)
        pipelines: dict[str, Any] = {}
        for name in names:
            if name == "llm_only":
                pipelines[name] = builtin_pipelines([name])[name]
                continue
            assert store is not None
            if name == "basic_rag":
                vector = shaped(await store.apipeline("minimal"), granularity, max_per_document)
                pipelines[name] = builtin_pipelines([name], vector=vector, budget=budget, top_k=top_k)[name]
            elif name == "graphrag":
                graph = shaped(await store.apipeline("multihop"), granularity, max_per_document)
                pipelines[name] = builtin_pipelines([name], graph=graph, budget=budget, graph_format=graph_format)[name]
            else:
                assert name not in BUILTIN_PIPELINES
                chosen = shaped(await store.apipeline(name), granularity, max_per_document)
                pipelines[name] = context_pipeline(chosen, budget=budget, name=name)
        if use_cache:
            cache = CompareCache(cache_path or Path(store_dir) / CACHE_FILE)
        why = "--concurrency"
        if concurrency is None:
            concurrency, why = await _concurrency(generators)
        report = await acompare_pipelines(
            questions,
            pipelines,
            generator,
            judge=Judge(
                judge_generator,
                threshold=threshold,
                repeats=judge_repeats,
                attempts=judge_attempts,
                max_tokens=judge_max_tokens,
            ),
            bertscore=BERTScore() if bertscore else None,
            concurrency=concurrency,
            max_tokens=max_tokens,
            cache=cache,
            progress=progress,
            seed=seed,
            stop=stop,
        )
        report.settings["concurrency_from"] = why
        return report
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
        ("judge.failures_malformed", "judge bad", "{}"),
        ("judge.failures_timeout", "judge t/o", "{}"),
        ("judge.failures_other", "judge err", "{}"),
        ("errors", "errors", "{}"),
        ("errors_timeout", "ans t/o", "{}"),
        ("retries", "retries", "{}"),
        ("judge.retries", "judge retries", "{}"),
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


class _Progress:
    """``done/total`` with the time left: a bar on a terminal, else a plain line every ``every`` seconds."""

    def __init__(self, console: Console, every: float) -> None:
        self._console = console
        self._every = every
        self._lock = threading.Lock()
        self._done, self._total = 0, 0
        self._started: float | None = None
        self._first_done: tuple[float, int] | None = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        self._bar: Progress | None = None
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("comparing"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("left"),
                TimeRemainingColumn(),
                console=console,
                transient=False,
            )
            self._task = self._bar.add_task("compare", total=None)

    def __enter__(self) -> _Progress:
        if self._bar is not None:
            self._bar.start()
        else:
            self._ticker = threading.Thread(target=self._tick, name="graphfuse-compare-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._bar is not None:
            self._bar.stop()
        elif self._ticker is not None:
            self._ticker.join()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        with self._lock:
            if self._started is None:
                self._started = now
                self._first_done = (now, done)
            self._done, self._total = done, total
        if self._bar is not None:
            self._bar.update(self._task, completed=done, total=total)
        elif done == 0 or done == total:
            self._line()

    def _line(self) -> None:
        with self._lock:
            done, total, started, first = self._done, self._total, self._started, self._first_done
        if started is None or first is None:
            return
        now = time.monotonic()
        text = (
            f"compare: {done}/{total} answers ({100 * done / max(total, 1):.0f}%), {_duration(now - started)} elapsed"
        )
        measured = done - first[1]
        if measured > 0 and done < total:
            text += f", about {_duration((now - first[0]) / measured * (total - done))} left"
        self._console.print(text, highlight=False, markup=False, soft_wrap=True)

    def _tick(self) -> None:
        while not self._stop.wait(self._every):
            with self._lock:
                running = self._started is not None and self._done < self._total
            if running:
                self._line()


def _duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else (f"{minutes}m{secs:02d}s" if minutes else f"{secs}s")


class _Interrupt:
    """SIGINT/SIGTERM during a comparison: stop starting answers and report what finished.

    A second signal stops at once (KeyboardInterrupt), without a report.
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._loop: asyncio.AbstractEventLoop | None = None
        self._event: asyncio.Event | None = None
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._previous[sig] = signal.signal(sig, self._handle)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def bind(self) -> asyncio.Event:
        """The event the comparison watches; call on the loop that runs it."""
        self._loop, self._event = asyncio.get_running_loop(), asyncio.Event()
        if self.signal is not None:
            self._event.set()
        return self._event

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum
        self._console.print(
            f"{signal.Signals(signum).name}: stopping; writing the answers that finished "
            "(send it again to quit at once, without a report)",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        if self._loop is not None and self._event is not None:
            self._loop.call_soon_threadsafe(self._event.set)


@reports_errors
def compare_command(
    questions: Annotated[
        str | None, typer.Option("--questions", help="Questions JSONL: {id, question, answer?} a line.")
    ] = None,
    llm: Annotated[
        str | None, typer.Option("--llm", help="The answering model, NAME:MODEL (e.g. openai:gpt-4o-mini).")
    ] = None,
    llm_base_url: Annotated[
        str | None,
        typer.Option(
            "--llm-base-url",
            help="API root of an OpenAI-compatible server (llama.cpp, Ollama, vLLM), e.g. http://127.0.0.1:8080/v1.",
        ),
    ] = None,
    llm_timeout: Annotated[
        float | None,
        typer.Option("--llm-timeout", min=0.001, help="Seconds one model request may take (generator default: 60)."),
    ] = None,
    store: Annotated[str, typer.Option("--store", help="Store directory (from `graphfuse index`).")] = DEFAULT_STORE,
    pipelines: Annotated[
        str, typer.Option("--pipelines", help="Comma-separated: llm_only, basic_rag, graphrag, or a preset name.")
    ] = DEFAULT_PIPELINES,
    judge: Annotated[
        str | None, typer.Option("--judge", help="The judge model, NAME:MODEL (default: the --llm model).")
    ] = None,
    judge_base_url: Annotated[
        str | None, typer.Option("--judge-base-url", help="API root of the judge's server (default: --llm-base-url).")
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency",
            min=1,
            help="Answers in flight at once (default: a local server's slots, 1 if it does not say; 4 for OpenAI).",
            show_default=False,
        ),
    ] = None,
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
    judge_attempts: Annotated[
        int, typer.Option("--judge-attempts", min=1, help="Judge calls per verdict when replies are malformed.")
    ] = 3,
    judge_max_tokens: Annotated[
        int, typer.Option("--judge-max-tokens", min=1, help="The judge's completion cap per verdict.")
    ] = 512,
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
    progress_every: Annotated[
        float,
        typer.Option("--progress-every", min=0.1, help="Seconds between progress lines when stderr is not a terminal."),
    ] = 30.0,
    width: Annotated[
        int | None,
        typer.Option(
            "--width",
            min=40,
            help="Width of the table (default: the terminal's; its full width when not a terminal).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Answer questions three ways (LLM only, basic RAG, GraphRAG), judge the answers, compare.

    Ctrl-C or SIGTERM stops the run and writes the report of what finished (exit 130 or 143).
    """
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
    interrupt = _Interrupt(console)

    async def main() -> Any:
        return await run_compare(
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
            progress=bar,
            granularity=granularity,
            max_per_document=max_per_document,
            bertscore=bertscore,
            llm_base_url=llm_base_url,
            judge_base_url=judge_base_url,
            llm_timeout=llm_timeout,
            judge_attempts=judge_attempts,
            judge_max_tokens=judge_max_tokens,
            stop=interrupt.bind(),
        )

    interrupt.install()
    try:
        with _Progress(console, progress_every) as bar:
            result = run_sync(main())
    finally:
        interrupt.restore()
    data = result.to_dict()
    out = Console(width=width) if width is not None else Console()
    table = _table(data)
    if width is None and not out.is_terminal:
        # A log or a pipe: the table at its natural width, never cut to 80 columns.
        out = Console(width=max(out.width, Console(width=10_000).measure(table).maximum))
    out.print(table)
    settings = data["settings"]
    console.print(
        f"model {settings['generator']} at {settings.get('endpoint') or 'n/a'}, concurrency {settings['concurrency']} "
        f"({settings.get('concurrency_from', '--concurrency')}), {result.elapsed_s:.1f} s",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    for note in result.notes:
        console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    if json_out is not None:
        Path(json_out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    if report is not None:
        from ..compare import write_report

        path = write_report(result, report)
        console.print(f"report: {path}", highlight=False, markup=False)
    if result.interrupted:
        raise typer.Exit(143 if interrupt.signal == signal.SIGTERM else 130)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
