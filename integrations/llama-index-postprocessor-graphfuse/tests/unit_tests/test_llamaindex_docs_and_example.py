"""The docs page's snippets and the example script run and print what they promise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
PAGE = ROOT / "docs" / "integrations" / "llama-index.md"
EXAMPLE = ROOT / "examples" / "llama_index_query_engine.py"


def snippets() -> list[str]:
    return re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def test_the_page_has_snippets() -> None:
    assert len(snippets()) >= 3


@pytest.mark.parametrize("index", range(len(snippets())))
def test_docs_snippet_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # snippets write their files (data/, graph.sqlite) in the working directory
    code = snippets()[index]
    exec(compile(code, f"{PAGE.name}[{index}]", "exec"), {"__name__": f"docs_snippet_{index}"})


def test_example_prints_ids_with_signals() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    ids = [line.split()[0] for line in lines]
    assert ids[:2] == ["turbine", "station"]
    assert set(ids) == {"turbine", "station", "garden", "storm", "hospital"}
    assert all("temporal=" in line and "pagerank=" in line and "graph=" in line for line in lines)
    scores = [float(re.search(r"score=([0-9.]+)", line).group(1)) for line in lines]  # type: ignore[union-attr]
    assert scores == sorted(scores, reverse=True)


def test_context_example_packs_within_the_budget_and_keeps_the_sources() -> None:
    example = ROOT / "examples" / "llama_index_context.py"
    done = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    formats = {line.split()[0]: line for line in lines[:3]}
    assert set(formats) == {"passages", "evidence", "graph"}
    for line in formats.values():
        used, budget = map(int, re.search(r"tokens=(\d+)/(\d+)", line).groups())  # type: ignore[union-attr]
        assert 0 < used <= budget
    assert "## ENTITIES" in done.stdout
    assert "## RELATIONSHIPS" in done.stdout
    answer = next(line for line in lines if line.startswith("--- answer:"))
    assert "Liv Dahl" in answer
    cited = [line.split()[1].strip("[]") for line in lines if line.startswith("cited [")]
    held = next(line for line in lines if line.startswith("source nodes:")).split()[2:]
    assert cited
    assert held == [c for c in cited if c in held]
    assert "berg" in held
