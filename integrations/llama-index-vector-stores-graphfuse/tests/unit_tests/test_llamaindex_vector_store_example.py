"""examples/llama_index_vector_store.py runs offline and prints what it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "llama_index_vector_store.py"


def test_the_example_retrieves_through_the_preset_and_reopens_the_store() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    ranked = [line.split()[0] for line in lines[:3]]
    assert set(ranked) <= {"proxy.md", "routing.md", "deploy.md"}
    assert "proxy.md" in ranked
    assert "routing.md" in ranked  # reached through the page that names it
    assert all("ppr=" in line and "bm25=" in line for line in lines[:2])  # the graph walk and BM25 took part
    assert lines[3] == "sources: 3"
    assert lines[4].startswith("reopened: ")
