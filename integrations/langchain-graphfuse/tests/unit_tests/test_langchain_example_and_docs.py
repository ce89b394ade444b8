"""The example script runs offline and prints what it promises; the docs page's snippets run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
EXAMPLE = ROOT / "examples" / "langchain_chain.py"
CONTEXT_EXAMPLE = ROOT / "examples" / "langchain_context.py"
DOCS = ROOT / "docs" / "integrations" / "langchain.md"


def test_example_prints_ranked_ids_with_signals_and_an_answer() -> None:
    # The default path: the bundled MiniLM model when installed (as in this repo's venv), else hashing.
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("GRAPHFUSE_EXAMPLE_EMBEDDER", None)
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] in ("embedder: LocalEmbedder", "embedder: HashingEmbedder")
    retrieved = [line for line in lines if line.startswith("retrieved ")]
    assert len(retrieved) == 3
    ids = [line.split()[1] for line in retrieved]
    assert "outage" in ids
    assert "lunch" not in ids
    for line in retrieved:
        for signal in ("semantic", "graph", "temporal", "pagerank", "access"):
            assert re.search(rf"\b{signal}=[01]\.\d\d\b", line), line
    scores = [float(line.split("score=")[1].split()[0]) for line in retrieved]
    assert scores == sorted(scores, reverse=True)
    assert lines[-1] == "answer: The projection fell behind the event stream; back-pressure fixed it."


def test_context_example_packs_the_evidence_within_the_budget_and_cites() -> None:
    done = subprocess.run([sys.executable, str(CONTEXT_EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    whole = int(re.search(r"^format_docs: (\d+) tokens$", out, flags=re.M).group(1))  # type: ignore[union-attr]
    packed = re.search(r"^evidence: (\d+) tokens \(budget 80, counter (\S+)\)$", out, flags=re.M)
    assert packed is not None, out
    assert int(packed.group(1)) <= 80 < whole
    evidence = out.split("\nanswer: ")[0].split(")\n", 1)[1]
    assert "Her mother was the painter Liv Dahl." in evidence
    assert "lighthouse keeper" not in evidence  # a sentence without the question's facts is left out
    assert "answer: Liv Dahl, the mother of Anna Berg [1]." in out
    sources = re.findall(r"^source \[(\d)\] (\w+) ", out, flags=re.M)
    assert sources[0] == ("1", "berg")
    assert ("2", "harbour") in sources
    assert "[1] Anna Berg was a Norwegian film director." in evidence  # marker [n] is the n-th source
    graph = out.split("## ENTITIES", 1)[1]
    assert "-[CHILD_OF]-> Liv Dahl" in graph


def test_docs_snippets_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the page writes a docs folder and a store directory
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 4
    namespace: dict[str, object] = {"__name__": "docs_langchain"}
    for block in blocks:
        exec(compile(block, str(DOCS), "exec"), namespace)
