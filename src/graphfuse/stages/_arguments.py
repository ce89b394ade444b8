"""Validation of stage constructor arguments and per-call options (InvalidInput naming the argument)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from .._errors import InvalidInput
from .._filters import MetadataFilter
from .._types import Candidate

__all__ = [
    "check_choice",
    "check_name",
    "check_options",
    "check_positive_int",
    "check_relation_types",
    "check_timedelta",
    "check_unit",
    "combine_filters",
    "require_hydrated",
]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")


def check_name(value: object, what: str) -> str:
    """A stage or signal name: letters, digits, ``_ . -``, starting with a letter or ``_``."""
    if not isinstance(value, str) or not _NAME.match(value):
        raise InvalidInput(
            f"{what} must be letters, digits, '_', '.' or '-', starting with a letter or '_' "
            f"(at most 64 characters), got {value!r}"
        )
    return value


def check_positive_int(value: object, what: str, *, low: int = 1, high: int | None = None) -> int:
    """An int in ``[low, high]`` (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"an integer >= {low}"
        raise InvalidInput(f"{what} must be {bounds}, got {value!r}")
    return value


def check_unit(value: object, what: str, *, low: float = 0.0, high: float = 1.0, open_low: bool = False) -> float:
    """A finite number in ``[low, high]`` (or ``(low, high]`` with ``open_low``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInput(f"{what} must be a finite number, got {value!r}")
    v = float(value)
    if v > high or v < low or (open_low and v == low):
        left = "(" if open_low else "["
        raise InvalidInput(f"{what} must be in {left}{low:g}, {high:g}], got {value!r}")
    return v


def check_timedelta(value: object, what: str) -> timedelta:
    """A positive :class:`~datetime.timedelta`."""
    if not isinstance(value, timedelta):
        raise InvalidInput(f"{what} must be a datetime.timedelta, got {type(value).__name__}")
    if value <= timedelta(0):
        raise InvalidInput(f"{what} must be positive, got {value!r}")
    return value


def check_choice(value: object, what: str, choices: Sequence[str]) -> str:
    """One of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidInput(f"{what} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def check_relation_types(value: object, what: str) -> tuple[str, ...] | None:
    """``None`` (all types) or a non-empty list of relation type names."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
        raise InvalidInput(f"{what} must be None or a non-empty list of relation type names, got {value!r}")
    for t in value:
        if not isinstance(t, str) or not t:
            raise InvalidInput(f"{what} must hold non-empty strings, got {t!r}")
    return tuple(value)


def check_options(stage: str, options: Mapping[str, Any], known: Sequence[str]) -> None:
    """Refuse per-call options the stage does not have."""
    if (type(options) is dict or type(options) is MappingProxyType) and not options:  # the usual call
        return
    unknown = sorted(set(options) - set(known))
    if unknown:
        have = ", ".join(known) if known else "none"
        raise InvalidInput(f"stage {stage!r}: unknown per-call option(s) {unknown} (it has: {have})")


def combine_filters(*filters: MetadataFilter | None) -> MetadataFilter | None:
    """The conjunction of the given filters (``None`` entries ignored)."""
    conditions = tuple(c for f in filters if f is not None for c in f.conditions)
    return MetadataFilter(conditions) if conditions else None


def require_hydrated(stage: str, candidates: Sequence[Candidate]) -> None:
    """Refuse candidates that carry only an id: the stage reads their content, metadata or timestamps."""
    bare = [c.id for c in candidates if c.document.content is None]
    if bare:
        shown = ", ".join(map(repr, bare[:5])) + (" ..." if len(bare) > 5 else "")
        raise InvalidInput(
            f"stage {stage!r} needs hydrated candidates, but {len(bare)} carry only an id ({shown}): "
            "hydrate first (put a Hydrate stage before it)"
        )
