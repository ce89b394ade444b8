"""``graphfuse demo``: vector-only (``minimal``) against ``multihop`` retrieval on the bundled sample."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._core._sync import run_sync
from .._core._types import Result
from ..data import SampleQuestion, sample_corpus, sample_questions
from ..indexing import IndexReport, read_sources
from ..stores import aopen_store, default_embedder
from ._errors import reports_errors
from ._index import index_records

__all__ = ["register"]

K = 5
VECTOR_ONLY = "minimal"
GRAPH_AWARE = "multihop"


@dataclass
class _Answer:
    question: SampleQuestion
    vector: list[tuple[str, str]]  # (document id, title), best first, top K
    graph: list[tuple[str, str]]

    def recall(self, ranking: list[tuple[str, str]]) -> float:
        gold = set(self.question.gold_ids)
        return len(gold & {doc for doc, _ in ranking}) / len(gold)


def _top_documents(results: Sequence[Result], k: int) -> list[tuple[str, str]]:
    # A long passage may be retrieved as a chunk: count its document once, at its best rank.
    out: list[tuple[str, str]] = []
    for r in results:
        parent = r.document.metadata.get("parent_id")
        doc = parent if isinstance(parent, str) else r.id
        if doc not in {d for d, _ in out}:
            title = r.document.metadata.get("title")
            out.append((doc, title if isinstance(title, str) else doc))
        if len(out) == k:
            break
    return out


async def _run(store_dir: Path, embedder: str, console: Console) -> tuple[IndexReport, list[_Answer]]:
    # One store and one embedder for indexing and querying: the model loads once.
    with sample_corpus() as corpus:
        records = list(read_sources([corpus]))
    store = await aopen_store(store_dir, create=True, embedder=embedder)
    try:
        report = await index_records(store, records, console)
        vector_only = await store.apipeline(VECTOR_ONLY)
        graph_aware = await store.apipeline(GRAPH_AWARE)
        answers = []
        for q in sample_questions():
            vector = await vector_only.aretrieve(q.question, top_k=4 * K)
            graph = await graph_aware.aretrieve(q.question, top_k=4 * K)
            answers.append(_Answer(q, _top_documents(vector, K), _top_documents(graph, K)))
        return report, answers
    finally:
        await store.aclose()


def _comparison(answer: _Answer) -> Table:
    gold = set(answer.question.gold_ids)
    table = Table(
        title=Text(f"{answer.question.question}  (answer: {answer.question.answer})"),
        title_justify="left",
        caption=f"* = gold passage; {len(gold)} gold passages",
        caption_justify="left",
    )
    table.add_column("#", justify="right")
    table.add_column(f"vector only ({VECTOR_ONLY})")
    table.add_column(f"graph-aware ({GRAPH_AWARE})")

    def cell(ranking: list[tuple[str, str]], i: int) -> Text:
        if i >= len(ranking):
            return Text("")
        doc, title = ranking[i]
        return Text(f"* {title}", style="bold green") if doc in gold else Text(f"  {title}")

    for i in range(K):
        table.add_row(str(i + 1), cell(answer.vector, i), cell(answer.graph, i))
    return table


@reports_errors
def demo(
    store: Annotated[
        str | None, typer.Option("--store", help="Store directory to index into (default: a temporary one).")
    ] = None,
    embedder: Annotated[
        str | None, typer.Option("--embedder", help="Registered embedder name (default: local, else hashing).")
    ] = None,
    show: Annotated[int, typer.Option("--show", min=0, help="How many questions to show in full.")] = 3,
) -> None:
    """Index the bundled 2WikiMultihopQA sample and compare vector-only with graph-aware retrieval."""
    console = Console()
    if embedder is None:
        embedder, note = default_embedder()
        if note:
            console.print(f"note: {note}", highlight=False, markup=False)
    with tempfile.TemporaryDirectory(prefix="graphfuse-demo-") as tmp:
        store_dir = Path(store) if store is not None else Path(tmp) / "store"
        report, answers = run_sync(_run(store_dir, embedder, console))
        console.print(
            f"indexed the sample: {report.documents + report.skipped} passages, {report.relations} relations "
            f"(embedder {embedder!r}, store {str(store_dir)!r})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    for answer in answers[:show]:
        console.print()
        console.print(_comparison(answer))
    vector = sum(a.recall(a.vector) for a in answers) / len(answers)
    graph = sum(a.recall(a.graph) for a in answers) / len(answers)
    console.print()
    console.print(
        f"Recall@{K} over {len(answers)} sample questions: vector only ({VECTOR_ONLY}) {vector:.3f}, "
        f"graph-aware ({GRAPH_AWARE}) {graph:.3f}",
        highlight=False,
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
