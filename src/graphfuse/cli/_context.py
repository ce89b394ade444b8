"""``graphfuse context``: retrieve from a store and assemble a token-budgeted context for an LLM."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console

from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._sync import run_sync
from .._core._types import Query
from .._retrieval._passages import check_granularity
from ..stores import DEFAULT_STORE, aopen_store
from ._errors import err_console, reports_errors
from ._options import FilterJSON, Granularity, MaxPerDocument
from ._query import parse_filter

__all__ = ["register", "shaped"]


def shaped(pipeline: Any, granularity: str | None, max_per_document: int | None) -> Any:
    """``pipeline`` whose results are ``granularity`` (passage or document) with at most
    ``max_per_document`` passages of a document; unchanged when both are ``None``."""
    if granularity is None and max_per_document is None:
        return pipeline
    if pipeline.passages is None:
        raise InvalidInput(f"--granularity and --max-per-document need a preset with passages; {pipeline!r} has none")
    return pipeline.with_passages(
        pipeline.passages.with_defaults(granularity=granularity, max_per_document=max_per_document)
    )


async def _run(
    text: str,
    store_dir: str,
    preset: str | None,
    budget: int,
    fmt: str,
    top_k: int,
    counter: str | None,
    filter_: MetadataFilter | None,
    granularity: str | None = None,
    max_per_document: int | None = None,
) -> Any:
    from ..context import aretrieve_context, get_token_counter

    token_counter = get_token_counter(counter) if counter else None
    async with await aopen_store(store_dir, mode="ro") as store:  # like `query`, writes nothing
        pipeline = shaped(await store.apipeline(preset or store.default_preset), granularity, max_per_document)
        for note in store.notes:
            err_console.print(f"note: {note}", markup=False)
        return await aretrieve_context(
            pipeline, text, budget=budget, format=fmt, top_k=top_k, filter=filter_, counter=token_counter
        )


@reports_errors
def context(
    text: Annotated[str, typer.Argument(help="The question.", show_default=False)],
    budget: Annotated[int, typer.Option("--budget", help="Context tokens (the text never has more).")] = 600,
    format_: Annotated[str, typer.Option("--format", help="passages, evidence or graph.")] = "passages",
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    preset: Annotated[
        str | None,
        typer.Option("--preset", help="Pipeline preset (default: as for `query`).", show_default=False),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="How many results to assemble from.")] = 10,
    counter: Annotated[
        str | None, typer.Option("--counter", help="Token counter name (default: cl100k_base, else regex).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help='Print JSON: {"text", "tokens", "counter", "sources", "dropped", ...}.')
    ] = False,
    filter_: FilterJSON = None,
    granularity: Granularity = None,
    max_per_document: MaxPerDocument = None,
) -> None:
    """Assemble the context an LLM would read for a question, within a token budget."""
    from ..context import check_budget, check_format

    Query(text)  # refuse an empty question before opening anything
    check_format(format_)
    check_budget(budget)
    parsed = parse_filter(filter_)
    if granularity is not None:
        check_granularity(granularity)
    ctx = run_sync(_run(text, store, preset, budget, format_, top_k, counter, parsed, granularity, max_per_document))
    if as_json:
        typer.echo(json.dumps(ctx.to_dict(), indent=2, ensure_ascii=False))
        return
    typer.echo(ctx.text)
    err = Console(stderr=True)
    err.print(
        f"{ctx.tokens} of {ctx.budget} tokens ({ctx.counter}), format {ctx.format}; "
        f"{len(ctx.sources)} sources, {len(ctx.dropped)} dropped",
        highlight=False,
        markup=False,
    )
    for n, s in enumerate(ctx.sources, 1):
        err.print(f"[{n}] {s.id}  {s.title or ''}  score {s.score:.4f}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("context")(context)
