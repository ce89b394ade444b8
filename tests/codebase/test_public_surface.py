"""Every public module's ``__all__`` is complete, sorted and documented.

A public module is a package or a module without a leading underscore, in the core and in every
plugin and integration distribution. Its ``__all__`` names only things the module has (``from m
import *`` and the API reference both rely on it), is sorted as ruff's RUF022 sorts, and each name
has a docstring that the API reference (``docs/reference/*.md``, rendered by mkdocstrings through
griffe) shows; the module itself is on a reference page.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import griffe
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "src", *sorted(ROOT.glob("plugins/*/src")), *sorted(ROOT.glob("integrations/*/src"))]
REFERENCE = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "reference").glob("*.md")))
DOCUMENTED = set(re.findall(r"^::: ([\w.]+)$", REFERENCE, re.MULTILINE))

# Not library API: the ``python -m graphfuse.cli`` entry point.
NOT_API = {"graphfuse.cli.__main__"}
# The command line: documented as commands (docs/cli.md), not as Python API.
NOT_IN_REFERENCE = {"graphfuse.cli"}


def _public_modules() -> list[str]:
    names = []
    for src in SOURCES:
        for path in sorted(src.rglob("*.py")):
            parts = path.relative_to(src).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or any(p.startswith("_") for p in parts):
                continue
            names.append(".".join(parts))
    return [n for n in names if n not in NOT_API]


MODULES = _public_modules()


def ruff_order(name: str) -> tuple[int, list[object]]:
    """The order ruff's RUF022 keeps ``__all__`` in (the lint enforces it in every file): SCREAMING_CASE
    constants, then CamelCase classes, then the rest, each group in natural order (``x2`` before ``x10``)."""
    if len(name) > 1 and name.upper() == name and any(c.isalpha() for c in name):
        group = 0
    elif name[:1].isupper():
        group = 1
    else:
        group = 2
    return group, [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def test_the_order_is_constants_then_classes_then_the_rest() -> None:
    given = ["run", "Pipeline", "ENTITY_PREFIX", "__version__", "x10", "x2", "CacheStore", "T"]
    expected = ["ENTITY_PREFIX", "CacheStore", "Pipeline", "T", "__version__", "run", "x2", "x10"]
    assert sorted(given, key=ruff_order) == expected


def test_the_scan_sees_the_core_and_every_distribution() -> None:
    assert {"graphfuse", "graphfuse.hosts", "graphfuse.records", "graphfuse.plugins.hookspecs"} <= set(MODULES)
    assert {"langchain_graphfuse", "llama_index.retrievers.graphfuse.nodes", "graphfuse_redis"} <= set(MODULES)


@pytest.fixture(scope="module")
def loaded() -> dict[str, griffe.Module]:
    """Each top-level package as griffe reads it, statically (what mkdocstrings renders)."""
    tops = {".".join(n.split(".")[:3]) if n.startswith("llama_index.") else n.split(".")[0] for n in MODULES}
    return {
        top: griffe.load(top, search_paths=[str(p) for p in SOURCES], allow_inspection=False, resolve_aliases=False)
        for top in sorted(tops)
    }


def _module(loaded: dict[str, griffe.Module], name: str) -> griffe.Module:
    top = next(t for t in loaded if name == t or name.startswith(t + "."))
    obj: griffe.Object | griffe.Alias = loaded[top]
    for part in name[len(top) :].split(".")[1:]:
        obj = obj.members[part]
    assert isinstance(obj, griffe.Module)
    return obj


def _exports(module: griffe.Module) -> list[str]:
    assert isinstance(module.exports, list), f"{module.path} has no __all__ list"
    return [str(e) for e in module.exports]


@pytest.mark.slow
@pytest.mark.parametrize("name", MODULES)
def test_all_is_complete_and_sorted(name: str, loaded: dict[str, griffe.Module]) -> None:
    module = _module(loaded, name)
    exported = _exports(module)
    missing = [n for n in exported if n not in module.members]
    if missing:  # not visible statically: the import decides (a name made at run time counts)
        runtime = importlib.import_module(name)
        missing = [n for n in missing if not hasattr(runtime, n)]
    assert missing == [], f"{name}.__all__ names what the module does not have: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
    expected = sorted(exported, key=ruff_order)
    assert exported == expected, f"{name}.__all__ is not sorted: expected {expected}"


def _docstring(module: griffe.Module, member: str) -> str:
    obj = module.members.get(member)
    if obj is None:
        return ""
    try:
        target = obj.final_target if isinstance(obj, griffe.Alias) else obj
    except (griffe.AliasResolutionError, griffe.CyclicAliasError):
        return ""
    return target.docstring.value.strip() if target.docstring is not None else ""


@pytest.mark.parametrize("name", [m for m in MODULES if m not in NOT_IN_REFERENCE])
def test_every_exported_name_is_documented(name: str, loaded: dict[str, griffe.Module]) -> None:
    assert name in DOCUMENTED, f"{name} is public but on no API reference page (docs/reference/*.md)"
    module = _module(loaded, name)
    undocumented = [m for m in _exports(module) if m != "__version__" and not _docstring(module, m)]
    assert undocumented == [], f"{name}: exported names without a docstring (absent from the reference): {undocumented}"


def test_a_name_missing_from_a_module_fails(tmp_path: Path) -> None:
    (tmp_path / "surface_probe").mkdir()
    (tmp_path / "surface_probe" / "__init__.py").write_text(
        '"""Probe."""\n\nfrom os.path import join\n\n__all__ = ["VectorLookup", "join"]\n', encoding="utf-8"
    )
    module = griffe.load("surface_probe", search_paths=[str(tmp_path)], allow_inspection=False)
    assert [n for n in _exports(module) if n not in module.members] == ["VectorLookup"]
    assert _docstring(module, "join") == ""
