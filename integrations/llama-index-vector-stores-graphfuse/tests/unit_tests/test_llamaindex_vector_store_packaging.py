"""The distribution is packaged as LlamaIndex expects: one namespace, a `[tool.llamahub]` table naming it and
crediting every exported class, typed (py.typed), no `__init__.py` on the shared namespace levels."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PACKAGE = Path(__file__).resolve().parents[2]
IMPORT_PATH = "llama_index.vector_stores.graphfuse"


def test_llamahub_table_names_the_namespace_and_every_exported_class() -> None:
    meta = tomllib.loads((PACKAGE / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["name"] == "llama-index-vector-stores-graphfuse"
    hub = meta["tool"]["llamahub"]
    assert hub["import_path"] == IMPORT_PATH
    module = importlib.import_module(hub["import_path"])
    classes = {n for n in module.__all__ if isinstance(getattr(module, n), type)}
    assert set(hub["class_authors"]) == classes


def test_one_namespace_typed_and_namespace_levels_left_open() -> None:
    src = PACKAGE / "src"
    assert sorted(p.name for p in (src / "llama_index").iterdir() if p.name != "__pycache__") == ["vector_stores"]
    assert not (src / "llama_index" / "__init__.py").exists()
    assert not (src / "llama_index" / "vector_stores" / "__init__.py").exists()
    assert (src / "llama_index" / "vector_stores" / "graphfuse" / "py.typed").exists()
    assert (PACKAGE / "README.md").exists()
