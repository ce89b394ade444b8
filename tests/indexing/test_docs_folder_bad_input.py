"""A documentation folder as users have them: huge pages, pages without sentences, binary files,
links that go nowhere, empty front-matter titles, snippet includes that include each other."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import presets, run_sync
from graphfuse.cli import app
from graphfuse.context import build_context, get_token_counter
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import LINKS_TO, Indexer, SourceRecord, TokenChunker, read_sources, records_from_loaded
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

runner = CliRunner()


def _index(records: list[SourceRecord]) -> tuple[InMemoryGraphStore, LocalVectorStore, HashingEmbedder]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    Indexer.for_records(records, graph, vectors, embedder).index(records)
    return graph, vectors, embedder


@pytest.mark.slow
def test_a_5_mb_markdown_page_is_read_clean(tmp_path: Path) -> None:
    section = (
        "## Part { #part }\n\nThe service answers requests; see [the other page](other.md).\n\n"
        '!!! note "Remember"\n    Tests set `app.dependency_overrides` first.\n\n'
        "```python\napp = FastAPI()\n```\n\n<!-- hidden -->\n"
    )
    text = "# Big page\n\n" + section * (5_000_000 // len(section))
    (tmp_path / "big.md").write_text(text)
    (tmp_path / "other.md").write_text("# Other\n\nThe other page.\n")
    assert (tmp_path / "big.md").stat().st_size > 4_900_000
    big = {r.id: r for r in read_sources([tmp_path])}["big.md"]
    assert big.links == ("other.md",)
    assert big.title == "Big page"
    for markup in ("{ #part }", "!!!", "<!--", "](other.md)"):
        assert markup not in big.text
    assert big.text.count("Tests set `app.dependency_overrides` first.") == text.count("dependency_overrides")
    assert big.text.count("app = FastAPI()") == text.count("app = FastAPI()")
    chunks = TokenChunker(max_tokens=256).split(big.text[:200_000])
    assert all(len(c.text) < 4000 for c in chunks)


@pytest.mark.slow
def test_a_page_with_no_sentence_boundaries_is_indexed_and_packed_within_budget(tmp_path: Path) -> None:
    words = " ".join(f"term{i % 997}" for i in range(60_000))  # no full stop, no newline
    (tmp_path / "flat.md").write_text(words)
    (tmp_path / "short.md").write_text("# Short\n\nA short page about term42.\n")
    records = list(read_sources([tmp_path]))
    graph, vectors, embedder = _index(records)
    results = run_sync(presets.no_rerank(graph, vectors, embedder).aretrieve("term42 term43", top_k=5))
    assert results
    assert max(len(r.document.content) for r in results) < 10_000  # chunks, not the whole page
    for fmt in ("passages", "evidence"):
        context = build_context("term42 term43", results, budget=200, format=fmt)
        assert context.text.strip()
        assert get_token_counter().count(context.text) <= 200


def test_binary_and_non_utf8_files_in_a_folder_are_skipped_and_reported(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nA good page.\n")
    (docs / "latin1.md").write_bytes("# Caf\xe9\n\nR\xe9sum\xe9.\n".encode("latin-1"))
    (docs / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    skipped: list[tuple[str, str]] = []
    records = list(read_sources([docs], on_skip=lambda path, why: skipped.append((path, why))))
    assert [r.id for r in records] == ["good.md"]
    assert sorted(skipped) == [
        (str(docs / "image.md"), "a binary file, not text"),
        (f"{docs / 'latin1.md'}:1", "not valid UTF-8 (byte 0xe9 at column 6); convert the file to UTF-8"),
    ]
    result = runner.invoke(app, ["index", str(docs), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # (the console wraps long lines)
    assert "indexed 1 documents" in said
    assert f"skipped {docs / 'image.md'}: a binary file, not text" in said
    assert f"skipped {docs / 'latin1.md'}:1: not valid UTF-8" in said


def test_links_outside_the_folder_or_to_missing_pages_link_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nNot in the docs.\n")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(
        "# A\n\n[out](../outside.md), [gone](missing.md), [[Nowhere]], [abs](/etc/passwd), [ok](b.md)\n"
    )
    (docs / "b.md").write_text("# B\n\nBee.\n")
    records = {r.id: r for r in read_sources([docs])}
    assert sorted(records) == ["a.md", "b.md"]
    assert records["a.md"].links == ("b.md",)
    assert records["a.md"].text == "# A\n\nout, gone, Nowhere, abs, ok\n"
    graph, _, _ = _index(list(records.values()))
    rels = run_sync(graph.relations(["a.md"]))
    assert [(r.source, r.target) for r in rels if r.type == LINKS_TO] == [("a.md", "b.md")]


@pytest.mark.parametrize("front", ['title: ""', "title:", "title: '   '", 'title: "{ #anchor }"'])
def test_an_empty_front_matter_title_falls_back_to_the_heading_then_the_file_name(tmp_path: Path, front: str) -> None:
    (tmp_path / "headed.md").write_text(f"---\n{front}\ntags: [x]\n---\n# The Heading {{ #h }}\n\nText.\n")
    (tmp_path / "plain-page.md").write_text(f"---\n{front}\n---\nText without a heading.\n")
    records = {r.id: r for r in read_sources([tmp_path])}
    assert records["headed.md"].title == "The Heading"
    assert records["headed.md"].metadata["tags"] == ["x"]
    assert records["plain-page.md"].title == "plain page"


def test_snippet_includes_that_include_each_other_do_not_loop(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text('# A\n\nAlpha text.\n\n--8<-- "b.md"\n')
    (tmp_path / "b.md").write_text('# B\n\nBeta text.\n\n--8<--\na.md\nb.md\n--8<--\n\n--8<-- "a.md"\n')
    records = {r.id: r for r in read_sources([tmp_path])}
    assert records["a.md"].text == "# A\n\nAlpha text.\n"
    assert records["b.md"].text == "# B\n\nBeta text.\n"
    result = runner.invoke(app, ["index", str(tmp_path), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output


def test_many_unrelated_documents_are_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    records = [SourceRecord(f"d{i}", f"plain words number {i} with nothing named") for i in range(25)]
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    with caplog.at_level(logging.WARNING, logger="graphfuse.indexing"):
        report = Indexer(graph, vectors, embedder).index(records)
    (warning,) = [w for w in report.warnings if "no relation between" in w]
    assert "no relation between the 25 documents" in warning
    assert "entity_graph=True" in warning
    assert "titles or links" in warning
    assert warning in caplog.text
    # A few documents, or documents that link, are not warned about.
    few = Indexer(InMemoryGraphStore(), LocalVectorStore(), embedder).index(records[:5])
    assert not any("no relation" in w for w in few.warnings)
    linked = [SourceRecord(r.id, r.text, links=("d0",) if r.id == "d1" else ()) for r in records]
    report = Indexer(InMemoryGraphStore(), LocalVectorStore(), embedder).index(linked)
    assert not any("no relation" in w for w in report.warnings)


def test_a_page_of_markup_only_is_skipped_and_links_to_it_link_nothing(tmp_path: Path) -> None:
    (tmp_path / "api.md").write_text("::: pydantic.fields\n    options:\n      members: true\n")
    (tmp_path / "guide.md").write_text("# Guide\n\nSee the [API](api.md) and [more](more.md).\n")
    (tmp_path / "more.md").write_text("# More\n\nMore text.\n")
    skipped: list[str] = []
    records = list(read_sources([tmp_path], on_skip=lambda path, why: skipped.append(why)))
    assert [r.id for r in records] == ["guide.md", "more.md"]
    assert skipped == ["the file has no text besides its links and markup"]
    assert records[0].links == ("more.md",)
    loaded = records_from_loaded(
        [(p.name, p.read_text(), {"file_path": str(p)}) for p in sorted(tmp_path.glob("*.md"))],
        path_key="file_path",
        on_skip=lambda doc_id, why: skipped.append(doc_id),
    )
    assert [(r.id, r.links) for r in loaded] == [("guide.md", ("more.md",)), ("more.md", ())]
    assert skipped[-1] == "api.md"
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(dimension=64)
    report = Indexer.for_records(loaded, graph, vectors, embedder).index(loaded)
    assert report.warnings == []
