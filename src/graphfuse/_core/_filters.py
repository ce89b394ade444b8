"""Metadata filters shared by every stage and backend.

A filter is a mapping from metadata key to a condition; all conditions must hold (AND)::

    {"tenant": "acme", "year": {"$gte": 2020, "$lt": 2024}, "lang": {"$in": ["en", "de"]}}

Operators: equality (``$eq``), ``$ne`` (a missing key also passes), ``$gt``/``$gte``/``$lt``/``$lte``,
``$in``, ``$nin``, ``$exists``. :meth:`MetadataFilter.matches` is the reference semantics backends
translate; a filter value must be finite (an integer within 64 bits), and a stored value of any
type never makes a filter raise. See ``docs/concepts.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from ._encoding import INT_MAX, INT_MIN
from ._errors import InvalidInput

__all__ = ["Condition", "FilterLike", "MetadataFilter", "Operator", "Scalar"]

Scalar = Union[str, int, float, bool]
Operator = Literal["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"]
FilterLike = Union["MetadataFilter", Mapping[str, Any]]
"""A filter argument: a :class:`MetadataFilter` or the mapping :meth:`MetadataFilter.parse` reads."""

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]{0,127}")  # used with fullmatch: no trailing newline
_OPERATORS: frozenset[str] = frozenset({"$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"})
_RANGE = {"$gt", "$gte", "$lt", "$lte"}


@dataclass(frozen=True, slots=True)
class Condition:
    """One condition on one metadata key."""

    key: str
    op: Operator
    value: Any

    def __post_init__(self) -> None:
        # A hand-built condition must name a known operator: backends translate by operator.
        if self.op not in _OPERATORS:
            raise InvalidInput(
                f"condition on {self.key!r}: unknown operator {self.op!r} (known: {', '.join(sorted(_OPERATORS))})"
            )

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        try:
            return self._matches(metadata)
        except (TypeError, ValueError, OverflowError):
            # A stored value that does not compare (an object a plugin store handed back): it
            # matches no condition on its key, and never fails the query of everyone else.
            return self.op in ("$ne", "$nin")

    def _matches(self, metadata: Mapping[str, Any]) -> bool:
        present = self.key in metadata
        actual = metadata.get(self.key)
        if self.op == "$exists":
            return present is bool(self.value)
        if self.op == "$ne":
            return not present or not _equal(actual, self.value)
        if self.op == "$nin":
            return not present or not any(_equal(actual, v) for v in self.value)
        if not present:
            return False
        if self.op == "$eq":
            return _equal(actual, self.value)
        if self.op == "$in":
            return any(_equal(actual, v) for v in self.value)
        if isinstance(actual, bool) or not isinstance(actual, (int, float, str)):
            return False
        if isinstance(self.value, str) != isinstance(actual, str):
            return False
        if self.op == "$gt":
            return bool(actual > self.value)
        if self.op == "$gte":
            return bool(actual >= self.value)
        if self.op == "$lt":
            return bool(actual < self.value)
        return bool(actual <= self.value)


def _equal(actual: Any, expected: Any) -> bool:
    # True == 1 in Python; a filter on a bool must not match an int and vice versa.
    if isinstance(actual, bool) or isinstance(expected, bool):
        return isinstance(actual, bool) and isinstance(expected, bool) and actual is expected
    return bool(actual == expected)


def _check_scalar(key: str, op: str, value: Any) -> None:
    if not isinstance(value, (str, int, float, bool)):
        raise InvalidInput(f"filter {key!r} {op}: value must be a str, int, float or bool, got {type(value).__name__}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"filter {key!r} {op}: value must be finite, got {value}")
    if isinstance(value, int) and not isinstance(value, bool) and not INT_MIN <= value <= INT_MAX:
        raise InvalidInput(
            f"filter {key!r} {op}: an integer of {value.bit_length()} bits is out of range (metadata integers fit in "
            "64 bits, -2**63 to 2**63-1)"
        )


@dataclass(frozen=True, slots=True)
class MetadataFilter:
    """A validated conjunction of :class:`Condition` objects."""

    conditions: tuple[Condition, ...]

    @classmethod
    def parse(cls, spec: FilterLike | None) -> MetadataFilter | None:
        """Validate ``spec`` (a mapping or a filter) and return a filter, or ``None``."""
        if spec is None:
            return None
        if isinstance(spec, MetadataFilter):
            return spec
        if not isinstance(spec, Mapping):
            raise InvalidInput(f"filter must be a mapping, got {type(spec).__name__}")
        conditions: list[Condition] = []
        for key, cond in spec.items():
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise InvalidInput(
                    f"filter key {key!r} is not valid: use letters, digits, '_' or '-', starting with a letter or '_'"
                )
            if isinstance(cond, Mapping):
                if not cond:
                    raise InvalidInput(f"filter {key!r}: empty condition")
                for op, value in cond.items():
                    conditions.append(_condition(key, op, value))
            else:
                conditions.append(_condition(key, "$eq", cond))
        if not conditions:
            return None
        return cls(tuple(conditions))

    def __and__(self, other: MetadataFilter | None) -> MetadataFilter:
        """The conjunction of both filters (``None`` leaves this one as it is)."""
        if other is None:
            return self
        if not isinstance(other, MetadataFilter):
            return NotImplemented
        return MetadataFilter(self.conditions + other.conditions)

    def __rand__(self, other: None) -> MetadataFilter:
        """``None & f`` is ``f``."""
        return self

    def matches(self, metadata: Mapping[str, Any]) -> bool:
        """True when ``metadata`` satisfies every condition."""
        return all(c.matches(metadata) for c in self.conditions)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """The canonical mapping form (``{key: {op: value}}``)."""
        out: dict[str, dict[str, Any]] = {}
        for c in self.conditions:
            out.setdefault(c.key, {})[c.op] = list(c.value) if isinstance(c.value, tuple) else c.value
        return out


def _condition(key: str, op: Any, value: Any) -> Condition:
    if op not in _OPERATORS:
        raise InvalidInput(f"filter {key!r}: unknown operator {op!r} (known: {', '.join(sorted(_OPERATORS))})")
    if op in ("$in", "$nin"):
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or not value:
            raise InvalidInput(f"filter {key!r} {op}: value must be a non-empty list")
        for v in value:
            _check_scalar(key, op, v)
        return Condition(key, op, tuple(value))
    if op == "$exists":
        if not isinstance(value, bool):
            raise InvalidInput(f"filter {key!r} $exists: value must be true or false")
        return Condition(key, op, value)
    _check_scalar(key, op, value)
    if op in _RANGE and isinstance(value, bool):
        raise InvalidInput(f"filter {key!r} {op}: a range needs a number or a string")
    return Condition(key, op, value)
