"""Packages outside the core use GraphFuse's public names only.

Any ``import graphfuse._x`` / ``from graphfuse.a._b import ...`` (a private module of the core)
in plugins/, integrations/, examples/ or benchmarks/ fails this test, and so does a test or
benchmark reaching into the CLI's private modules (``graphfuse.cli._*``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRIVATE = re.compile(r"^\s*(?:from|import)\s+(graphfuse(?:\.\w+)*\._\w*)", re.MULTILINE)
CLI_PRIVATE = re.compile(r"^\s*(?:from|import)\s+(graphfuse\.cli\._\w+)|from graphfuse\.cli import _", re.MULTILINE)


def _python_files(*dirs: str) -> list[Path]:
    return [p for d in dirs for p in (ROOT / d).rglob("*.py") if ".venv" not in p.parts and "site" not in p.parts]


def test_no_private_core_imports_outside_the_core() -> None:
    files = _python_files("plugins", "integrations", "examples", "benchmarks")
    assert len(files) > 50  # the scan sees the packages
    found = [
        f"{p.relative_to(ROOT)}: {m.group(1)}" for p in files for m in PRIVATE.finditer(p.read_text(encoding="utf-8"))
    ]
    assert found == [], "private graphfuse imports outside src/graphfuse:\n" + "\n".join(found)


# Known exceptions, each with its owner: remove the entry when the test moves to a public name.
ALLOWED = {
    "tests/test_server_cli.py: from graphfuse.cli._serve",  # is_loopback, shared with the serve command
    # Tests about one command module: its progress bar, and a scripted generator in place of a model.
    "tests/test_cli_index_progress.py: from graphfuse.cli",
    "tests/test_compare_bertscore.py: from graphfuse.cli",
}


def test_tests_and_benchmarks_do_not_use_the_cli_private_modules() -> None:
    files = _python_files("tests", "benchmarks")
    found = [
        f"{p.relative_to(ROOT)}: {m.group(0).strip()}"
        for p in files
        if p.name != Path(__file__).name
        for m in CLI_PRIVATE.finditer(p.read_text(encoding="utf-8"))
    ]
    found = [f for f in found if f.rsplit(" import", 1)[0] not in ALLOWED]
    assert found == [], "\n".join(found)


# The command line is an application of the library: it reaches a public subpackage (``graphfuse.context``,
# ``graphfuse.stores``, ...) through that subpackage's public names, so what it needs is public API.
# Exceptions, each with its reason.
CLI_SUBPACKAGE_PRIVATE = re.compile(r"^\s*from\s+(?:\.\.|graphfuse\.)([a-z]\w*)\.(_\w+)\s+import", re.MULTILINE)
CLI_ALLOWED: set[str] = set()


def cli_private_imports(source: str) -> list[str]:
    """``package._module`` for each import of a subpackage's private module in a CLI module's ``source``."""
    return [f"{m.group(1)}.{m.group(2)}" for m in CLI_SUBPACKAGE_PRIVATE.finditer(source) if m.group(1) != "cli"]


def test_the_cli_uses_the_public_names_of_other_subpackages() -> None:
    files = sorted((ROOT / "src" / "graphfuse" / "cli").glob("*.py"))
    assert len(files) > 10
    found = [f"{p.name}: {name}" for p in files for name in cli_private_imports(p.read_text(encoding="utf-8"))]
    new = [f for f in found if f not in CLI_ALLOWED]
    assert new == [], "export what the CLI needs instead:\n" + "\n".join(new)


def test_the_cli_scan_catches_a_private_subpackage_import() -> None:
    sample = (
        "    from ..context._budget import resolve_budget\nfrom graphfuse.stores._x import y\n"
        "from ..context import check_format\nfrom .._errors import InvalidInput\nfrom ._query import parse_filter\n"
    )
    assert cli_private_imports(sample) == ["context._budget", "stores._x"]


def test_the_scan_catches_a_private_import() -> None:
    sample = (
        "from graphfuse._pipeline import StageRunContext\nimport graphfuse.stages._arguments\n"
        "from graphfuse import Pipeline\n"
    )
    expected = ["graphfuse._pipeline", "graphfuse.stages._arguments"]
    assert [m.group(1) for m in PRIVATE.finditer(sample)] == expected


def test_the_console_script_names_the_missing_cli_extra() -> None:
    import subprocess
    import sys

    code = "import sys; sys.modules['typer'] = None\nfrom graphfuse._console import main\nmain()\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "pip install 'graphfuse[cli]'" in done.stderr
    assert "Traceback" not in done.stderr
