"""The fast part of the abuse probe (benchmarks/abuse_probe.py) runs in the suite: no case may fail.

The runner is started in a subprocess, as a user would run it. Each case file must keep at
least the cases it has today (raise its floor when you add cases; lowering one needs a reason
in the commit), so a case cannot silently disappear.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")

ROOT = Path(__file__).resolve().parents[2]
PROBE = ROOT / "benchmarks" / "abuse_probe.py"

# Fast cases per case file today.
FLOORS = {"bounds.py": 8, "chat.py": 12, "inputs.py": 12, "numbers.py": 15, "server.py": 16, "stores.py": 11}


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(PROBE), *args], capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )


@pytest.mark.slow
def test_fast_abuse_cases_all_hold(tmp_path: Path) -> None:
    out = tmp_path / "probe.json"
    proc = _run("--fast", "--out", str(out))
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    summary = json.loads(out.read_text())
    assert summary["failed"] == 0
    per_file: dict[str, int] = {}
    for case in summary["cases"]:
        assert case["status"] == "pass", case
        assert case["fast"] is True
        per_file[case["file"]] = per_file.get(case["file"], 0) + 1
    for file, floor in FLOORS.items():
        assert per_file.get(file, 0) >= floor, (file, per_file)
    # One line per case and a count.
    lines = [line for line in proc.stdout.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert len(lines) == summary["total"] == sum(per_file.values())
    assert f"{summary['passed']} passed, 0 failed" in proc.stdout


@pytest.mark.slow
def test_runner_reports_failures_crashes_and_broken_files(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "sample.py").write_text(
        "from pathlib import Path\n"
        "def ok(tmp: Path) -> None:\n"
        "    assert tmp.is_dir() and not any(tmp.iterdir())\n"
        "    (tmp / 'left-over').write_text('x')\n"
        "def ok_again(tmp: Path) -> None:\n"
        "    assert not any(tmp.iterdir()), 'the temporary directory is not fresh'\n"
        "def broken_promise(tmp: Path) -> None:\n"
        "    raise AssertionError('the promise did not hold')\n"
        "def crashes(tmp: Path) -> None:\n"
        "    raise KeyError('boom')\n"
        "def slow(tmp: Path) -> None:\n"
        "    raise AssertionError('slow cases must not run with --fast')\n"
        "CASES = [('s/ok', True, ok), ('s/ok-again', True, ok_again), ('s/broken', True, broken_promise),\n"
        "         ('s/crash', True, crashes), ('t/slow', False, slow)]\n"
    )
    (cases / "malformed.py").write_text("CASES = [('m/x', 'yes', print)]\n")
    out = tmp_path / "probe.json"
    proc = _run("--fast", "--cases", str(cases), "--out", str(out), timeout=120)
    assert proc.returncode == 1
    summary = json.loads(out.read_text())
    status = {c["name"]: (c["status"], c["message"]) for c in summary["cases"]}
    assert status["s/ok"] == ("pass", "")
    assert status["s/ok-again"] == ("pass", "")
    assert status["s/broken"] == ("fail", "the promise did not hold")
    assert status["s/crash"][0] == "fail"
    assert "KeyError" in status["s/crash"][1]
    assert status["malformed.py:load"][0] == "fail"
    assert "t/slow" not in status
    assert "FAIL s/broken: the promise did not hold" in proc.stdout
    assert "PASS s/ok" in proc.stdout
    assert "2 passed, 3 failed" in proc.stdout
    # --only filters by prefix; a selection that runs nothing is a failure, not a pass.
    proc = _run("--cases", str(cases), "--only", "s/ok", "--out", str(out), timeout=120)
    assert json.loads(out.read_text())["passed"] == 2
    proc = _run("--only", "no-such-prefix/", "--out", str(out), timeout=120)
    assert proc.returncode == 1
    assert json.loads(out.read_text())["total"] == 0
