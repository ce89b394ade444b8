"""Validation of signal weights, shared by the scorers."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from .._core._errors import InvalidInput
from .._core._types import check_signal


def check_weights(weights: Mapping[str, float]) -> Mapping[str, float]:
    """Weights must be finite, non-negative, and not all zero."""
    if not isinstance(weights, Mapping) or not weights:
        raise InvalidInput("weights must be a non-empty mapping of signal name to weight")
    checked: dict[str, float] = {}
    for name, w in weights.items():
        check_signal(name, 0.0)  # validates the name only
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w):
            raise InvalidInput(f"weight for {name!r} must be a finite number, got {w!r}")
        if w < 0:
            raise InvalidInput(f"weight for {name!r} must not be negative, got {w!r}")
        checked[name] = float(w)
    if not any(checked.values()):
        raise InvalidInput("at least one weight must be greater than zero")
    return MappingProxyType(checked)


def present_weight(weights: Mapping[str, float], signals: Sequence[Mapping[str, float]]) -> float:
    """The total weight of the weighted signals that at least one of ``signals`` carries."""
    names = {n for s in signals for n in s}
    return sum(w for n, w in weights.items() if n in names)


def scaled(parts: list[dict[str, float]], total: float) -> list[dict[str, float]]:
    """``parts`` divided by ``total`` (unchanged when ``total`` is not positive): a normalised score's shares.

    Dividing every candidate of one query by one positive number keeps their order.
    """
    if total <= 0.0:
        return parts
    return [{n: v / total for n, v in p.items()} for p in parts]


def check_normalize(normalize: object, scorer: str) -> bool:
    """``normalize`` must be a bool."""
    if not isinstance(normalize, bool):
        raise InvalidInput(f"{scorer} normalize must be True or False, got {normalize!r}")
    return normalize
