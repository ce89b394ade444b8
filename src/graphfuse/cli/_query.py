"""``graphfuse query``: retrieve from a store with a preset and show every signal's share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import presets
from .._errors import InvalidInput
from .._filters import MetadataFilter
from .._pipeline import Pipeline
from .._sync import run_sync
from .._types import Query, Result
from ..plugins import get_registry
from ..scoring import DEFAULT_WEIGHTS
from ._errors import reports_errors
from ._store import DEFAULT_STORE, OpenStore, open_store

__all__ = ["build_preset", "register", "results_table"]

DEFAULT_PRESET = "standard"


async def build_preset(name: str, store: OpenStore) -> Pipeline:
    """Preset ``name`` over the store's components.

    ``multihop`` gets its BM25 index and title linker from the store directory's
    :class:`~graphfuse.multihop.CorpusCache` (or built from the store's documents); a
    preset that reranks gets a reranker made from the store's own embedder (offline).
    """
    if name not in presets.names():
        raise InvalidInput(f"unknown preset {name!r}; known presets: {', '.join(presets.names())}")
    components: dict[str, Any] = {
        "graph_store": store.graph,
        "vector_store": store.vectors,
        "embedder": store.embedder,
    }
    if name == "multihop":
        from ..multihop import CorpusCache, corpus_indexes

        if not callable(getattr(store.graph, "iter_documents", None)):
            raise InvalidInput(
                f"preset 'multihop' needs to read the corpus back from the graph store, which graph store "
                f"{store.settings['graph_store']!r} cannot list: use the default 'sqlite' graph store"
            )
        if callable(getattr(store.graph, "generation", None)):
            # Persisted in the store directory, refreshed incrementally when the store changed.
            components["bm25"], components["linker"] = await CorpusCache(store.directory).indexes(store.graph)
        else:
            components["bm25"], components["linker"] = await corpus_indexes(store.graph)
    try:
        return presets.build(name, **components)
    except InvalidInput as exc:
        # Presets that rerank need a reranker: the store's own embedder makes one, offline.
        if "reranker" not in str(exc):
            raise
    components["reranker"] = get_registry().create("reranker", "embedding", embedder=store.embedder)
    return presets.build(name, **components)


def parse_filter(raw: str | None) -> MetadataFilter | None:
    """``--filter``: a JSON object of metadata conditions."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--filter is not valid JSON ({exc.msg} at character {exc.pos}): {raw!r}") from exc
    if not isinstance(value, dict):
        raise InvalidInput(f'--filter must be a JSON object such as {{"tenant": "acme"}}, got {raw!r}')
    return MetadataFilter.parse(value)


def _signal_order(results: Sequence[Result]) -> list[str]:
    names = {n for r in results for n in r.signals}
    known = [n for n in DEFAULT_WEIGHTS if n in names]
    return known + sorted(names - set(known))


def _label(result: Result) -> str:
    title = result.document.metadata.get("title")
    text = title if isinstance(title, str) and title else (result.document.content or "")
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def results_table(results: Sequence[Result], title: str | None = None) -> Table:
    """A table of results: rank, id, title or text, score, and per signal ``value (+share)``."""
    order = _signal_order(results)
    table = Table(title=None if title is None else Text(title), title_justify="left", show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("id", overflow="fold", max_width=24)
    table.add_column("document", max_width=40)
    table.add_column("score", justify="right")
    table.add_column("signal  value  (share of score)", no_wrap=True)
    for rank, r in enumerate(results, 1):
        lines = []
        for name in order:
            if name in r.signals:
                share = r.contributions.get(name)
                lines.append(f"{name:<10} {r.signals[name]:.3f}" + ("" if share is None else f"  (+{share:.3f})"))
        table.add_row(str(rank), Text(r.id), Text(_label(r)), f"{r.score:.4f}", Text("\n".join(lines)))
    return table


def results_json(results: Sequence[Result]) -> list[dict[str, Any]]:
    """``--json`` output: ``{"id", "score", "signals"}`` per result, best first."""
    return [{"id": r.id, "score": r.score, "signals": dict(r.signals)} for r in results]


async def _run(text: str, store_dir: str, preset: str, top_k: int, filter_: MetadataFilter | None) -> list[Result]:
    store = await open_store(store_dir, create=False)
    try:
        pipeline = await build_preset(preset, store)
        return await pipeline.aretrieve(text, top_k=top_k, filter=filter_)
    finally:
        await store.close()


@reports_errors
def query(
    text: Annotated[str, typer.Argument(help="The question or search text.", show_default=False)],
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    preset: Annotated[str, typer.Option("--preset", help="Pipeline preset (see graphfuse.presets).")] = DEFAULT_PRESET,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="How many results.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON: a list of {id, score, signals}.")] = False,
    filter_: Annotated[
        str | None, typer.Option("--filter", help='Metadata filter as JSON, e.g. \'{"lang": "en"}\'.')
    ] = None,
) -> None:
    """Retrieve from a store: every signal and its weighted contribution to the score."""
    Query(text)  # refuse an empty query before opening anything
    parsed = parse_filter(filter_)
    results = run_sync(_run(text, store, preset, top_k, parsed))
    if as_json:
        typer.echo(json.dumps(results_json(results), indent=2))
        return
    console = Console()
    if not results:
        console.print("no results")
        return
    console.print(results_table(results, title=f"{preset}: {text}"))


def register(app: typer.Typer) -> None:
    app.command("query")(query)
