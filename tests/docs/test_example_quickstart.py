"""examples/quickstart.py (the README's end-to-end example) runs and finds the two-hop answer."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("indexed 4 documents")
    results = [line.split()[0] for line in out[2:]]
    assert len(results) == 3
    # The answer (Babbage) is one hop from the engine passage: graph expansion brings it in.
    assert "babbage" in results
    assert "graph" in out[2]
