"""The eval report's fusion weights: what each weighted signal weighed per query, fixed or adaptive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import Document, InvalidInput, Result
from graphfuse.cli import app
from graphfuse.embedders import HashingEmbedder
from graphfuse.evaluation import EvalQuery, EvalReport, aevaluate, fusion_rows, markdown_table, query_weights
from graphfuse.indexing import SourceRecord
from graphfuse.multihop import MULTIHOP_WEIGHTS
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

# No titles: the graph comes from the text (entity nodes), so the adaptive scorer's strength is 1.
CORPUS = [
    ("film", "Gaby: A True Story is a 1987 film directed by Luis Mandoki in Mexico."),
    ("mandoki", "Luis Mandoki was born in Mexico City in 1954 and directs films."),
    ("mexico", "Mexico City is the capital of Mexico and its largest city."),
    ("stars", "Stars are born in nebulae of gas and dust far from Mexico."),
    ("river", "The Rhine rises in the Swiss Alps and flows to the North Sea."),
]
QUERIES = [
    ("q1", "Where was the director of Gaby: A True Story born?", ["film", "mandoki"]),
    ("q2", "Where does the Rhine rise?", ["river"]),
    ("q3", "What is the capital of Mexico?", ["mexico"]),
]


def _result(signals: dict[str, float], contributions: dict[str, float]) -> Result:
    return Result(Document("d", "text"), sum(contributions.values()), signals, contributions)


def test_query_weights_are_contribution_over_value() -> None:
    results = [
        _result({"semantic": 0.5, "bm25": 0.0}, {"semantic": 1.0}),
        _result({"semantic": 0.25, "bm25": 0.8, "ppr": 0.5}, {"semantic": 0.5, "ppr": 1.5}),
    ]
    # bm25 is held (0.8 > 0) but not weighed: weight 0; its 0.0 on the first result says nothing.
    assert query_weights(results) == {"semantic": 2.0, "bm25": 0.0, "ppr": 3.0}
    assert query_weights([]) == {}


async def _report(adaptive: bool | None) -> EvalReport:
    return await aevaluate(
        [SourceRecord(i, text) for i, text in CORPUS],
        [EvalQuery(i, q, tuple(gold)) for i, q, gold in QUERIES],
        ["bm25", "hybrid", "multihop"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
        adaptive=adaptive,
    )


async def test_fixed_weights_are_reported_as_the_preset_gives_them() -> None:
    report = await _report(False)
    fusion = report.pipelines["multihop"].fusion
    assert fusion is not None
    assert (fusion.adaptive, fusion.strength) == (False, None)
    semantic = fusion.weights["semantic"]
    assert semantic.min == pytest.approx(MULTIHOP_WEIGHTS["semantic"])
    assert semantic.max == pytest.approx(MULTIHOP_WEIGHTS["semantic"])
    assert semantic.n_queries == len(QUERIES)
    assert fusion.weights["bm25"].max == 0.0  # the fixed preset gives BM25 no weight of its own
    # Reciprocal rank fusion's contributions are not weight * value: no fusion summary.
    assert report.pipelines["hybrid"].fusion is None
    assert "fusion" not in report.pipelines["hybrid"].as_json()
    rows = fusion_rows(report)
    assert {row[0] for row in rows} == {"multihop"}  # bm25 weighs one signal only
    assert ("multihop", "fixed", "semantic", "1.000", "1.000", "1.000", "3") in rows


async def test_adaptive_weights_follow_each_query_and_show_the_strength() -> None:
    report = await _report(True)
    fusion = report.pipelines["multihop"].fusion
    assert fusion is not None
    assert (fusion.adaptive, fusion.strength) == (True, 1.0)
    # Strength 1 on a text graph: each confident ranking weighs more than its base weight.
    assert fusion.weights["bm25"].max > 0.0
    assert fusion.weights["semantic"].max > MULTIHOP_WEIGHTS["semantic"]
    assert fusion.weights["ppr"].min == pytest.approx(MULTIHOP_WEIGHTS["ppr"])
    data = report.as_json()["pipelines"]["multihop"]["fusion"]
    assert data["adaptive"] is True
    assert data["strength"] == 1.0
    assert data["weights"]["bm25"] == fusion.weights["bm25"].as_json()
    md = markdown_table(report)
    assert "Fusion weights per query" in md
    assert any(line.startswith("| multihop | adaptive s=1.00 | bm25 |") for line in md.splitlines())


async def test_adaptive_must_be_a_bool_or_none() -> None:
    with pytest.raises(InvalidInput, match="adaptive must be True, False or None"):
        await _report("yes")  # type: ignore[arg-type]


def test_cli_eval_adaptive_and_fixed_weights(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "text": x}) + "\n" for i, x in CORPUS), encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "".join(json.dumps({"id": i, "question": q, "gold_ids": g}) + "\n" for i, q, g in QUERIES), encoding="utf-8"
    )
    seen = {}
    for flag in ("--adaptive", "--fixed-weights"):
        out = tmp_path / f"{flag}.json"
        args = ["eval", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "bm25,multihop"]
        result = CliRunner().invoke(app, [*args, "--embedder", "hashing", "--json", str(out), flag])
        assert result.exit_code == 0, result.output
        assert "Fusion weights per query" in result.stdout
        seen[flag] = json.loads(out.read_text(encoding="utf-8"))["pipelines"]["multihop"]["fusion"]
    assert seen["--adaptive"]["adaptive"] is True
    assert seen["--fixed-weights"]["adaptive"] is False
    assert seen["--fixed-weights"]["weights"]["semantic"]["max"] == pytest.approx(1.0)
