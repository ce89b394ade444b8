"""The sync/async rule on the public surface (docs/architecture.md, "Sync and async")."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import graphfuse
from graphfuse.indexing import Indexer
from graphfuse.multihop import CorpusCache
from graphfuse.stores import LocalStore, StoreDirectory
from graphfuse.timeaware import Timeline

ROOT = Path(__file__).resolve().parents[2]

# Modules whose functions a user calls to open, build or run something.
ENTRY_MODULES = (
    "graphfuse",
    "graphfuse.compare",
    "graphfuse.context",
    "graphfuse.evaluation",
    "graphfuse.indexing",
    "graphfuse.multihop",
    "graphfuse.presets",
    "graphfuse.stores",
)
# The objects a user holds once something is open or built.
ENTRY_CLASSES = (CorpusCache, Indexer, LocalStore, graphfuse.Pipeline, StoreDirectory, Timeline)
BUILDER_PREFIXES = ("open", "build")
# Builders and runners not named open*/build* (other check_* functions validate an argument: no I/O).
BUILDERS = {
    "check_store",
    "corpus_indexes",
    "corpus_inputs",
    "entity_matcher",
    "evaluate",
    "evaluate_contexts",
    "evaluate_files",
}


def _public_modules() -> list[Any]:
    names = ["graphfuse"] + [
        f"graphfuse.{m.name}" for m in pkgutil.iter_modules(graphfuse.__path__) if not m.name.startswith("_")
    ]
    return [importlib.import_module(n) for n in names]


def _params(fn: Any) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]


def _check_twin(owner: Any, name: str, where: str) -> None:
    """``name`` is an ``a``-prefixed coroutine function: its sync twin exists, same parameters."""
    fn = getattr(owner, name)
    assert name.startswith("a"), f"{where}.{name} is async but not a-prefixed"
    twin = getattr(owner, name[1:], None)
    assert twin is not None, f"{where}.{name} has no sync twin {name[1:]}"
    assert not inspect.iscoroutinefunction(twin), f"{where}.{name[1:]} is async too"
    assert _params(twin) == _params(fn), f"{where}.{name[1:]} takes other parameters than {name}"


@pytest.mark.parametrize("module_name", ENTRY_MODULES)
def test_entry_functions_come_in_both_forms(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = set(module.__all__)
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.iscoroutinefunction(obj):
            _check_twin(module, name, module_name)
            assert name[1:] in exported, f"{module_name}.{name[1:]} is not in __all__"
        elif inspect.isfunction(obj) and (
            name.startswith(BUILDER_PREFIXES)
            or name in BUILDERS
            or (module_name == "graphfuse.presets" and inspect.signature(obj).return_annotation == "Pipeline")
        ):
            twin = getattr(module, f"a{name}", None)
            assert inspect.iscoroutinefunction(twin), f"{module_name}.{name} has no async twin a{name}"
            assert f"a{name}" in exported, f"{module_name}.a{name} is not in __all__"
            assert _params(twin) == _params(obj)


@pytest.mark.parametrize("cls", ENTRY_CLASSES, ids=lambda c: c.__name__)
def test_entry_objects_methods_come_in_both_forms(cls: type) -> None:
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        fn = value.__func__ if isinstance(value, classmethod | staticmethod) else value
        if inspect.iscoroutinefunction(fn):
            _check_twin(cls, name, cls.__name__)
    for opener in ("open", "close", "pipeline"):
        if opener in vars(cls):
            assert inspect.iscoroutinefunction(getattr(cls, f"a{opener}", None)), f"{cls.__name__}.a{opener}"


def test_opened_objects_are_context_managers_both_ways() -> None:
    for cls in (LocalStore, StoreDirectory):
        for method in ("__enter__", "__exit__", "__aenter__", "__aexit__"):
            assert method in vars(cls), f"{cls.__name__} lacks {method}"


def test_no_public_class_is_awaitable() -> None:
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                assert "__await__" not in vars(obj), f"{module.__name__}.{name} is awaitable"


def test_sync_forms_open_and_build_without_an_event_loop(tmp_path: Path) -> None:
    from graphfuse import presets
    from graphfuse.indexing import SourceRecord
    from graphfuse.stores import open_store

    with open_store(tmp_path / "s", create=True, embedder="hashing") as store:
        Indexer(store.graph, store.vectors, store.embedder).index([SourceRecord("a", "Apples grow in orchards.")])
        store.refresh_corpus_indexes()
    with open_store(tmp_path / "s", mode="ro") as store:
        assert [r.id for r in presets.multihop(store).retrieve("orchards", top_k=1)] == ["a"]
        assert [r.id for r in store.pipeline().retrieve("orchards", top_k=1)] == ["a"]


def test_recommended_paths_never_call_run_sync() -> None:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs" / "integrations").glob("*.md"))]
    paths += sorted((ROOT / "examples").rglob("*.py"))
    offending = [str(p.relative_to(ROOT)) for p in paths if "run_sync(" in p.read_text(encoding="utf-8")]
    assert offending == []
