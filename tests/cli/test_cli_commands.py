"""The graphfuse command line: index, query and plugins, including every bad-input path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from _plugin_dists import FakeSite, fake_site
from typer.testing import CliRunner

from graphfuse.cli import app


@pytest.fixture
def site(tmp_path: Path) -> Iterator[FakeSite]:
    with fake_site(tmp_path) as s:
        yield s


runner = CliRunner()

DOCS = [
    {
        "id": "apples",
        "title": "Apples",
        "text": "Apples grow in orchards; Pears grow nearby.",
        "links": ["pears"],
        "metadata": {"lang": "en"},
    },
    {
        "id": "pears",
        "title": "Pears",
        "text": "Pears are sweet fruit picked in autumn.",
        "links": ["apples"],
        "metadata": {"lang": "en"},
    },
    {
        "id": "birnen",
        "title": "Birnen",
        "text": "Birnen sind süße Früchte.",
        "links": ["pears"],
        "metadata": {"lang": "de"},
    },
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOCS), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path, corpus: Path) -> Path:
    directory = tmp_path / "store"
    result = runner.invoke(app, ["index", str(corpus), "--store", str(directory), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    return directory


def fails_cleanly(args: list[str], message: str, code: int = 1) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == code, result.output
    assert message in " ".join(result.output.split())
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_index_reports_counts(tmp_path: Path, corpus: Path) -> None:
    directory = tmp_path / "s"
    result = runner.invoke(app, ["index", str(corpus), "--store", str(directory), "--embedder", "hashing"])
    assert result.exit_code == 0, result.output
    assert "indexed 3 documents" in result.stdout
    assert json.loads((directory / "manifest.json").read_text())["components"] == {
        "embedder": "hashing",
        "graph_store": "sqlite",
        "vector_store": "local",
    }
    again = runner.invoke(app, ["index", str(corpus), "--store", str(directory)])
    assert again.exit_code == 0, again.output
    assert "indexed 0 documents" in again.stdout
    assert "3 unchanged" in again.stdout


def test_query_table_shows_signals_and_shares(store: Path) -> None:
    result = runner.invoke(app, ["query", "apples orchards", "--store", str(store), "--preset", "no_rerank"])
    assert result.exit_code == 0, result.output
    assert "apples" in result.stdout
    for signal in ("semantic", "graph", "temporal", "pagerank", "access"):
        assert signal in result.stdout
    assert "(+0." in result.stdout


def test_query_json(store: Path) -> None:
    result = runner.invoke(app, ["query", "apples orchards", "--store", str(store), "--json", "--top-k", "2"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == 2
    assert rows[0]["id"] == "apples"
    assert set(rows[0]) == {"id", "document_id", "title", "snippet", "score", "signals", "contributions", "weights"}
    assert rows[0]["score"] >= rows[1]["score"]
    top = rows[0]
    assert top["contributions"]
    assert sum(top["contributions"].values()) == pytest.approx(top["score"])
    for name, weight in top["weights"].items():  # the weight each signal got: share / value
        assert weight * top["signals"][name] == pytest.approx(top["contributions"][name])
    assert "bm25" in rows[0]["signals"]  # the default preset is multihop on the embedded store


def test_query_filter_and_minimal_preset(store: Path) -> None:
    args = [
        "query",
        "sweet fruit",
        "--store",
        str(store),
        "--json",
        "--preset",
        "minimal",
        "--filter",
        '{"lang": "de"}',
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in json.loads(result.stdout)] == ["birnen"]
    assert set(json.loads(result.stdout)[0]["signals"]) == {"semantic"}


def test_query_multihop_preset_reads_the_corpus_from_the_store(store: Path) -> None:
    question = "When are the fruit growing near Apples picked?"
    args = ["query", question, "--store", str(store), "--preset", "multihop", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = {r["id"]: r["signals"] for r in json.loads(result.stdout)}
    assert rows["apples"]["entity"] > 0  # the title linker was rebuilt from the stored titles
    assert rows["pears"]["bm25"] == 1.0  # BM25 over the stored texts ("picked")
    assert rows["pears"]["ppr"] > 0
    assert set(rows) == {"apples", "pears", "birnen"}
    filtered = runner.invoke(app, [*args, "--filter", '{"lang": "de"}'])
    assert filtered.exit_code == 0, filtered.output
    assert [r["id"] for r in json.loads(filtered.stdout)] == ["birnen"]


async def test_multihop_preset_needs_a_graph_store_that_lists_documents(store: Path) -> None:
    from graphfuse import InvalidInput, presets
    from graphfuse.stores import aopen_store

    async with await aopen_store(store) as opened:
        names = [s.name for s in (await opened.apipeline("multihop")).stages]
        assert names[:3] == ["semantic", "bm25", "entity"]
        assert names[-4:] == ["ppr", "hydrate_ppr", "aggregate", "hydrate"]

        class Listless:
            related = opened.graph.related
            get_documents = opened.graph.get_documents

        assert opened.default_preset == "multihop"
        real = opened.graph
        opened.graph = Listless()  # type: ignore[assignment]
        assert opened.default_preset == "standard"  # what `query` and `context` use when not told

        class Ungenerational(Listless):  # (lists its documents, cannot say when they changed)
            iter_documents = real.iter_documents

        opened.graph = Ungenerational()  # type: ignore[assignment]
        assert opened.default_preset == "multihop"  # (its corpus indexes are read back at query time)
        opened.graph = real
        with pytest.raises(
            InvalidInput, match=r"preset .multihop. needs the corpus indexes.*Listless cannot list them"
        ):
            await presets.abuild(
                "multihop", graph_store=Listless(), vector_store=opened.vectors, embedder=opened.embedder
            )  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "message", "code"),
    [
        (["query", "", "--store", "{store}"], "error: query text must be a non-empty string", 1),
        (["query", "   ", "--store", "{store}"], "error: query text must be a non-empty string", 1),
        (["query", "x", "--store", "{store}", "--top-k", "0"], "Invalid value for '--top-k'", 2),
        (["query", "x", "--store", "{store}", "--top-k", "-3"], "Invalid value for '--top-k'", 2),
        (["query", "x", "--store", "{store}", "--filter", "{bad"], "error: --filter is not valid JSON", 1),
        (["query", "x", "--store", "{store}", "--filter", "[1]"], "error: --filter must be a JSON object", 1),
        (["query", "x", "--store", "{store}", "--filter", '{"k": {"$regex": 1}}'], "error:", 1),
        (["query", "x", "--store", "{store}", "--preset", "nope"], "error: unknown preset 'nope'; known presets:", 1),
        (["query", "x", "--store", "{missing}"], "error: no GraphFuse store at", 1),
        (["index", "{corpus}", "--store", "{store}", "--embedder", "local"], "was indexed with embedder 'hashing'", 1),
        (["index", "{tmp}/nothing.md", "--store", "{store}"], "no such file or directory", 1),
    ],
    ids=[
        "empty-query",
        "blank-query",
        "top-k-zero",
        "top-k-negative",
        "filter-bad-json",
        "filter-not-object",
        "filter-bad-operator",
        "unknown-preset",
        "missing-store",
        "embedder-mismatch",
        "missing-source",
    ],
)
def test_bad_input(store: Path, corpus: Path, tmp_path: Path, args: list[str], message: str, code: int) -> None:
    values = {"store": str(store), "missing": str(tmp_path / "missing"), "corpus": str(corpus), "tmp": str(tmp_path)}
    for key, value in values.items():
        args = [a.replace("{" + key + "}", value) for a in args]
    fails_cleanly(args, message, code)


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--embedder", "nope"], "no embedder named 'nope'; known: "),
        (["--graph-store", "nope"], "no graph store named 'nope'"),
        (["--vector-store", "nope"], "no vector store named 'nope'"),
        (["--graph-store", "memory"], "graph store 'memory' keeps nothing once the command ends"),
    ],
)
def test_unknown_names_leave_no_store(tmp_path: Path, corpus: Path, option: list[str], message: str) -> None:
    directory = tmp_path / "fresh"
    fails_cleanly(["index", str(corpus), "--store", str(directory), *option], message)
    assert not directory.exists()


def test_bad_source_leaves_no_store(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "fine", "links": ["b"]}\n{"id": "b"}\n', encoding="utf-8")
    directory = tmp_path / "fresh"
    fails_cleanly(["index", str(bad), "--store", str(directory), "--embedder", "hashing"], "bad.jsonl:2")
    assert not directory.exists()


def test_corrupt_store(store: Path) -> None:
    (store / "manifest.json").write_text("{not json", encoding="utf-8")
    fails_cleanly(["query", "apples", "--store", str(store)], "manifest.json is unreadable")
    fails_cleanly(["index", str(store.parent / "docs.jsonl"), "--store", str(store)], "manifest.json is unreadable")


def test_half_written_store(tmp_path: Path) -> None:
    directory = tmp_path / "half"
    directory.mkdir()
    (directory / "graph.sqlite").write_bytes(b"")
    os.utime(directory / "graph.sqlite", (time.time() - 60, time.time() - 60))  # an interrupted creation
    fails_cleanly(["query", "apples", "--store", str(directory)], "half-written")


def test_plugins_lists_json() -> None:
    result = runner.invoke(app, ["plugins"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    builtins = next(r for r in rows if r["name"] == "builtins")
    assert set(builtins) == {"name", "version", "hooks", "registers", "error", "clashes"}
    assert "semantic" in builtins["registers"]["stage"]
    assert builtins["error"] is None


def test_plugins_shows_a_broken_plugin(site: FakeSite, corpus: Path) -> None:
    from graphfuse.plugins import get_registry

    site.module("gf_cli_broken", "import not_a_module_anywhere\n")
    site.dist("graphfuse-cli-broken", {"cli_broken": "gf_cli_broken"}, version="9.9")
    get_registry().reload()
    result = runner.invoke(app, ["plugins"])
    assert result.exit_code == 0, result.output
    broken = next(r for r in json.loads(result.stdout) if r["name"] == "cli_broken")
    assert broken["version"] == "9.9"
    assert broken["error"] == "ModuleNotFoundError: No module named 'not_a_module_anywhere'"
    # Using it is a clean error too.
    fails_cleanly(
        ["index", str(corpus), "--embedder", "cli_broken"], "would come from plugin 'cli_broken', which failed to load"
    )


@pytest.mark.slow
def test_index_then_query_across_processes(tmp_path: Path, corpus: Path) -> None:
    directory = tmp_path / "store"
    env = {**os.environ, "GRAPHFUSE_LOAD_PLUGINS": ""}
    cli = [sys.executable, "-m", "graphfuse.cli"]
    indexed = subprocess.run(
        [*cli, "index", str(corpus), "--store", str(directory), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert indexed.returncode == 0, indexed.stderr
    queried = subprocess.run(
        [*cli, "query", "sweet pears autumn", "--store", str(directory), "--json", "--top-k", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert queried.returncode == 0, queried.stderr
    assert json.loads(queried.stdout)[0]["id"] == "pears"
    failed = subprocess.run(
        [*cli, "query", "", "--store", str(directory)], capture_output=True, text=True, env=env, timeout=120
    )
    assert failed.returncode == 1
    assert failed.stderr.strip() == "error: query text must be a non-empty string"


# The commands that retrieve passages (query, context, compare) filter and shape their results the
# same way, so each of these options is one option: the same name, type, bounds and help in each.
# (`eval` keeps its own --max-per-document: its default is two passages per result list.)
SHARED_OPTIONS = ("--filter", "--granularity", "--max-per-document")


def test_the_commands_that_retrieve_passages_declare_their_shared_options_alike() -> None:
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    ctx = typer.Context(group)
    declared: dict[str, dict[str, tuple[object, ...]]] = {}
    for name in ("query", "context", "compare"):
        command = group.get_command(ctx, name)
        assert command is not None, name
        for param in command.params:
            if isinstance(param, typer.core.TyperOption) and set(param.opts) & set(SHARED_OPTIONS):
                shape = (param.display_type(ctx), param.min, param.max, param.default, param.show_default)
                declared.setdefault(param.opts[0], {})[name] = (*shape, param.help)
    assert set(declared) == set(SHARED_OPTIONS)
    assert set(declared["--granularity"]) == set(declared["--max-per-document"]) == {"query", "context", "compare"}
    for option, by_command in declared.items():
        assert len(set(by_command.values())) == 1, f"{option} is declared differently: {by_command}"
