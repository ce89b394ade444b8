"""Evaluation: metrics against hand-computed values, bad input, the harness and `graphfuse eval`."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import InvalidInput
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.evaluation import (
    EvalQuery,
    aevaluate,
    check_gold,
    check_pipelines,
    load_corpus,
    load_queries,
    markdown_table,
    ndcg_at_k,
    percentile,
    recall_at_k,
    reciprocal_rank,
    write_report,
)
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

CORPUS = [
    {
        "id": "film",
        "title": "Gaby: A True Story",
        "text": "Gaby: A True Story is a 1987 film directed by Luis Mandoki.",
    },
    {"id": "mandoki", "title": "Luis Mandoki", "text": "Luis Mandoki (born 1954 in Mexico City) is a film director."},
    {"id": "mexico", "title": "Mexico City", "text": "Mexico City is the capital of Mexico."},
    {"id": "stars", "title": "Star formation", "text": "Stars are born in nebulae of gas and dust."},
    {"id": "river", "title": "Rhine", "text": "The Rhine rises in the Swiss Alps."},
]
QUERIES = [
    {"id": "q1", "question": "Where was the director of Gaby: A True Story born?", "gold_ids": ["film", "mandoki"]},
    {"id": "q2", "question": "Where does the Rhine rise?", "gold_ids": ["river"]},
]


def _write(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_metrics_against_hand_computed_values() -> None:
    ranked = ["x", "g1", "y", "g2", "z"]
    gold = {"g1", "g2"}
    assert recall_at_k(ranked, gold, 2) == 0.5
    assert recall_at_k(ranked, gold, 5) == 1.0
    assert reciprocal_rank(ranked, gold) == 0.5
    assert reciprocal_rank(["x"], gold) == 0.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(ranked, gold, 10) == pytest.approx(dcg / ideal)
    assert ndcg_at_k(["g1"], {"g1"}, 10) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([10.0], 95) == 10.0
    with pytest.raises(InvalidInput):
        recall_at_k(ranked, set(), 2)
    with pytest.raises(InvalidInput):
        percentile([], 50)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": "a", "title": "t"}], "missing or empty 'text'"),
        ([{"title": "t", "text": "x"}], "missing or empty 'id'"),
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "duplicate document id"),
        ([], "c.jsonl: the file is empty"),
    ],
)
def test_bad_corpus(tmp_path: Path, rows: list[object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        load_corpus(_write(tmp_path / "c.jsonl", rows))


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "has no queries"),
        ([{"id": "q", "gold_ids": ["a"]}], "missing or empty 'question'"),
        ([{"id": "q", "question": "?", "gold_ids": []}], "'gold_ids' must be a non-empty list"),
        ([{"id": "q", "question": "?", "gold_ids": ["a"]}] * 2, "appears twice"),
        (["{oops"], "not valid JSON"),
    ],
)
def test_bad_queries(tmp_path: Path, rows: list[object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        load_queries(_write(tmp_path / "q.jsonl", rows))


def test_missing_gold_is_an_error_or_a_counted_warning() -> None:
    queries = [EvalQuery("q1", "?", ("a",)), EvalQuery("q2", "?", ("a", "zz")), EvalQuery("q3", "?", ("yy",))]
    with pytest.raises(InvalidInput, match=r"2 of 3 queries have gold ids missing .*2 distinct ids"):
        check_gold(queries, {"a"}, allow_missing=False)
    kept, warnings = check_gold(queries, {"a"}, allow_missing=True)
    assert [q.id for q in kept] == ["q1"]
    assert warnings
    assert "left out of the metrics" in warnings[0]
    with pytest.raises(InvalidInput, match="no query is left"):
        check_gold(queries[2:], {"a"}, allow_missing=True)


def test_pipeline_names_are_checked() -> None:
    assert check_pipelines(["vector", " multihop"]) == ["vector", "multihop"]
    with pytest.raises(InvalidInput, match=r"unknown pipeline\(s\) \['magic'\]; known pipelines: vector"):
        check_pipelines(["vector", "magic"])
    with pytest.raises(InvalidInput, match="named twice"):
        check_pipelines(["bm25", "bm25"])
    with pytest.raises(InvalidInput, match="no pipeline"):
        check_pipelines([""])


async def test_evaluate_every_pipeline_on_a_tiny_corpus(tmp_path: Path) -> None:
    corpus = load_corpus(_write(tmp_path / "c.jsonl", CORPUS))
    queries = load_queries(_write(tmp_path / "q.jsonl", QUERIES))
    names = ["vector", "bm25", "hybrid", "standard", "multihop", "llamaindex-fusion"]
    report = await aevaluate(
        corpus,
        queries,
        names,
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
    )
    assert list(report.pipelines) == names
    assert report.complete
    for metrics in report.pipelines.values():
        assert metrics.n_queries == 2
        assert 0.0 <= metrics.recall_at_2 <= metrics.recall_at_5 <= 1.0
        assert metrics.latency_p50_ms <= metrics.latency_p95_ms
        assert metrics.context_tokens_at_5 > 0
    assert report.pipelines["multihop"].recall_at_2 == 1.0
    data = report.as_json()
    assert set(data["pipelines"]["multihop"]) == {
        "recall@2",
        "recall@5",
        "ndcg@10",
        "mrr",
        "latency_p50_ms",
        "latency_p95_ms",
        "context_tokens@5",
        "n_queries",
        "fusion",  # a weighted sum: the weights its signals got
    }
    md = write_report(report, tmp_path / "report")
    assert "| multihop |" in md.read_text(encoding="utf-8")
    assert (tmp_path / "report" / "recall.png").read_bytes().startswith(b"\x89PNG")


async def test_incomplete_runs_say_so(tmp_path: Path) -> None:
    corpus = load_corpus(_write(tmp_path / "c.jsonl", CORPUS))
    queries = [EvalQuery("q2", "Where does the Rhine rise?", ("river",))]
    report = await aevaluate(
        corpus,
        queries,
        ["bm25"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(16),
        warnings=["1 of 2 queries have gold ids missing"],
    )
    assert not report.complete
    assert report.as_json()["complete"] is False
    assert markdown_table(report).startswith("**Incomplete run:**")


def test_cli_eval_command(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    queries = _write(tmp_path / "q.jsonl", QUERIES)
    out = tmp_path / "out.json"
    store = tmp_path / "store"
    args = [
        "eval",
        "--corpus",
        str(corpus),
        "--queries",
        str(queries),
        "--pipeline",
        "vector,multihop",
        "--store",
        str(store),
        "--embedder",
        "hashing",
        "--json",
        str(out),
        "--report",
        str(tmp_path / "rep"),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert set(data["pipelines"]) == {"vector", "multihop"}
    assert data["complete"] is True
    assert data["index"]["documents"] == 5
    assert (tmp_path / "rep" / "report.md").exists()
    assert (store / "eval-embeddings.sqlite").exists()
    again = CliRunner().invoke(app, args)  # the store is reused: nothing re-indexed
    assert again.exit_code == 0, again.output
    assert json.loads(out.read_text(encoding="utf-8"))["index"]["skipped"] == 5


@pytest.mark.parametrize(
    ("extra", "queries", "message"),
    [
        (["--pipeline", "vector,nope"], QUERIES, "unknown pipeline"),
        ([], [], "has no queries"),
        ([], [{"id": "q", "question": "?", "gold_ids": ["missing"]}], "gold ids missing from the corpus"),
    ],
)
def test_cli_eval_bad_input(tmp_path: Path, extra: list[str], queries: list[object], message: str) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    qpath = _write(tmp_path / "q.jsonl", queries)
    args = ["eval", "--corpus", str(corpus), "--queries", str(qpath), "--embedder", "hashing", *extra]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert message in result.output


def test_cli_eval_allow_missing_gold_marks_the_run_incomplete(tmp_path: Path) -> None:
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    qpath = _write(tmp_path / "q.jsonl", [*QUERIES, {"id": "q3", "question": "?", "gold_ids": ["missing"]}])
    out = tmp_path / "o.json"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "--corpus",
            str(corpus),
            "--queries",
            str(qpath),
            "--embedder",
            "hashing",
            "--pipeline",
            "bm25",
            "--allow-missing-gold",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["complete"] is False
    assert data["pipelines"]["bm25"]["n_queries"] == 2
    assert "1 of 3 queries" in data["warnings"][0]


def test_query_tags_are_read_checked_and_reported(tmp_path: Path) -> None:
    tagged = [
        {**QUERIES[0], "type": "multi_hop", "temporal": False},
        {**QUERIES[1], "type": "single_hop", "temporal": True},
    ]
    queries = load_queries(_write(tmp_path / "q.jsonl", tagged))
    assert [(q.type, q.temporal) for q in queries] == [("multi_hop", False), ("single_hop", True)]
    assert queries[1].tags() == {"type": "single_hop", "temporal": "true"}
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1: 'temporal' must be true or false"):
        load_queries(_write(tmp_path / "bad.jsonl", [{**QUERIES[0], "temporal": "yes"}]))
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1: 'type' must be a non-empty string"):
        load_queries(_write(tmp_path / "bad.jsonl", [{**QUERIES[0], "type": 3}]))
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    out = tmp_path / "out.json"
    args = ["eval", "--corpus", str(corpus), "--queries", str(tmp_path / "q.jsonl"), "--pipeline", "bm25"]
    result = CliRunner().invoke(app, [*args, "--embedder", "hashing", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "type=multi_hop" in result.output
    by_tag = json.loads(out.read_text(encoding="utf-8"))["pipelines"]["bm25"]["by_tag"]
    assert set(by_tag) == {"type", "temporal"}
    perfect = {"recall@2": 1.0, "recall@5": 1.0, "ndcg@10": 1.0, "mrr": 1.0, "n_queries": 1}
    assert by_tag["type"]["single_hop"] == perfect


def test_strip_titles_removes_titles_links_and_the_title_prefix(tmp_path: Path) -> None:
    from graphfuse.evaluation import strip_titles
    from graphfuse.indexing import SourceRecord

    records = [
        SourceRecord("a", "Rhine\nThe Rhine rises in the Alps.", title="Rhine", links=("b",), metadata={"title": "x"}),
        SourceRecord("b", "Mexico City is the capital.", title="Mexico City", metadata={"lang": "en"}),
        SourceRecord("c", "Rhine", title="Rhine"),  # nothing but the title: the text stays
    ]
    out = strip_titles(records)
    assert [(r.id, r.text, r.title, r.links, dict(r.metadata)) for r in out] == [
        ("a", "The Rhine rises in the Alps.", None, (), {}),
        ("b", "Mexico City is the capital.", None, (), {"lang": "en"}),
        ("c", "Rhine", None, (), {}),
    ]
    corpus = _write(tmp_path / "c.jsonl", CORPUS)
    queries = _write(tmp_path / "q.jsonl", QUERIES)
    out_json = tmp_path / "out.json"
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "multihop", "--strip-titles"]
    result = CliRunner().invoke(app, [*args, "--embedder", "hashing", "--json", str(out_json)])
    assert result.exit_code == 0, result.output
    assert json.loads(out_json.read_text(encoding="utf-8"))["n_queries"] == 2
    assert "entity graph from the text" in result.output  # no titles: the graph comes from the text


def _long_page(topic: str, fact: str, n: int) -> str:
    filler = [f"Section {i} of the {topic} guide lists setting number {i} and its default value." for i in range(n)]
    return " ".join([*filler[: n // 2], fact, *filler[n // 2 :]])


async def test_contexts_are_built_from_the_passages_the_pipelines_return(tmp_path: Path) -> None:
    # Long pages are chunked: basic RAG's top 5 is five passages (one per page by default), not
    # five whole pages, and the evidence context is assembled from the returned passages.
    from graphfuse.context import get_token_counter

    corpus = load_corpus(
        _write(
            tmp_path / "c.jsonl",
            [
                {"id": "deploy", "title": "Deploy", "text": _long_page("deploy", "Set --workers 4.", 60)},
                {"id": "models", "title": "Models", "text": _long_page("models", "Fields are declared as types.", 60)},
                {"id": "tests", "title": "Tests", "text": _long_page("tests", "Fixtures use scope function.", 60)},
            ],
        )
    )
    queries = load_queries(
        _write(
            tmp_path / "q.jsonl",
            [{"id": "q", "question": "How are workers set?", "answer": "--workers 4", "gold_ids": ["deploy"]}],
        )
    )
    counter = get_token_counter("regex")
    report = await aevaluate(
        corpus,
        queries,
        ["minimal", "multihop"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
        max_tokens=64,
        context_budgets=[0.5],
        token_counter=counter,
    )
    assert report.context is not None
    page = counter.count(corpus[0].text)
    basic = report.context.entries["minimal/passages"]
    # Three passages of at most 64 words and marks each (the regex counter counts more), far below one page.
    assert 0 < basic.context_tokens <= 3 * 150 < page
    assert report.context.budget == round(0.5 * basic.context_tokens)
    evidence = report.context.entries["multihop/evidence"]
    assert 0 < evidence.context_tokens <= report.context.budget


async def test_graph_caps_reach_the_graph_contexts(tmp_path: Path) -> None:
    from graphfuse.context import GraphCaps

    corpus = load_corpus(
        _write(
            tmp_path / "c.jsonl",
            [
                {
                    "id": "film",
                    "title": "Quiet Harbour",
                    "text": "Quiet Harbour is a 1961 film. Anna Berg directed Quiet Harbour in Oslo. "
                    "Quiet Harbour was directed on a small budget.",
                },
                {"id": "berg", "title": "Anna Berg", "text": "Anna Berg is a director. She directed Quiet Harbour."},
            ],
        )
    )
    queries = load_queries(
        _write(
            tmp_path / "q.jsonl",
            [{"id": "q", "question": "Who directed Quiet Harbour?", "answer": "Anna Berg", "gold_ids": ["film"]}],
        )
    )
    tokens = {}
    for n in (0, 3):
        report = await aevaluate(
            corpus,
            queries,
            ["multihop"],
            graph_store=InMemoryGraphStore(),
            vector_store=LocalVectorStore(),
            embedder=HashingEmbedder(64),
            context_budgets=[400],
            graph_caps=GraphCaps(max_documents=n),
        )
        assert report.context is not None
        tokens[n] = report.context.entries["multihop/graph"].context_tokens
    # No supporting documents at all: a shorter graph context than with three.
    assert tokens[0] < tokens[3]
