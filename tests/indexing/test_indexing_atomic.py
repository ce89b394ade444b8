"""Indexing as one unit of work: full validation first, pending markers, convergent re-runs.

A failed re-index keeps the relations; write-time failures after a partial write and
non-UTF-8 sources leave the store as it was; a failed batch's pending documents are never
returned by queries; reserved metadata keys and lone surrogates are rejected.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from graphfuse import Candidate, Document, InvalidInput, Query, VectorRecord
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker, read_sources
from graphfuse.stages import Hydrate
from graphfuse.stores import InMemoryGraphStore, LocalStore, LocalVectorStore, SQLiteGraphStore

DIM = 32
GRAPHFUSE = str(Path(sys.executable).parent / "graphfuse")
runner = CliRunner()


def _records(n: int = 12, changed: bool = False) -> list[SourceRecord]:
    titles = [f"Topic {chr(65 + i)}" for i in range(n)]
    out = []
    for i in range(n):
        text = f"{titles[i]} is discussed here. See {titles[(i + 1) % n]} and {titles[(i + 3) % n]}."
        if changed and i % 2 == 0:
            text += " Revised text."
        out.append(SourceRecord(f"d{i}", text, title=titles[i], links=(f"d{(i + 2) % n}",), metadata={"n": i}))
    return out


async def _state(graph: SQLiteGraphStore | InMemoryGraphStore, vectors: LocalVectorStore) -> dict[str, Any]:
    docs = {d.id: (d.content, dict(d.metadata)) async for d in graph.iter_documents()}
    relations = {}
    for kind in ("LINKS_TO", "MENTIONS", "CO_MENTION", "PART_OF"):
        ids, matrix = await graph.adjacency([kind])
        coo = matrix.tocoo()
        for i, j, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True):
            relations[(ids[i], ids[j], kind)] = round(w, 9)
    hits = await vectors.search([1.0] * DIM, limit=10_000)
    pagerank = {k: round(v, 6) for k, v in (await graph.pagerank()).items()}
    return {"docs": docs, "relations": relations, "vectors": sorted(h.id for h in hits), "pagerank": pagerank}


class _FailOnce:
    """Wraps a graph store: the ``n``-th call of ``method`` raises (after the earlier ones ran)."""

    def __init__(self, inner: Any, method: str, n: int = 1) -> None:
        self._inner, self._method, self._left = inner, method, n

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name != self._method:
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            self._left -= 1
            if self._left == 0:
                raise OSError("disk went away")
            return await attr(*args, **kwargs)

        return call


# -- a failed re-index keeps relations -------------------------------------------------------------


@pytest.mark.parametrize("method", ["delete_relations", "store_documents", "create_relations"])
async def test_failed_reindex_then_original_records_restore_everything(tmp_path: Path, method: str) -> None:
    reference_graph, reference_vectors = SQLiteGraphStore(tmp_path / "ref.sqlite"), LocalVectorStore()
    await Indexer(reference_graph, reference_vectors, HashingEmbedder(DIM), extractors=[TitleLinker()]).aindex(
        _records()
    )
    expected = await _state(reference_graph, reference_vectors)

    graph, vectors = SQLiteGraphStore(tmp_path / "g.sqlite"), LocalVectorStore()
    await Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[TitleLinker()]).aindex(_records())
    failing = _FailOnce(graph, method, 2 if method == "store_documents" else 1)
    with pytest.raises(OSError, match="disk went away"):
        await Indexer(failing, vectors, HashingEmbedder(DIM), extractors=[TitleLinker()], batch_size=4).aindex(  # type: ignore[arg-type]
            _records(changed=True)
        )
    report = await Indexer(graph, vectors, HashingEmbedder(DIM), extractors=[TitleLinker()]).aindex(_records())
    assert report.documents > 0  # the half-replaced documents are redone, not "unchanged"
    assert await _state(graph, vectors) == expected


# -- everything validated before the first write ---------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metadata": {"score": math.nan}}, "'score'"),
        ({"metadata": {"score": 1e999}}, "NaN or infinity"),
        ({"metadata": {"tags": ["ok", "\ud800"]}}, "lone surrogate"),
        ({"metadata": {"when": object()}}, "not JSON data"),
        ({"text": "bad \ud800 text"}, "text: not valid Unicode"),
        ({"title": "T\udcff"}, "title: not valid Unicode"),
    ],
)
def test_records_that_would_fail_at_write_time_are_rejected_up_front(kwargs: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {"id": "r1", "text": "some text", **kwargs}
    with pytest.raises(InvalidInput, match="record 'r1'") as info:
        SourceRecord(**fields)
    assert message in str(info.value)


def test_jsonl_with_a_bad_record_late_in_the_file_indexes_nothing(tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"d{i}", "text": f"text number {i}"}) for i in range(200)]
    lines.append('{"id": "bad", "text": "x", "metadata": {"v": NaN}}')
    lines.append('{"id": "worse", "text": "lone \\ud800 surrogate"}')
    source = tmp_path / "docs.jsonl"
    source.write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["index", str(source), "--store", str(tmp_path / "s"), "--embedder", "hashing"])
    assert result.exit_code == 1
    assert f"{source}:201" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_non_utf8_source_files_name_file_and_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"first line\nsecond \xff line\n")
    with pytest.raises(InvalidInput, match=r"notes.txt:2: not valid UTF-8 \(byte 0xff at column 8\)"):
        list(read_sources([text]))
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_bytes(b'{"id": "a", "text": "ok"}\n{"id": "b", "text": "caf\xe9"}\n')
    with pytest.raises(InvalidInput, match=r"docs.jsonl:2: not valid UTF-8"):
        list(read_sources([jsonl]))
    proc = subprocess.run(
        [GRAPHFUSE, "index", str(text), "--store", str(tmp_path / "s"), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: {text}:2: not valid UTF-8 (byte 0xff at column 8); convert the file to UTF-8"
    ]


@pytest.mark.slow
def test_cli_query_with_invalid_utf8_bytes_is_a_clean_error(tmp_path: Path) -> None:
    source = tmp_path / "a.txt"
    source.write_text("Apples grow in orchards.")
    store = tmp_path / "s"
    assert runner.invoke(app, ["index", str(source), "--store", str(store), "--embedder", "hashing"]).exit_code == 0
    proc = subprocess.run(
        [GRAPHFUSE, "query", b"apple \xff orchard", "--store", str(store)],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert b"query text: not valid Unicode" in proc.stderr
    assert b"Traceback" not in proc.stderr


# -- dimension checked first; a failed batch is never returned -------------------------------------


async def test_embedder_of_another_dimension_writes_nothing() -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore(dimension=DIM)
    with pytest.raises(InvalidInput, match="16-d vectors but the vector store holds 32-d"):
        await Indexer(graph, vectors, HashingEmbedder(16)).aindex(_records())
    assert await graph.count_documents() == 0


class _LyingEmbedder(HashingEmbedder):
    """Claims DIM dimensions, returns fewer (or NaN) for texts containing ``poison``."""

    def __init__(self, bad: str) -> None:
        super().__init__(DIM)
        self._bad = bad

    async def embed_documents(self, texts: Any) -> list[list[float]]:
        out = await super().embed_documents(texts)
        return [
            (v[:8] if self._bad == "short" else [math.nan] * DIM) if "poison" in t else v
            for v, t in zip(out, texts, strict=True)
        ]


@pytest.mark.parametrize("bad", ["short", "nan"])
async def test_a_batch_with_bad_vectors_writes_nothing_of_that_batch(bad: str) -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    records = [*_records(4), SourceRecord("p", "poison pill text")]
    with pytest.raises(InvalidInput, match="'p'" if bad == "nan" else "8-d vectors"):
        await Indexer(graph, vectors, _LyingEmbedder(bad), batch_size=2).aindex(records)
    docs = [d async for d in graph.iter_documents()]
    assert {d.metadata["graphfuse_state"] for d in docs} == {"indexed"}
    assert sorted(d.id for d in docs) == ["d0", "d1", "d2", "d3"]
    assert await vectors.count() == 4


async def test_pending_documents_are_never_returned_by_queries() -> None:
    graph, vectors = InMemoryGraphStore(), LocalVectorStore()
    await Indexer(graph, vectors, HashingEmbedder(DIM)).aindex(_records(4))
    failing = _FailOnce(graph, "create_relations")
    with pytest.raises(OSError, match="disk went away"):
        await Indexer(failing, vectors, HashingEmbedder(DIM)).aindex(_records(4, changed=True))  # type: ignore[arg-type]
    pending = [d.id async for d in graph.iter_documents() if d.metadata["graphfuse_state"] == "pending"]
    assert pending  # the failure left some
    hydrate = Hydrate(graph)
    everything = [Candidate(Document(i), {"semantic": 0.5}) async for i in _ids(graph)]
    shown = await hydrate.run(Query("topic"), everything, None)  # type: ignore[arg-type]
    assert not {c.id for c in shown} & set(pending)
    assert {c.id for c in shown} == {c.id for c in everything} - set(pending)


async def _ids(graph: InMemoryGraphStore) -> Any:
    async for d in graph.iter_documents():
        yield d.id


# -- reserved metadata namespace -------------------------------------------------------------------


@pytest.mark.parametrize("key", ["parent_id", "graphfuse_state", "graphfuse_anything"])
def test_reserved_metadata_keys_are_rejected_by_name(key: str) -> None:
    with pytest.raises(InvalidInput, match=f"metadata key '{key}' is reserved"):
        SourceRecord("r1", "text", metadata={key: "d1"})


def test_reserved_key_in_a_source_file_names_the_line(tmp_path: Path) -> None:
    source = tmp_path / "docs.jsonl"
    source.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "metadata": {"parent_id": "a"}}\n')
    with pytest.raises(InvalidInput, match=r"docs.jsonl:2: record 'b': metadata key 'parent_id' is reserved"):
        list(read_sources([source]))


# -- lone surrogates through the API ---------------------------------------------------------------


async def test_lone_surrogates_through_the_api_raise_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="query text: not valid Unicode"):
        Query("what about \ud800")
    for graph in (InMemoryGraphStore(), SQLiteGraphStore(tmp_path / "g.sqlite")):
        with pytest.raises(InvalidInput, match="content: not valid Unicode"):
            await graph.store_documents([Document("a", "bad \ud800")])
        with pytest.raises(InvalidInput, match="lone surrogate"):
            await graph.store_documents([Document("a", "ok", {"k": "\udcff"})])
        with pytest.raises(InvalidInput, match="document id: not valid Unicode"):
            await graph.store_documents([Document("a\ud800", "ok")])
        assert await graph.count_documents() == 0
    vectors = LocalVectorStore(tmp_path / "v.sqlite")
    with pytest.raises(InvalidInput, match="lone surrogate"):
        await vectors.upsert([VectorRecord("a", [1.0, 0.0], {"k": "\ud800"})])
    assert await vectors.count() == 0


async def test_local_store_roundtrip_after_validation(tmp_path: Path) -> None:
    store = LocalStore.open(tmp_path / "s")
    try:
        report = await Indexer(store.graph, store.vectors, HashingEmbedder(DIM)).aindex(_records(3))
        assert report.documents == 3
    finally:
        await store.aclose()
