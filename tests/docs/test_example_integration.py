"""examples/minimal_integration.py (the "write an integration" page's example) runs on public names."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "minimal_integration.py"


def test_minimal_integration_runs(capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(SCRIPT), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    temporal = {line.split()[0]: float(line.split("=")[1]) for line in out[:2]}
    assert temporal["new"] > 0.9 > 0.1 > temporal["old"]  # a year at a 90-day half-life
    assert out[2] == "retrieved: apples"


def test_minimal_integration_uses_public_names_only() -> None:
    assert not re.search(r"graphfuse(\.\w+)*\._", SCRIPT.read_text(encoding="utf-8"))
