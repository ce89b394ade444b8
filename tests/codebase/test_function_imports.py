"""Imports of the core's own modules sit at module level, where the layers check sees them.

An import of a ``graphfuse`` module inside a function is allowed only for the reasons
docs/architecture.md lists (loaded on first use because it is heavy or optional, or the one
named upward import); each is listed here by file. A new one fails this test: move it to the top
of the module, or add it below with its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"

_CLI = "a command's own dependencies load when the command runs, not for `graphfuse --help`"
ALLOWED: dict[str, tuple[set[str], str]] = {
    "graphfuse/_builtins.py": (
        {".context", ".embedders", ".indexing", ".multihop", ".plugins", ".rerankers", ".scoring", ".stages"}
        | {".stores", ".timeaware"},
        "each built-in factory imports its component when the registry builds it",
    ),
    "graphfuse/_console.py": ({".cli"}, "a missing `cli` extra is reported without a traceback"),
    "graphfuse/indexing/_llm_graph.py": (
        {"._llm_reply"},
        "pydantic loads with the LLM graph's first reply, not with `import graphfuse.indexing`",
    ),
    "graphfuse/_retrieval/_passages.py": (
        {".._core._text"},
        "the CJK patterns compile on first use, not with `import graphfuse`",
    ),
    "graphfuse/_retrieval/_pipeline.py": ({"..scoring"}, "the default scorer loads with the first pipeline"),
    "graphfuse/presets.py": ({".multihop", ".timeaware"}, "scipy loads with the first multi-hop or time-aware preset"),
    "graphfuse/stores/_check.py": ({"..multihop"}, "scipy loads only when a store's corpus cache is checked"),
    "graphfuse/stores/_directory.py": (
        {"..", "..multihop", "..plugins", "..rerankers"},
        "the registry and scipy load when a store builds a pipeline, not with graphfuse.stores",
    ),
    "graphfuse/evaluation/_harness.py": (
        {"..multihop", "..timeaware"},
        "scipy loads when an evaluation runs (the CLI imports graphfuse.evaluation at start)",
    ),
    "graphfuse/indexing/_records.py": ({"._rst"}, "docutils loads only for a folder with reStructuredText"),
    "graphfuse/indexing/_loaded.py": ({"._rst"}, "docutils loads only for documents read from reStructuredText"),
    "graphfuse/cli/_check.py": ({"..stores"}, _CLI),
    "graphfuse/cli/_compare.py": ({"..compare", "..plugins", "..stores"}, _CLI),
    "graphfuse/cli/_context.py": ({"..context"}, _CLI),
    "graphfuse/cli/_eval.py": ({"..evaluation"}, _CLI),
    "graphfuse/cli/_serve.py": ({"..compare", "..data", "..multihop", "..server", "._compare"}, _CLI),
}


def function_level_imports(path: Path) -> set[str]:
    """The relative imports (``from .x import``) made inside functions of ``path``."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.level > 0:
                    found.add("." * sub.level + (sub.module or ""))
    return found


@pytest.mark.slow
def test_no_new_function_level_imports_of_the_core() -> None:
    files = sorted((SRC / "graphfuse").rglob("*.py"))
    assert len(files) > 100
    new = []
    for path in files:
        name = path.relative_to(SRC).as_posix()
        extra = function_level_imports(path) - ALLOWED.get(name, (set(), ""))[0]
        new.extend(f"{name}: {module}" for module in sorted(extra))
    assert new == [], "imports inside functions (move them to the top of the module):\n" + "\n".join(new)


def test_the_scan_finds_an_import_inside_a_function(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "from .top import a\n\n\ndef f():\n    from ..stages import x\n    import json\n\n\n"
        "class C:\n    async def g(self):\n        from . import presets\n",
        encoding="utf-8",
    )
    assert function_level_imports(sample) == {"..stages", "."}
