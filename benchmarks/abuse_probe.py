"""Abuse and fault probe: run every case of ``benchmarks/abuse_cases/*.py`` and report.

Each case file is loaded by path (no package, no shared import) and defines a module-level
list ``CASES`` of ``(name, fast, fn)``: ``fn(tmp: pathlib.Path) -> None`` gets a fresh empty
temporary directory, does its thing (loopback only, bounded in time and size) and raises
``AssertionError("what went wrong")`` when the promise it probes does not hold. ``fast`` cases
take at most a few seconds each.

    python benchmarks/abuse_probe.py                    # every case -> results/abuse_probe.json
    python benchmarks/abuse_probe.py --fast             # the fast ones (what `make test` runs)
    python benchmarks/abuse_probe.py --only server/     # cases whose name starts with a prefix

One line per case (``PASS name`` / ``FAIL name: message``), then a count. Exits 1 when a case
fails, when a case file cannot be loaded or is malformed, or when no case was selected. Any
other exception than ``AssertionError`` raised by a case is a failure too (reported with its
type): a probe that crashes has not shown that the promise holds.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
CASES_DIR = HERE / "abuse_cases"
RESULTS = HERE / "results"

# Nothing a case does may download anything.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@dataclass(frozen=True)
class Case:
    file: str
    name: str
    fast: bool
    fn: Callable[[Path], None]


@dataclass
class Outcome:
    file: str
    name: str
    fast: bool
    passed: bool
    message: str
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "name": self.name,
            "fast": self.fast,
            "status": "pass" if self.passed else "fail",
            "message": self.message,
            "seconds": round(self.seconds, 3),
        }


def _load(path: Path) -> ModuleType:
    module_name = f"graphfuse_abuse_case_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look modules up by name
    spec.loader.exec_module(module)
    return module


def discover(directory: Path) -> tuple[list[Case], list[Outcome]]:
    """Every case of every ``*.py`` in ``directory``, and a failure for each file that is broken."""
    cases: list[Case] = []
    broken: list[Outcome] = []
    seen: dict[str, str] = {}
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            module = _load(path)
            entries = module.CASES
            if not isinstance(entries, list):
                raise TypeError(f"CASES must be a list, got {type(entries).__name__}")
            for i, entry in enumerate(entries):
                if not (isinstance(entry, tuple) and len(entry) == 3):
                    raise TypeError(f"CASES[{i}] must be a tuple (name, fast, fn), got {entry!r}")
                name, fast, fn = entry
                if not isinstance(name, str) or not name or not isinstance(fast, bool) or not callable(fn):
                    raise TypeError(f"CASES[{i}] must be (non-empty str, bool, callable), got {entry!r}")
                if name in seen:
                    raise ValueError(f"case name {name!r} is also defined in {seen[name]}")
                seen[name] = path.name
                cases.append(Case(path.name, name, fast, fn))
        except Exception as exc:  # reported as a failing entry, the other files still run
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            broken.append(
                Outcome(path.name, f"{path.name}:load", True, False, f"cannot load the case file: {detail}", 0)
            )
    return cases, broken


def run_case(case: Case) -> Outcome:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="graphfuse-abuse-") as tmp:
        try:
            case.fn(Path(tmp))
        except AssertionError as exc:
            message = str(exc) or "assertion failed (no message)"
            return Outcome(case.file, case.name, case.fast, False, message, time.perf_counter() - started)
        except BaseException as exc:  # a crashing probe is a failure, not a pass
            if isinstance(exc, KeyboardInterrupt):
                raise
            frames = traceback.extract_tb(exc.__traceback__)
            where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
            message = f"{type(exc).__name__}: {exc}{where}"
            return Outcome(case.file, case.name, case.fast, False, message, time.perf_counter() - started)
    return Outcome(case.file, case.name, case.fast, True, "", time.perf_counter() - started)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/abuse_probe.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="run only the fast cases")
    parser.add_argument("--only", metavar="PREFIX", default=None, help="run only cases whose name starts with PREFIX")
    parser.add_argument("--out", type=Path, default=RESULTS / "abuse_probe.json", help="where to write the JSON")
    parser.add_argument("--cases", type=Path, default=CASES_DIR, help="the directory of case files")
    args = parser.parse_args(argv)

    cases, outcomes = discover(args.cases)
    selected = [c for c in cases if (not args.fast or c.fast) and (args.only is None or c.name.startswith(args.only))]
    for broken in outcomes:
        print(f"FAIL {broken.name}: {_one_line(broken.message)}", flush=True)
    started = time.perf_counter()
    for case in selected:
        outcome = run_case(case)
        outcomes.append(outcome)
        line = f"PASS {case.name}" if outcome.passed else f"FAIL {case.name}: {_one_line(outcome.message)}"
        print(line, flush=True)
    passed = sum(o.passed for o in outcomes)
    failed = len(outcomes) - passed
    print(f"\n{passed} passed, {failed} failed, {len(outcomes)} cases in {time.perf_counter() - started:.1f} s")
    if not selected:
        print("no case was selected: nothing was probed", file=sys.stderr)
    payload = {
        "benchmark": "abuse_probe",
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
        "parameters": {"fast": args.fast, "only": args.only},
        "total": len(outcomes),
        "passed": passed,
        "failed": failed,
        "cases": [o.to_dict() for o in outcomes],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.out}")
    return 1 if failed or not selected else 0


if __name__ == "__main__":
    sys.exit(main())
