"""``graphfuse query``: retrieve from a store with a preset and show every signal's share."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._core._errors import InvalidInput
from .._core._filters import MetadataFilter
from .._core._sync import run_sync
from .._core._types import Query, Result
from .._retrieval._passages import check_granularity
from ..scoring import DEFAULT_WEIGHTS
from ..stores import DEFAULT_STORE, aopen_store
from ._errors import err_console, reports_errors
from ._options import FilterJSON, Granularity, MaxPerDocument

__all__ = ["register", "results_table"]


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


SNIPPET_CHARS = 200


def _snippet(content: str | None) -> str | None:
    if content is None:
        return None
    text = " ".join(content.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 3] + "..."


def results_json(results: Sequence[Result]) -> list[dict[str, Any]]:
    """``--json`` output, best first: ``{"id", "document_id", "title", "snippet", "score", "signals",
    "contributions", "weights"}`` per result.

    ``contributions`` is each signal's share of the score (:attr:`~graphfuse.Result.contributions`,
    empty for a scorer that does not explain), ``weights`` the weight each signal the result holds
    got (``contribution / value``; with the adaptive scorer it differs per query).
    ``document_id`` is the page a passage comes from (:attr:`~graphfuse.Result.document_id`);
    ``title`` is the document's ``title`` metadata (``null`` when it has none); ``snippet`` the
    start of its text, whitespace collapsed, at most 200 characters.
    """
    rows = []
    for r in results:
        title = r.document.metadata.get("title")
        rows.append(
            {
                "id": r.id,
                "document_id": r.document_id,
                "title": title if isinstance(title, str) else None,
                "snippet": _snippet(r.document.content),
                "score": r.score,
                "signals": dict(r.signals),
                "contributions": dict(r.contributions),
                "weights": {
                    n: share / r.signals[n] for n, share in r.contributions.items() if r.signals.get(n, 0.0) > 0.0
                },
            }
        )
    return rows


async def _run(
    text: str,
    store_dir: str,
    preset: str | None,
    top_k: int,
    filter_: MetadataFilter | None,
    shape: dict[str, Any] | None = None,
) -> tuple[str, list[Result]]:
    async with await aopen_store(store_dir, mode="ro") as store:
        name = preset or store.default_preset
        pipeline = await store.apipeline(name)
        for note in store.notes:
            err_console.print(f"note: {note}", markup=False)
        given = {k: v for k, v in (shape or {}).items() if v is not None}
        return name, await pipeline.aretrieve(text, top_k=top_k, filter=filter_, **given)


@reports_errors
def query(
    text: Annotated[str, typer.Argument(help="The question or search text.", show_default=False)],
    store: Annotated[str, typer.Option("--store", help="Store directory.")] = DEFAULT_STORE,
    preset: Annotated[
        str | None,
        typer.Option(
            "--preset",
            help="Pipeline preset (see graphfuse.presets; default: multihop, or standard on a store "
            "whose graph store cannot list its documents).",
            show_default=False,
        ),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", min=1, help="How many results.")] = 10,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print JSON: a list of {id, title, snippet, score, signals, contributions, weights}."
        ),
    ] = False,
    filter_: FilterJSON = None,
    granularity: Granularity = None,
    max_per_document: MaxPerDocument = None,
) -> None:
    """Retrieve from a store: every signal and its weighted contribution to the score."""
    Query(text)  # refuse an empty query before opening anything
    parsed = parse_filter(filter_)
    if granularity is not None:
        check_granularity(granularity)
    shape = {"granularity": granularity, "max_per_document": max_per_document}
    preset, results = run_sync(_run(text, store, preset, top_k, parsed, shape))
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
