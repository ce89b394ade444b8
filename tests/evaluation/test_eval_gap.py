"""The eval report's gap of `multihop` to the best of `bm25`, `minimal`/`vector`, `hybrid`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.evaluation import (
    GAP_METRICS,
    EvalQuery,
    EvalReport,
    PipelineMetrics,
    aevaluate,
    gaps_json,
    markdown_table,
    multihop_gaps,
)
from graphfuse.indexing import SourceRecord
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

CORPUS = [
    ("film", "Gaby: A True Story", "Gaby: A True Story is a 1987 film directed by Luis Mandoki."),
    ("mandoki", "Luis Mandoki", "Luis Mandoki (born 1954 in Mexico City) is a film director."),
    ("mexico", "Mexico City", "Mexico City is the capital of Mexico."),
    ("stars", "Star formation", "Stars are born in nebulae of gas and dust."),
    ("river", "Rhine", "The Rhine rises in the Swiss Alps."),
]
# The question names the director, whose own passage the graph puts first; the words of the
# film's passage ("1987 film ... Luis Mandoki") put it first for BM25: multihop loses at the top.
QUERIES = [
    ("q1", "Which 1987 film did Luis Mandoki direct?", ["film"]),
    ("q2", "Where does the Rhine rise?", ["river"]),
]
PIPELINES = ["bm25", "vector", "hybrid", "multihop"]


def _metrics(r2: float, r5: float, ndcg: float, mrr: float) -> PipelineMetrics:
    return PipelineMetrics(r2, r5, ndcg, mrr, 1.0, 2.0, 10.0, 4)


async def _report() -> EvalReport:
    return await aevaluate(
        [SourceRecord(i, text, title=title) for i, title, text in CORPUS],
        [EvalQuery(i, q, tuple(gold)) for i, q, gold in QUERIES],
        PIPELINES,
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
    )


async def test_the_gap_is_computed_and_a_negative_one_flagged() -> None:
    report = await _report()
    gaps = {g.metric: g for g in multihop_gaps(report.pipelines)}
    assert list(gaps) == [key for key, _ in GAP_METRICS]
    for key, gap in gaps.items():
        values = {name: report.pipelines[name].as_json()[key] for name in ("bm25", "vector", "hybrid")}
        assert gap.best == max(values.values())
        assert values[gap.best_pipeline] == gap.best
        assert gap.multihop == report.pipelines["multihop"].as_json()[key]
        assert gap.gap == pytest.approx(gap.multihop - gap.best)
        assert gap.negative == (gap.gap < 0)
    # On this corpus multihop ranks the director's passage above the film's: it loses at the top.
    assert gaps["recall@2"].negative
    assert gaps["mrr"].negative
    assert gaps["recall@2"].best_pipeline == "bm25"
    assert not gaps["recall@5"].negative  # a tie is no loss

    data = report.as_json()["multihop_gap"]
    assert data["baselines"] == ["bm25", "vector", "hybrid"]
    assert data["negative"] == [k for k, g in gaps.items() if g.negative]
    assert data["metrics"]["recall@2"] == {
        "multihop": gaps["recall@2"].multihop,
        "best": gaps["recall@2"].best,
        "best_pipeline": "bm25",
        "gap": gaps["recall@2"].gap,
        "negative": True,
    }

    md = markdown_table(report)
    row = next(line for line in md.splitlines() if line.startswith("| R@2 |"))
    assert "| bm25 |" in row
    assert "**NEGATIVE**" in row
    assert "NEGATIVE" not in next(line for line in md.splitlines() if line.startswith("| R@5 |"))


def test_the_best_part_is_taken_per_metric() -> None:
    pipelines = {
        "bm25": _metrics(0.70, 0.80, 0.60, 0.65),
        "vector": _metrics(0.60, 0.90, 0.62, 0.60),
        "hybrid": _metrics(0.72, 0.85, 0.61, 0.70),
        "standard": _metrics(0.99, 0.99, 0.99, 0.99),  # not one of multihop's parts
        "multihop": _metrics(0.75, 0.88, 0.62, 0.69),
    }
    gaps = {g.metric: g for g in multihop_gaps(pipelines)}
    assert {k: g.best_pipeline for k, g in gaps.items()} == {
        "recall@2": "hybrid",
        "recall@5": "vector",
        "ndcg@10": "vector",
        "mrr": "hybrid",
    }
    assert gaps["recall@2"].gap == pytest.approx(0.03)
    assert gaps["recall@5"].gap == pytest.approx(-0.02)
    assert [k for k, g in gaps.items() if g.negative] == ["recall@5", "mrr"]
    assert not gaps["ndcg@10"].negative  # equal to the best


def test_no_gap_without_multihop_or_without_a_part() -> None:
    assert multihop_gaps({"bm25": _metrics(0.5, 0.6, 0.5, 0.5)}) == []
    assert multihop_gaps({"multihop": _metrics(0.5, 0.6, 0.5, 0.5), "standard": _metrics(1, 1, 1, 1)}) == []
    assert gaps_json({"multihop": _metrics(0.5, 0.6, 0.5, 0.5)}) is None
    report = EvalReport({"bm25": _metrics(0.5, 0.6, 0.5, 0.5)}, 4)
    assert report.as_json()["multihop_gap"] is None
    assert "Gap of" not in markdown_table(report)
    # "minimal" is the preset "vector" stands for: it counts as the vector part.
    gaps = multihop_gaps({"minimal": _metrics(0.5, 0.6, 0.5, 0.5), "multihop": _metrics(0.4, 0.6, 0.5, 0.5)})
    assert next((g.best_pipeline, g.negative) for g in gaps) == ("minimal", True)


def test_cli_eval_prints_and_writes_the_gap(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS))
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": i, "question": q, "gold_ids": g}) + "\n" for i, q, g in QUERIES))
    out = tmp_path / "out.json"
    args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", ",".join(PIPELINES)]
    args += ["--embedder", "hashing", "--json", str(out), "--report", str(tmp_path / "rep")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "multihop against the best of bm25, minimal, hybrid" in result.stdout
    r2 = next(line for line in result.stdout.splitlines() if "R@2" in line and "bm25" in line)
    assert "NEGATIVE" in r2
    data = json.loads(out.read_text(encoding="utf-8"))
    assert "recall@2" in data["multihop_gap"]["negative"]
    assert "**NEGATIVE**" in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
