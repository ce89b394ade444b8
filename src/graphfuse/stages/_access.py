"""The access popularity stage: how often a document was retrieved, normalised across the candidates."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any, cast

from .._core._capabilities import SignalInput
from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..validation import check_choice, check_options, check_unit, require_hydrated
from ._named import NamedStage

__all__ = ["AccessPopularity"]

_MISSING = ("neutral", "zero", "error")
NEUTRAL = 0.5


class AccessPopularity(NamedStage):
    """Set the ``access`` signal from a metadata counter (``access_count``); more access = higher.

    Each count is capped at ``max_access_count`` (1000) and divided by the largest capped count
    among the run's candidates, so the most accessed candidate gets 1.0; when every count is 0
    all get 0.0. A count is an int or float >= 0, or a string holding one (``"42"``); anything
    else (a bool, a negative, NaN, ``"many"``) raises :class:`~graphfuse.InvalidInput` naming
    the document and the value.

    A document without the key gets, by ``missing``: ``"neutral"`` 0.5 (and takes no part in
    the normalisation; the default), ``"zero"`` a count of 0, or ``"error"`` an
    :class:`~graphfuse.InvalidInput` naming it. Needs hydrated candidates; no per-call options.
    A :class:`~graphfuse.hosts.SignalStage`: it reads only the metadata counter.
    """

    traits = StageTraits(reads_query=False, needs_stores=False, in_memory_only=True)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_cap", "_input", "_key", "_missing")

    def __init__(
        self,
        *,
        key: str = "access_count",
        max_access_count: float = 1000,
        missing: str = "neutral",
        name: str = "access",
        signal: str = "access",
    ) -> None:
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"key must be a non-empty string, got {key!r}")
        self._key = key
        self._input = SignalInput("metadata", key)
        self._cap = check_unit(max_access_count, "max_access_count", high=math.inf, open_low=True)
        self._missing = check_choice(missing, "missing", _MISSING)
        self._set_names(name, signal)

    def __repr__(self) -> str:
        return (
            f"AccessPopularity(key={self._key!r}, max_access_count={self._cap:g}, "
            f"missing={self._missing!r}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """AccessPopularity takes no per-call options."""
        check_options(self._name, options, ())

    @property
    def signal(self) -> str:
        """The signal this stage sets."""
        return self._signal

    @property
    def signal_input(self) -> SignalInput:
        """What the signal is computed from: the metadata counter ``key``."""
        return self._input

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext | None = None
    ) -> list[float]:
        """The signal for each id from its metadata (``values``: mappings holding the counter), as ``run`` sets it."""
        self.check_options(query.options.get(self._name, {}))
        return self._values(ids, values)

    def _count(self, doc_id: str, metadata: Mapping[str, Any]) -> float | None:
        if self._key not in metadata:
            if self._missing == "error":
                raise InvalidInput(f"document {doc_id!r} has no {self._key!r} (stage {self._name!r})")
            return None if self._missing == "neutral" else 0.0
        raw = metadata[self._key]
        value: float | None = None
        if type(raw) is int or type(raw) is float:
            value = float(raw)
        elif isinstance(raw, str):
            try:
                value = float(raw.strip())
            except ValueError:
                value = None
        elif isinstance(raw, numbers.Real) and not isinstance(raw, bool):
            value = float(raw)
        if value is None or not math.isfinite(value) or value < 0:
            raise InvalidInput(f"document {doc_id!r}: {self._key!r} must be a non-negative number, got {raw!r}")
        return min(value, self._cap)

    def _values(self, ids: Sequence[str], metadata: Sequence[Mapping[str, Any]]) -> list[float]:
        key = self._key
        cap = self._cap
        counts: list[float | None] = []
        inf = math.inf
        for doc_id, m in zip(ids, metadata, strict=True):
            raw = m.get(key)
            # _count's common case inline: a finite non-negative int or float (NaN fails the test).
            if (type(raw) is int or type(raw) is float) and 0 <= raw < inf:
                count = float(raw)
                counts.append(cap if cap < count else count)  # min(count, cap), without the call
            else:
                counts.append(self._count(doc_id, m))
        if None not in counts:  # every document has its count (the usual case): the same values as below
            known = cast("list[float]", counts)
            most = max(known, default=0.0)
            return [n / most for n in known] if most > 0 else [0.0] * len(known)
        top = max((n for n in counts if n is not None), default=0.0)
        return [NEUTRAL if n is None else (n / top if top > 0 else 0.0) for n in counts]

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.check_options(query.options.get(self._name, {}))
        require_hydrated(self._name, candidates)
        values = self._values([c.id for c in candidates], [c.document.metadata for c in candidates])
        signal = self._signal
        return [c.with_signal(signal, v) for c, v in zip(candidates, values, strict=True)]
