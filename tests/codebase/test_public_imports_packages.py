"""Distributions share code through public modules only.

Each directory under plugins/ and integrations/ is its own distribution. A file may import the
private modules (``_name``) of the packages its own distribution ships, never those of another
distribution: ``llama-index-postprocessor-graphfuse`` reaches the node converters through the
public ``llama_index.retrievers.graphfuse.nodes``, not ``llama_index.retrievers.graphfuse._nodes``.
Examples, benchmarks and the core's tests count as outside every distribution.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
IMPORT = re.compile(r"^\s*(?:from|import)\s+([\w.]+)", re.MULTILINE)


def _owned_packages() -> dict[str, Path]:
    """Dotted name of every regular package a distribution ships -> the distribution's directory."""
    owned: dict[str, Path] = {}
    for dist in sorted([*(ROOT / "plugins").iterdir(), *(ROOT / "integrations").iterdir()]):
        src = dist / "src"
        if not (dist / "pyproject.toml").exists() or not src.is_dir():
            continue
        for init in src.rglob("__init__.py"):
            owned[".".join(init.parent.relative_to(src).parts)] = dist
    return owned


def _private_target(module: str, owned: dict[str, Path]) -> tuple[str, Path] | None:
    """The package and distribution whose private module ``module`` is, if it is one."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            package = ".".join(parts[:i])
            if package in owned:
                return package, owned[package]
            return None
    return None


def _scan(owned: dict[str, Path]) -> list[str]:
    found = []
    for top in ("plugins", "integrations", "examples", "benchmarks", "tests"):
        for path in (ROOT / top).rglob("*.py"):
            if ".venv" in path.parts:
                continue
            own = next((d for d in owned.values() if d in path.parents), None)
            for m in IMPORT.finditer(path.read_text(encoding="utf-8")):
                target = _private_target(m.group(1), owned)
                if target is not None and target[1] != own:
                    found.append(f"{path.relative_to(ROOT)}: {m.group(1)} (private to {target[1].name})")
    return found


def test_no_distribution_imports_another_distributions_private_modules() -> None:
    owned = _owned_packages()
    assert "llama_index.retrievers.graphfuse" in owned
    assert "llama_index.postprocessor.graphfuse" in owned
    assert owned["llama_index.retrievers.graphfuse"] != owned["llama_index.postprocessor.graphfuse"]
    found = _scan(owned)
    assert found == [], "cross-distribution private imports:\n" + "\n".join(found)


def test_the_scan_catches_a_cross_distribution_private_import() -> None:
    owned = _owned_packages()
    retrievers = owned["llama_index.retrievers.graphfuse"]
    assert _private_target("llama_index.retrievers.graphfuse._nodes", owned) == (
        "llama_index.retrievers.graphfuse",
        retrievers,
    )
    assert _private_target("llama_index.retrievers.graphfuse.nodes", owned) is None
    assert _private_target("llama_index.core.schema", owned) is None
