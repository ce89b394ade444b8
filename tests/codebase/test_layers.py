"""The core's layers hold: import-linter's contract (``[tool.importlinter]`` in pyproject.toml).

A module imports only from layers below its own (docs/architecture.md). The second test proves
the check can fail: a copy of the package with one upward import breaks the contract.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, pythonpath: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_layers_contract_is_kept() -> None:
    done = _lint(ROOT, ROOT / "src")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout
    assert "graphfuse core layers KEPT" in done.stdout
    assert "no import cycle KEPT" in done.stdout


def test_an_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT / "src" / "graphfuse", tmp_path / "src" / "graphfuse", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    scoring = tmp_path / "src" / "graphfuse" / "scoring" / "__init__.py"
    scoring.write_text(scoring.read_text(encoding="utf-8") + "\nfrom .. import presets  # upward\n", encoding="utf-8")
    done = _lint(tmp_path, tmp_path / "src")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "graphfuse.scoring is not allowed to import graphfuse.presets" in done.stdout


def test_the_plugin_registry_loads_neither_compare_nor_context() -> None:
    code = (
        "import sys, graphfuse.plugins\n"
        "print(sorted({m.split('.')[1] for m in sys.modules if m.startswith('graphfuse.') and m.count('.') >= 1}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = done.stdout
    assert "'plugins'" in loaded
    for above in ("compare", "context", "evaluation", "multihop", "presets", "stores", "server", "cli"):
        assert f"'{above}'" not in loaded, f"import graphfuse.plugins loads graphfuse.{above}: {loaded}"
