"""What a request may set: an allow-list of plain, bounded values, never a server file.

A request never names a file, a path, a class, a module or a plugin: everything it may set
is listed here, with its type and bounds. ``stages`` name built-in stages from :data:`STAGES`
only, each with the options listed for it (numbers within bounds, short strings, short lists
of short strings); stages that read files (``bm25``, ``bridge``, ``entity_seeds`` and
``time`` take a ``corpus`` path) or need objects (a ``clock``, a ``scorer``) are not in it:
the presets that use them (``multihop``, ``bm25``, ``hybrid``) build them from the store
itself. A scorer is ``weighted`` or ``rrf`` with numeric weights. Anything else answers 422
naming the field, without looking at the server's files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._problems import Problem

__all__ = ["SCORERS", "STAGES", "check_filter_size", "check_scorer", "check_stages"]

Check = Callable[[Any, str], Any]

_MAX_STRING = 64


def _integer(low: int, high: int) -> Check:
    def check(value: Any, field: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise Problem.invalid(field, f"{field} must be an integer from {low} to {high}, got {_shown(value)}")
        return value

    return check


def _number(low: float, high: float, *, open_low: bool = False, open_high: bool = False) -> Check:
    left = "(" if open_low else "["
    right = ")" if open_high else "]"

    def check(value: Any, field: str) -> float:
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
        if ok:
            ok = (value > low if open_low else value >= low) and (value < high if open_high else value <= high)
        if not ok:
            raise Problem.invalid(field, f"{field} must be a number in {left}{low}, {high}{right}, got {_shown(value)}")
        return float(value)

    return check


def _word(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > _MAX_STRING:
        raise Problem.invalid(field, f"{field} must be a string of 1 to {_MAX_STRING} characters, got {_shown(value)}")
    return value


def _words(max_items: int) -> Check:
    def check(value: Any, field: str) -> list[str]:
        if not isinstance(value, list) or not 1 <= len(value) <= max_items:
            raise Problem.invalid(field, f"{field} must be a list of 1 to {max_items} strings, got {_shown(value)}")
        return [_word(v, f"{field}[{i}]") for i, v in enumerate(value)]

    return check


def _weights(value: Any, field: str) -> dict[str, float]:
    if not isinstance(value, dict) or not 1 <= len(value) <= 32:
        raise Problem.invalid(field, f"{field} must be a mapping of 1 to 32 signal names to numbers")
    weight = _number(0.0, 1000.0)
    return {_word(k, f"{field}"): weight(v, f"{field}.{k}") for k, v in value.items()}


_UNIT = _number(0.0, 1.0)

STAGES: Mapping[str, Mapping[str, Check]] = {
    "semantic": {"limit": _integer(1, 1000), "min_score": _number(-1.0, 1.0)},
    "hydrate": {},
    "graph": {
        "depth": _integer(1, 3),
        "max_expansion": _integer(1, 1000),
        "relation_types": _words(16),
        "decay": _UNIT,
        "min_seed_score": _UNIT,
    },
    "temporal": {"half_life_days": _number(0.0, 36_500.0, open_low=True), "min_score": _UNIT, "missing": _word},
    "pagerank": {"default": _UNIT},
    "access": {"key": _word, "max_access_count": _number(0.0, 1e9, open_low=True), "missing": _word},
    "aggregate": {"reduce": _word, "keep": _word},
    "rerank": {"top_k": _integer(1, 100)},
    "ppr": {"damping": _number(0.0, 1.0, open_low=True, open_high=True), "seeds": _integer(1, 100)},
}
"""The stages a request's ``stages`` may name, and the options each may set (name -> check)."""

SCORERS: Mapping[str, Mapping[str, Check]] = {
    "weighted": {"weights": _weights},
    "rrf": {"weights": _weights, "k": _integer(1, 1000)},
}
"""The scorers a request's ``scorer`` may name, and their options."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _entry(item: Any, field: str, allowed: Mapping[str, Mapping[str, Check]], what: str) -> dict[str, Any]:
    """``item`` (a name or a table with a ``name``) checked against ``allowed``: a clean table."""
    known = ", ".join(allowed)
    if isinstance(item, str):
        name, options = item, {}
    elif isinstance(item, dict):
        options = dict(item)
        name = options.pop("name", None)
    else:
        raise Problem.invalid(field, f"{field} must be a {what} name or a table with a 'name'")
    if not isinstance(name, str) or name not in allowed:
        raise Problem.invalid(field, f"{field}: {_shown(name)} is not a {what} this server accepts; known: {known}")
    checks = allowed[name]
    clean: dict[str, Any] = {"name": name}
    for key, value in options.items():
        check = checks.get(key)
        if check is None:
            accepted = ", ".join(checks) or "none"
            raise Problem.invalid(
                f"{field}.{key}" if len(key) <= _MAX_STRING else field,
                f"{what} {name!r} takes no option {_shown(key)} here; accepted options: {accepted}",
            )
        clean[key] = check(value, f"{field}.{key}")
    return clean


def check_stages(stages: Sequence[Any], max_stages: int) -> list[dict[str, Any]]:
    """The request's ``stages``, each checked against :data:`STAGES` (422 naming the entry)."""
    if not stages:
        raise Problem.invalid("stages", "stages must not be empty")
    if len(stages) > max_stages:
        raise Problem.invalid("stages", f"at most {max_stages} stages, got {len(stages)}")
    return [_entry(item, f"stages[{i}]", STAGES, "stage") for i, item in enumerate(stages)]


def check_scorer(scorer: Any) -> dict[str, Any]:
    """The request's ``scorer`` checked against :data:`SCORERS`."""
    return _entry(scorer, "scorer", SCORERS, "scorer")


def check_filter_size(
    spec: Any, *, max_conditions: int, max_values: int, max_chars: int, field: str = "filter"
) -> None:
    """Bound a filter's size: conditions, values of ``$in``/``$nin``, string lengths (422)."""
    if not isinstance(spec, dict):
        return  # the filter parser names the type error
    conditions = sum(len(c) if isinstance(c, dict) else 1 for c in spec.values())
    if conditions > max_conditions:
        raise Problem.invalid(field, f"{field} has {conditions} conditions; the limit is {max_conditions}")
    for key, cond in spec.items():
        for op, value in cond.items() if isinstance(cond, dict) else (("$eq", cond),):
            values = value if isinstance(value, list) else [value]
            if len(values) > max_values:
                raise Problem.invalid(f"{field}.{key}", f"{op} has {len(values)} values; the limit is {max_values}")
            if any(isinstance(v, str) and len(v) > max_chars for v in values):
                raise Problem.invalid(f"{field}.{key}", f"a value is longer than {max_chars} characters")
