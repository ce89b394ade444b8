"""``graphfuse delete``, ``graphfuse index --prune``, ``query --json`` fields, empty ``.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from graphfuse.cli import app

runner = CliRunner()

DOCS = [
    {"id": "apples", "title": "Apples", "text": "Apples grow in orchards; Pears grow nearby.", "links": ["pears"]},
    {"id": "pears", "title": "Pears", "text": "Pears are sweet fruit picked in autumn.", "links": ["apples"]},
    {"id": "plums", "title": "Plums", "text": "Plums ripen late in summer, after Pears.", "links": ["pears"]},
]


def write(path: Path, docs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def index(*args: str) -> str:
    result = runner.invoke(app, ["index", *args, "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return result.stdout


def query_ids(store: Path, text: str = "fruit") -> list[str]:
    result = runner.invoke(app, ["query", text, "--store", str(store), "--preset", "no_rerank", "--json"])
    assert result.exit_code == 0, result.output
    return [row["id"] for row in json.loads(result.stdout)]


def test_delete_removes_documents_with_their_relations(tmp_path: Path) -> None:
    store = tmp_path / "store"
    index(str(write(tmp_path / "docs.jsonl", DOCS)), "--store", str(store))
    assert set(query_ids(store)) == {"apples", "pears", "plums"}

    result = runner.invoke(app, ["delete", "--store", str(store), "pears", "plums"])
    assert result.exit_code == 0, result.output
    assert "deleted 2 documents" in result.stdout
    assert query_ids(store) == ["apples"]  # not reachable by a vector hit nor by a graph hop


def test_delete_unknown_id_fails_and_deletes_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    index(str(write(tmp_path / "docs.jsonl", DOCS)), "--store", str(store))
    result = runner.invoke(app, ["delete", "--store", str(store), "pears", "nope"])
    assert result.exit_code == 1
    assert "not indexed documents" in result.output
    assert "'nope'" in result.output
    assert "Traceback" not in result.output
    assert set(query_ids(store)) == {"apples", "pears", "plums"}
    ok = runner.invoke(app, ["delete", "--store", str(store), "pears", "nope", "--missing-ok"])
    assert ok.exit_code == 0, ok.output
    assert "deleted 1 documents" in ok.stdout


def test_delete_needs_an_existing_store(tmp_path: Path) -> None:
    result = runner.invoke(app, ["delete", "--store", str(tmp_path / "none"), "x"])
    assert result.exit_code == 1
    assert "no GraphFuse store" in result.output


def test_index_prune_removes_documents_gone_from_the_sources(tmp_path: Path) -> None:
    store = tmp_path / "store"
    source = write(tmp_path / "docs.jsonl", DOCS)
    index(str(source), "--store", str(store))
    write(source, DOCS[:2])  # plums left the source
    kept = index(str(source), "--store", str(store))
    assert "pruned" not in kept
    assert set(query_ids(store)) == {"apples", "pears", "plums"}  # without --prune nothing goes
    out = index(str(source), "--store", str(store), "--prune")
    assert "pruned 1 documents" in out
    assert set(query_ids(store)) == {"apples", "pears"}
    again = index(str(source), "--store", str(store), "--prune")
    assert "pruned 0 documents" in again
    assert "2 unchanged" in again


def test_query_json_has_title_and_snippet(tmp_path: Path) -> None:
    store = tmp_path / "store"
    long_text = "Pears are sweet fruit picked in autumn. " * 20
    docs = [DOCS[0], {**DOCS[1], "text": long_text}]
    index(str(write(tmp_path / "docs.jsonl", docs)), "--store", str(store))
    result = runner.invoke(app, ["query", "sweet pears", "--store", str(store), "--json", "--preset", "minimal"])
    assert result.exit_code == 0, result.output
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert set(rows["pears"]) == {
        "id",
        "document_id",
        "title",
        "snippet",
        "score",
        "signals",
        "contributions",
        "weights",
    }
    assert rows["pears"]["title"] == "Pears"
    assert rows["pears"]["snippet"].startswith("Pears are sweet fruit picked in autumn. Pears")
    assert len(rows["pears"]["snippet"]) == 200
    assert rows["pears"]["snippet"].endswith("...")
    assert rows["apples"]["snippet"] == DOCS[0]["text"]


def test_an_empty_jsonl_is_treated_like_an_empty_txt(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    for name, content in (("empty.txt", ""), ("empty.jsonl", ""), ("blank.jsonl", "\n  \n")):
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        result = runner.invoke(app, ["index", str(path), "--store", store, "--embedder", "hashing"])
        assert result.exit_code == 1, (name, result.output)
        assert f"{path}: the file is empty" in " ".join(result.output.split()).replace("\n", "")
        assert "Traceback" not in result.output


def test_prune_with_no_sources_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "store"
    index(str(write(tmp_path / "docs.jsonl", DOCS)), "--store", str(store))
    empty_dir = tmp_path / "nothing"
    empty_dir.mkdir()
    result = runner.invoke(app, ["index", str(empty_dir), "--store", str(store), "--prune"])
    assert result.exit_code == 1
    assert "would empty the store" in result.output
    assert len(query_ids(store)) == 3
