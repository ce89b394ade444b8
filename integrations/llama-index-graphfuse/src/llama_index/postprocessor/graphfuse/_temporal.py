"""TemporalDecayPostprocessor: the temporal decay stage on LlamaIndex nodes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field, PrivateAttr, field_serializer

from graphfuse import Stage
from graphfuse.stages import TemporalDecay

from ._base import StageRunner

__all__ = ["TemporalDecayPostprocessor"]


class TemporalDecayPostprocessor(StageRunner):
    """Set the ``temporal`` signal to ``0.5 ** (age / half_life)`` on every node.

    The age comes from ``node.metadata[created_at_key]`` (``timestamp="created_at"``, the
    default) or ``node.metadata[updated_at_key]`` (``timestamp="updated_at"``): a ``datetime``,
    an ISO 8601 string or a POSIX timestamp. A node without it gets, by ``missing``:
    ``"neutral"`` 0.5 (the default), ``"zero"`` 0.0, or ``"error"`` a
    :class:`~graphfuse.InvalidInput` naming it. ``min_score`` floors this signal only.

    The node score is left as it is and the order kept: fuse the signals with
    :class:`WeightedFusionPostprocessor` after the signal postprocessors. ``clock`` (a callable
    returning the current time) is for tests.
    """

    half_life: timedelta = Field(default=timedelta(days=90), description="Age at which the signal halves.")
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

    @field_serializer("half_life")
    def _half_life_seconds(self, value: timedelta) -> float:
        # Seconds keep to_dict()/to_json() JSON-safe; pydantic reads them back as a timedelta.
        return value.total_seconds()

    def _in_memory_only(self) -> bool:
        return True  # TemporalDecay computes over the nodes only

    def _stage(self) -> Stage:
        return TemporalDecay(
            half_life=self.half_life,
            min_score=self.min_score,
            clock=self._clock,
            timestamp=self.timestamp,
            missing=self.missing,
            signal=self.signal,
        )
