"""Declarative pipelines: a mapping (or TOML file) of registered stage and scorer names."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._core._errors import GraphFuseError, InvalidInput, NotFound, PluginError
from .._retrieval._pipeline import Pipeline
from ._components import Components
from ._registry import Registry, get_registry

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10
    import tomli as tomllib

__all__ = ["build_pipeline", "load_pipeline_spec"]

_KEYS = ("stages", "scorer")


def _named(item: object, where: str) -> tuple[str, dict[str, Any]]:
    if isinstance(item, str):
        return item, {}
    if not isinstance(item, Mapping):
        raise InvalidInput(f"{where} must be a name or a table with a 'name', got {item!r}")
    options = dict(item)
    name = options.pop("name", None)
    if not isinstance(name, str) or not name:
        raise InvalidInput(f"{where} needs a 'name' (a registered name), got {item!r}")
    return name, options


def build_pipeline(
    spec: Mapping[str, Any], components: Components | None = None, *, registry: Registry | None = None
) -> Pipeline:
    """Build a :class:`~graphfuse.Pipeline` from a declarative spec of registered names.

    ::

        {
            "stages": [{"name": "semantic", "limit": 20}, "hydrate", {"name": "graph", "depth": 1}],
            "scorer": {"name": "weighted", "weights": {"semantic": 0.6, "graph": 0.4}},
        }

    A stage is a name or a table with a ``name`` and its options; ``scorer`` is optional (the
    default weighted scorer). ``components`` are the backends the stages use. Errors name the
    offending entry (``stages[1]: ...``, ``scorer: ...``) and keep their type:
    :class:`~graphfuse.InvalidInput` for bad options, :class:`~graphfuse.NotFound` for an
    unknown name, :class:`~graphfuse.PluginError` for a broken plugin or an ambiguous name.
    """
    reg = registry or get_registry()
    if not isinstance(spec, Mapping):
        raise InvalidInput(f"a pipeline spec must be a mapping, got {type(spec).__name__}")
    unknown = sorted(set(spec) - set(_KEYS))
    if unknown:
        raise InvalidInput(f"unknown pipeline spec key(s) {unknown}; a spec has: {', '.join(_KEYS)}")
    stages = spec.get("stages")
    if isinstance(stages, (str, bytes)) or not isinstance(stages, Sequence) or not stages:
        raise InvalidInput("a pipeline spec needs 'stages': a non-empty list of stage names or tables")
    built = []
    for i, item in enumerate(stages):
        name, options = _named(item, f"stages[{i}]")
        with _entry(f"stages[{i}]"):
            built.append(reg.build_stage(name, components, **options))
    scorer = None
    if spec.get("scorer") is not None:
        name, options = _named(spec["scorer"], "scorer")
        with _entry("scorer"):
            scorer = reg.create("scorer", name, **options)
    return Pipeline(built, scorer)


@contextlib.contextmanager
def _entry(where: str) -> Iterator[None]:
    """Re-raise an entry's ``InvalidInput``/``NotFound``/``PluginError`` prefixed with where it is."""
    try:
        yield
    except (InvalidInput, NotFound, PluginError) as exc:
        base = next(k for k in (InvalidInput, NotFound, PluginError) if isinstance(exc, k))
        message = f"{where}: {exc}"
        try:
            located: GraphFuseError = type(exc)(message)
        except TypeError:  # a subclass with another constructor
            located = base(message)
        raise located from exc


def load_pipeline_spec(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a pipeline spec from a TOML file (``[[stages]]`` tables and an optional ``[scorer]``)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError as exc:
        raise NotFound(f"pipeline spec file {str(p)!r} does not exist") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read pipeline spec file {str(p)!r}: {exc}") from exc
    try:
        spec: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"pipeline spec file {str(p)!r} is not valid TOML: {exc}") from exc
    return spec
