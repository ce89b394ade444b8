"""Per-stage keyword options of a preset factory (``graph={"depth": 1}``), checked by stage name;
the default preset's name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import InvalidInput

__all__ = ["DEFAULT_PRESET", "stage_options"]

DEFAULT_PRESET = "multihop"
"""The preset every door retrieves with when none is named (``graphfuse.presets.DEFAULT_PRESET``):
``graphfuse query``, ``graphfuse serve``, ``StoreDirectory.pipeline`` and both hosts' vector
stores. It needs a graph store that lists its documents (the embedded ``sqlite`` one); a store
whose graph store cannot falls back to ``standard`` (``StoreDirectory.default_preset``)."""


def stage_options(given: Mapping[str, Any], allowed: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """One options dict per ``allowed`` stage key; unknown keys or non-mappings raise ``InvalidInput``."""
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise InvalidInput(f"options for unknown stage(s) {unknown}; this preset takes: {', '.join(allowed)}")
    out: dict[str, dict[str, Any]] = {}
    for key in allowed:
        value = given.get(key, {})
        if not isinstance(value, Mapping):
            raise InvalidInput(f"options for stage {key!r} must be a mapping of keyword arguments, got {value!r}")
        out[key] = dict(value)
    return out
