"""TemporalDecayPostprocessor: the temporal decay stage on LlamaIndex nodes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from llama_index.core.bridge.pydantic import (
    Field,
    PrivateAttr,
    TypeAdapter,
    field_serializer,
    field_validator,
    model_validator,
)

from graphfuse import InvalidInput, Stage
from graphfuse.stages import TemporalDecay
from graphfuse.validation import check_half_life

from ._base import StageRunner

__all__ = ["TemporalDecayPostprocessor"]


class TemporalDecayPostprocessor(StageRunner):
    """Set the ``temporal`` signal to ``0.5 ** (age / half_life)`` on every node.

    The age comes from ``node.metadata[created_at_key]`` (``timestamp="created_at"``, the
    default) or ``node.metadata[updated_at_key]`` (``timestamp="updated_at"``): a ``datetime``,
    an ISO 8601 string or a POSIX timestamp. A node without it gets, by ``missing``:
    ``"neutral"`` 0.5 (the default), ``"zero"`` 0.0, or ``"error"`` a
    :class:`~graphfuse.InvalidInput` naming it. ``min_score`` floors this signal only.

    ``half_life`` is a ``datetime.timedelta`` (``timedelta(days=30)``) or an ISO 8601 duration
    string (``"P30D"``, what ``to_json`` writes); a bare number is refused, since its unit
    would be a guess: give ``half_life_days=30`` for a number of days. Unknown keyword
    arguments (``halflife=``) raise :class:`~graphfuse.InvalidInput`.

    The node score is left as it is and the order kept: fuse the signals with
    :class:`WeightedFusionPostprocessor` after the signal postprocessors. ``clock`` (a callable
    returning the current time) is for tests.
    """

    half_life: timedelta = Field(
        default=timedelta(days=90), description="Age at which the signal halves: a timedelta or ISO 8601 duration."
    )
    half_life_days: float | None = Field(
        default=None, description="The half-life as a number of days (instead of half_life).", exclude=True
    )
    min_score: float | None = Field(default=None, description="Floor of the temporal signal.")
    timestamp: Literal["created_at", "updated_at"] = Field(default="created_at", description="Which timestamp.")
    missing: Literal["neutral", "zero", "error"] = Field(default="neutral", description="Nodes without it.")
    signal: str = Field(default="temporal", description="Name of the signal written.")

    _clock: Callable[[], datetime] | None = PrivateAttr(default=None)

    def __init__(self, *, clock: Callable[[], datetime] | None = None, **data: Any) -> None:
        super().__init__(**data)
        self._clock = clock
        self._stage()

    @classmethod
    def class_name(cls) -> str:
        return "TemporalDecayPostprocessor"

    @model_validator(mode="before")
    @classmethod
    def _days(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("half_life_days") is not None:
            data = {**data, "half_life": check_half_life(data.get("half_life"), data["half_life_days"])}
        return data

    @field_validator("half_life", mode="before")
    @classmethod
    def _explicit_unit(cls, value: Any) -> Any:
        if isinstance(value, (bool, int, float)) or (
            isinstance(value, str) and not value.strip().upper().startswith(("P", "-P"))
        ):
            raise InvalidInput(
                f"half_life must be a timedelta (e.g. timedelta(days=30)) or an ISO 8601 duration ('P30D'), "
                f"got {value!r}: a bare number has no unit, use half_life_days={value!r} for days"
            )
        return value

    @field_serializer("half_life")
    def _half_life_iso(self, value: timedelta) -> str:
        # An ISO 8601 duration keeps to_dict()/to_json() JSON-safe and unambiguous; read back as a timedelta.
        return str(TypeAdapter(timedelta).dump_python(value, mode="json"))

    def _stage(self) -> Stage:
        return TemporalDecay(
            half_life=self.half_life,
            min_score=self.min_score,
            clock=self._clock,
            timestamp=self.timestamp,
            missing=self.missing,
            signal=self.signal,
        )
