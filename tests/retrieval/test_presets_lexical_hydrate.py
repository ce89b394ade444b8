"""The `bm25` and `hybrid` presets load text and never return pending documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import Document
from graphfuse.cli import app
from graphfuse.context import aretrieve_context
from graphfuse.stores import LocalStore, aopen_store

runner = CliRunner()

DOCS = [
    {"id": "apples", "title": "Apples", "text": "Apples grow in orchards near Pears; orchard apples ripen late."},
    {"id": "pears", "title": "Pears", "text": "Pears are sweet fruit picked in autumn from pear orchards."},
    {"id": "plums", "title": "Plums", "text": "Plums and orchards: plum trees flower early in spring."},
]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    source = tmp_path / "docs.jsonl"
    source.write_text("\n".join(json.dumps(d) for d in DOCS) + "\n")
    result = runner.invoke(app, ["index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return tmp_path / "s"


async def _mark_pending(store: Path, doc_id: str) -> None:
    local = LocalStore.open(store)
    try:
        doc = await local.graph.get_document(doc_id)
        # What an index run killed between its two writes leaves behind.
        await local.graph.store_documents(
            [Document(doc.id, doc.content, {**doc.metadata, "graphfuse_state": "pending"})]
        )
    finally:
        await local.aclose()


@pytest.mark.parametrize("preset", ["bm25", "hybrid"])
async def test_lexical_presets_hydrate_and_skip_pending(store: Path, preset: str) -> None:
    await _mark_pending(store, "plums")
    async with await aopen_store(store, mode="ro") as s:
        pipeline = await s.apipeline(preset)
        results = await pipeline.aretrieve("orchards plum apples pears", top_k=10)
        ids = [r.id for r in results]
        assert "plums" not in ids
        assert set(ids) == {"apples", "pears"}
        for r in results:
            assert r.document.content is not None
            assert r.document.metadata.get("title") == r.id.capitalize()
        context = await aretrieve_context(pipeline, "orchards apples", budget=300, format="graph")
        assert "Apples" in context.text
        assert "plums" not in context.text.lower()


@pytest.mark.parametrize("preset", ["bm25", "hybrid"])
def test_cli_query_shows_titles_and_snippets(store: Path, preset: str) -> None:
    result = runner.invoke(app, ["query", "orchards apples", "--store", str(store), "--preset", preset, "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert rows
    assert all(row["title"] is not None for row in rows)
    assert all(row["snippet"] for row in rows)
