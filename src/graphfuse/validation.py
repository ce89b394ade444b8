"""Argument checks GraphFuse's own stages use, public for integrations and plugins.

Each returns the checked value or raises :class:`~graphfuse.InvalidInput` naming ``what``,
so a host validates its options with the same messages as the core.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from ._core._errors import InvalidInput
from ._core._filters import FilterLike, MetadataFilter
from ._core._types import Candidate, VectorRecord, check_id, check_signal

__all__ = [
    "check_choice",
    "check_half_life",
    "check_id",
    "check_keywords",
    "check_name",
    "check_options",
    "check_positive_int",
    "check_relation_types",
    "check_signal",
    "check_timedelta",
    "check_unit",
    "check_vector",
    "check_vector_records",
    "check_vectors",
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


def combine_filters(*filters: FilterLike | None) -> MetadataFilter | None:
    """The conjunction of the given filters (``None`` entries ignored; mappings parsed and validated)."""
    conditions = tuple(c for f in filters if (p := MetadataFilter.parse(f)) is not None for c in p.conditions)
    return MetadataFilter(conditions) if conditions else None


def check_keywords(given: Iterable[str], known: Sequence[str], owner: str, *, hidden: Iterable[str] = ()) -> None:
    """Refuse keyword arguments ``owner`` does not take (``known``, and ``hidden`` ones accepted but not
    listed): :class:`InvalidInput` naming each unknown one, with the closest known name when one is
    close (``'halflife' (did you mean 'half_life'?)``), and the known ones."""
    unknown = sorted(set(given) - set(known) - set(hidden))
    if unknown:
        hints = [
            f"{u!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(u, known, 1)) else repr(u)
            for u in unknown
        ]
        raise InvalidInput(f"{owner} got unknown keyword argument(s) {', '.join(hints)}; it takes: {', '.join(known)}")


def check_half_life(
    half_life: object, half_life_days: object = None, default: timedelta = timedelta(days=90)
) -> timedelta:
    """A half-life given as a :class:`~datetime.timedelta` or as ``half_life_days`` (a number of days),
    not both; ``default`` when neither. A bare number as ``half_life`` is refused: its unit would be a
    guess (the message points to ``half_life_days``). Its sign is checked where it is used."""
    if half_life is not None and half_life_days is not None:
        raise InvalidInput("give half_life or half_life_days, not both")
    if half_life_days is not None:
        if isinstance(half_life_days, bool) or not isinstance(half_life_days, (int, float)):
            raise InvalidInput(f"half_life_days must be a number of days, got {half_life_days!r}")
        return timedelta(days=half_life_days)
    if half_life is None:
        return default
    if not isinstance(half_life, timedelta):
        hint = (
            f": a bare number has no unit, use half_life_days={half_life!r} for days"
            if isinstance(half_life, (int, float))
            else ""
        )
        raise InvalidInput(f"half_life must be a timedelta (e.g. timedelta(days=30)), got {half_life!r}{hint}")
    return half_life


def check_vector(vector: object, dimension: int | None, who: str) -> list[float]:
    """A vector ``who`` returned (an embedding model, a host's store), as a list of floats: a sequence
    of ``dimension`` finite real numbers (any non-zero length for ``None``); :class:`InvalidInput`
    saying what ``who`` returned otherwise."""
    if isinstance(vector, (str, bytes)) or not isinstance(vector, Sequence):
        raise InvalidInput(f"{who} returned {type(vector).__name__}, not a vector")
    if dimension is not None and len(vector) != dimension:
        raise InvalidInput(f"{who} returned a vector of dimension {len(vector)}, expected {dimension}")
    if not vector:
        raise InvalidInput(f"{who} returned an empty vector")
    out = []
    for x in vector:
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
            raise InvalidInput(f"{who} returned a vector holding {x!r}")
        out.append(float(x))
    return out


def check_vectors(vectors: object, count: int, dimension: int | None, who: str) -> list[list[float]]:
    """The ``count`` vectors ``who`` returned for ``count`` texts, each checked by :func:`check_vector`."""
    if isinstance(vectors, (str, bytes)) or not isinstance(vectors, Sequence):
        raise InvalidInput(f"{who} returned {type(vectors).__name__}, not a list of vectors")
    if len(vectors) != count:
        raise InvalidInput(f"{who} returned {len(vectors)} vectors for {count} texts")
    return [check_vector(v, dimension, who) for v in vectors]


def check_vector_records(records: Sequence[VectorRecord], dimension: int | None) -> list[list[float]]:
    """The vectors of a batch to write, checked before anything is written: ids unique in the batch,
    each vector non-empty, of ``dimension`` finite numbers (any length for ``None``)."""
    ids = [r.id for r in records]
    if len(set(ids)) != len(ids):
        raise InvalidInput("upsert got the same vector id twice in one batch")
    out = []
    for r in records:
        vector = r.vector
        if dimension is not None and isinstance(vector, Sequence) and len(vector) != dimension:
            raise InvalidInput(f"vector {r.id!r} has dimension {len(vector)}, expected {dimension}")
        try:
            out.append(check_vector(vector, None, f"vector {r.id!r}"))
        except InvalidInput:
            raise InvalidInput(f"vector {r.id!r} must be a non-empty list of finite numbers") from None
    return out


def require_hydrated(stage: str, candidates: Sequence[Candidate]) -> None:
    """Refuse candidates that carry only an id: the stage reads their content, metadata or timestamps."""
    bare = [c.id for c in candidates if c.document.content is None]
    if bare:
        shown = ", ".join(map(repr, bare[:5])) + (" ..." if len(bare) > 5 else "")
        raise InvalidInput(
            f"stage {stage!r} needs hydrated candidates, but {len(bare)} carry only an id ({shown}): "
            "hydrate first (put a Hydrate stage before it)"
        )
