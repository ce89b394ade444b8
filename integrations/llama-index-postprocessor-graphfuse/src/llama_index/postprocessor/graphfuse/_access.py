"""AccessPostprocessor: access-count popularity as a node signal."""

from __future__ import annotations

from typing import Any, Literal

from llama_index.core.bridge.pydantic import Field

from graphfuse import Stage
from graphfuse.stages import AccessPopularity

from ._base import StageRunner

__all__ = ["AccessPostprocessor"]


class AccessPostprocessor(StageRunner):
    """Set the ``access`` signal from ``node.metadata[key]`` (``access_count``), normalised across the nodes.

    Counts are capped at ``max_access_count`` and divided by the largest among the nodes (the
    most accessed gets 1.0; all zero gives 0.0). A node without the key gets, by ``missing``:
    ``"neutral"`` 0.5 (the default, outside the normalisation), ``"zero"`` a count of 0, or
    ``"error"`` a :class:`~graphfuse.InvalidInput`. The node score and order are kept.
    """

    key: str = Field(default="access_count", description="Metadata key of the access counter.")
    max_access_count: float = Field(default=1000, description="Cap applied to every count.")
    missing: Literal["neutral", "zero", "error"] = Field(default="neutral", description="Nodes without the key.")
    signal: str = Field(default="access", description="Name of the signal written.")

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        self._stage()

    @classmethod
    def class_name(cls) -> str:
        return "AccessPostprocessor"

    def _stage(self) -> Stage:
        return AccessPopularity(
            key=self.key, max_access_count=self.max_access_count, missing=self.missing, signal=self.signal
        )
