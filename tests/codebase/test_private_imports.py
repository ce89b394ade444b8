"""No module of the core imports another package's private module.

A private module (a name part starting with ``_``) belongs to the package that holds it: its
neighbours and their subpackages may import it, nothing else. ``graphfuse.stages._named`` is
for ``graphfuse.stages.*`` only; ``graphfuse._core._types`` is for any module of ``graphfuse``. What
another package needs is made public in its ``__init__`` (``__all__``, documented) or moved to a
lower layer. Function-level and relative imports count like the others.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"


def module_name(path: Path, src: Path) -> tuple[str, bool]:
    """The dotted name of the module at ``path`` under ``src``, and whether it is a package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def owner(target: str) -> str | None:
    """The package a private module ``target`` belongs to (``None`` for a public one)."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def imported(source: str, name: str, is_package: bool) -> list[tuple[int, str]]:
    """``(line, dotted target)`` for every import in ``source`` of module ``name``, resolved."""
    here = name if is_package else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            # ``from graphfuse.stages import _named`` imports a module too.
            found += [(node.lineno, f"{module}.{a.name}") for a in node.names if owner(a.name) == ""]
    return found


def cross_package_private_imports(source: str, name: str, is_package: bool) -> list[str]:
    """``line: importer -> target`` for each import of a private module held by another package."""
    out = []
    for line, target in imported(source, name, is_package):
        held_by = owner(target)
        if held_by and not (name == held_by or name.startswith(held_by + ".")):
            out.append(f"{line}: {name} -> {target}")
    return out


def test_no_core_module_imports_a_private_module_of_another_package() -> None:
    files = sorted((SRC / "graphfuse").rglob("*.py"))
    assert len(files) > 100
    found = []
    for path in files:
        name, is_package = module_name(path, SRC)
        found += [
            f"{path.relative_to(ROOT)}:{hit}"
            for hit in cross_package_private_imports(path.read_text(encoding="utf-8"), name, is_package)
        ]
    assert found == [], "make the name public in its package, or move it to a lower layer:\n" + "\n".join(found)


def test_the_scan_catches_each_form_of_import() -> None:
    source = (
        "from ..stages._named import NamedStage\n"
        "from .._types import Document\n"
        "from ._budget import x\n"
        "from ..stages import NamedStage, _named\n"
        "import graphfuse.indexing._extractors\n"
        "def f():\n    from ..context._text import stem\n"
        "from graphfuse.multihop._bm25 import BM25Index\n"
    )
    found = cross_package_private_imports(source, "graphfuse.multihop._bridge", False)
    assert found == [
        "1: graphfuse.multihop._bridge -> graphfuse.stages._named",
        "4: graphfuse.multihop._bridge -> graphfuse.stages._named",
        "5: graphfuse.multihop._bridge -> graphfuse.indexing._extractors",
        "7: graphfuse.multihop._bridge -> graphfuse.context._text",
    ]


def test_a_package_reaches_its_own_private_modules() -> None:
    source = "from . import _named\nfrom ._named import NamedStage\nfrom .._errors import InvalidInput\n"
    assert cross_package_private_imports(source, "graphfuse.stages", True) == []
    assert cross_package_private_imports("from .._named import x\n", "graphfuse.stages.sub._m", False) == []
