"""The temporal decay stage: a recency signal expressed as a half-life."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from .._core._capabilities import SignalInput
from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Query
from ..validation import (
    check_choice,
    check_options,
    check_timedelta,
    check_unit,
    require_hydrated,
)
from ._named import NamedStage

__all__ = ["TemporalDecay"]

_OPTIONS = ("half_life",)
_TIMESTAMPS = ("created_at", "updated_at")
_MISSING = ("neutral", "zero", "error")
NEUTRAL = 0.5
_INPUTS = {name: SignalInput(name) for name in _TIMESTAMPS}


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class TemporalDecay(NamedStage):
    """Set the ``temporal`` signal to ``0.5 ** (age / half_life)``.

    ``age`` is ``clock() - document.<timestamp>`` (``timestamp`` is ``"created_at"`` or
    ``"updated_at"``, no fallback between them). A document from the future has age 0 and
    gets 1.0. ``min_score`` is a floor on the decay value only: ``max(decay, min_score)``. It
    never lifts a value the ``missing`` policy set (``"zero"`` stays 0.0) nor touches another
    signal, so a document another signal scored 0.0 stays 0.0 there.

    A document without the timestamp gets, by ``missing``: ``"neutral"`` 0.5 (as if one
    half-life old; the default), ``"zero"`` 0.0, or ``"error"`` an
    :class:`~graphfuse.InvalidInput` naming it. ``clock`` is a callable returning the current
    time (naive values are taken as UTC); inject one in tests.

    Needs hydrated candidates. Per-call option: ``half_life``. A
    :class:`~graphfuse.hosts.SignalStage`: it reads only the timestamp.
    """

    traits = StageTraits(reads_query=False, needs_stores=False, in_memory_only=True)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_clock", "_half_life", "_min_score", "_missing", "_timestamp")

    def __init__(
        self,
        *,
        half_life: timedelta = timedelta(days=90),
        min_score: float | None = None,
        clock: Callable[[], datetime] | None = None,
        timestamp: str = "created_at",
        missing: str = "neutral",
        name: str = "temporal",
        signal: str = "temporal",
    ) -> None:
        self._half_life = check_timedelta(half_life, "half_life")
        self._min_score = None if min_score is None else check_unit(min_score, "min_score")
        if clock is not None and not callable(clock):
            raise InvalidInput(f"clock must be a callable returning a datetime, got {clock!r}")
        self._clock = clock or _utc_now
        self._timestamp = check_choice(timestamp, "timestamp", _TIMESTAMPS)
        self._missing = check_choice(missing, "missing", _MISSING)
        self._set_names(name, signal)

    def __repr__(self) -> str:
        return (
            f"TemporalDecay(half_life={self._half_life!r}, min_score={self._min_score}, "
            f"timestamp={self._timestamp!r}, missing={self._missing!r}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._half_life_for(options)

    def _half_life_for(self, options: Mapping[str, Any]) -> timedelta:
        check_options(self._name, options, _OPTIONS)
        return check_timedelta(options.get("half_life", self._half_life), f"stage {self._name!r} option 'half_life'")

    def _now(self) -> datetime:
        now = self._clock()
        if not isinstance(now, datetime):
            raise InvalidInput(f"clock returned {type(now).__name__}, not a datetime")
        return now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now

    @property
    def signal(self) -> str:
        """The signal this stage sets."""
        return self._signal

    @property
    def signal_input(self) -> SignalInput:
        """What the signal is computed from: the ``created_at`` or ``updated_at`` timestamp."""
        return _INPUTS[self._timestamp]

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext | None = None
    ) -> list[float]:
        """The signal for each id from its timestamp (``values``: UTC datetimes or ``None``), as ``run`` sets it."""
        options = query.options.get(self._name)
        half_life = self._half_life.total_seconds() if not options else self._half_life_for(options).total_seconds()
        return self._values(half_life, ids, values)

    def _values(self, half_life: float, ids: Sequence[str], stamps: Sequence[datetime | None]) -> list[float]:
        now = self._now()
        floor = self._min_score
        missing = self._missing
        out: list[float] = []
        for doc_id, stamp in zip(ids, stamps, strict=True):
            if stamp is None:
                if missing == "error":
                    raise InvalidInput(f"document {doc_id!r} has no {self._timestamp} (stage {self._name!r})")
                value = NEUTRAL if missing == "neutral" else 0.0
            else:
                age = (now - stamp).total_seconds()
                value = 0.5 ** ((age if age > 0.0 else 0.0) / half_life)  # max(0.0, age), without the call
                if floor is not None:
                    value = max(value, floor)
            out.append(value)
        return out

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        half_life = self._half_life_for(query.options.get(self._name, {})).total_seconds()
        require_hydrated(self._name, candidates)
        field = self._timestamp
        values = self._values(half_life, [c.id for c in candidates], [getattr(c.document, field) for c in candidates])
        signal = self._signal
        return [c.with_signal(signal, v) for c, v in zip(candidates, values, strict=True)]
