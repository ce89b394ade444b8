"""Scorers from plain functions."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from .._core._errors import InvalidInput
from .._core._protocols import Scorer
from .._core._types import Candidate

__all__ = ["CallableScorer", "as_scorer"]


class CallableScorer:
    """Wraps ``fn(signals) -> float`` as a scorer."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Callable[[Mapping[str, float]], float]) -> None:
        if not callable(fn):
            raise InvalidInput(f"{fn!r} is not callable")
        self._fn = fn

    def score(self, candidates: Sequence[Candidate]) -> list[float]:
        out = []
        for c in candidates:
            v = self._fn(c.signals)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidInput(f"scorer function returned {v!r} for {c.id!r}; expected a finite number")
            out.append(float(v))
        return out

    def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
        return [{} for _ in candidates]


def as_scorer(scorer: Scorer | Callable[[Mapping[str, float]], float]) -> Scorer:
    """Return ``scorer`` if it is a Scorer, else wrap a callable in :class:`CallableScorer`."""
    if callable(getattr(scorer, "score", None)):
        return scorer  # type: ignore[return-value]
    if callable(scorer):
        return CallableScorer(scorer)
    raise InvalidInput(f"{scorer!r} is neither a Scorer nor a callable")
