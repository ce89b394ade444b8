"""The crash harness's small form: real worker processes killed with SIGKILL, re-run, compared.

Kills land at random moments and right after random store calls of index, re-index and
"revert" runs (a killed re-index followed by a re-run of the original records must not lose
relations). Bounded: a few worker processes of 30 documents.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[2] / "benchmarks" / "crash_harness.py"


@pytest.mark.slow
def test_kill_9_trials_converge_to_the_uninterrupted_run(tmp_path: Path) -> None:
    out = tmp_path / "crash.json"
    args = ["--trials", "4", "--documents", "24", "--batch-size", "4", "--seed", "3", "--out", str(out)]
    proc = subprocess.run(
        [sys.executable, str(HARNESS), *args], capture_output=True, text=True, timeout=240, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(out.read_text())
    assert summary["trials"] == 4
    assert summary["killed"] >= 2  # trials really were killed mid-run
    assert {r["scenario"] for r in summary["results"]} == {"index", "reindex", "revert"}
    assert summary["diverged"] == 0
