"""Validation of signal weights, shared by the scorers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from .._errors import InvalidInput
from .._types import check_signal


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
