"""StagePostprocessor: any GraphFuse stage (built-in or from a plugin) as a node postprocessor."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr, field_serializer

from graphfuse import InvalidInput, MetadataFilter, Stage
from graphfuse.hosts import stage_traits
from graphfuse.plugins import Components, get_registry

from ._base import StageRunner

__all__ = ["StagePostprocessor"]


class StagePostprocessor(StageRunner):
    """Run one GraphFuse stage over the nodes: a registered stage by name, or a stage object.

    By name, the stage is built once through the plugin registry
    (``get_registry().build_stage(name, components, **options)``), so a stage a third-party
    plugin registers is a LlamaIndex postprocessor too. Keyword arguments named like a field of
    this class (``id_key``, ``signals_key``, ``filter``, ``needs_query``, ...) configure the
    postprocessor; every other keyword argument is a stage option.

    ``filter`` (a GraphFuse metadata filter mapping) is the query filter the stage sees.
    ``needs_query``: whether the stage reads the query text (a call without one raises
    :class:`~graphfuse.InvalidInput`); by default ``False`` for the built-in hydrate, graph,
    temporal, pagerank and access stages and ``True`` for anything else; a stage that does not
    need it, called without one, sees the placeholder text ``"(no query)"``. New documents a
    stage adds become nodes without a score.
    """

    stage_name: str = Field(description="The stage's name.")
    options: dict[str, Any] = Field(default_factory=dict, description="Stage options it was built with.")
    filter: dict[str, Any] | None = Field(default=None, description="GraphFuse metadata filter for the stage.")
    needs_query: bool | None = Field(default=None, description="Whether the stage reads the query text.")

    _stage_obj: Stage = PrivateAttr()
    _filter_obj: MetadataFilter | None = PrivateAttr(default=None)

    def __init__(self, stage: str | Stage, components: Components | None = None, **kwargs: Any) -> None:
        fields = {k: kwargs.pop(k) for k in list(kwargs) if k in type(self).model_fields}
        for reserved in ("stage_name", "options"):
            if reserved in fields:
                raise InvalidInput(f"StagePostprocessor: {reserved!r} is set from the stage argument")
        options: Mapping[str, Any] = kwargs
        if isinstance(stage, str):
            built = get_registry().build_stage(stage, components, **options)
            name = stage
        else:
            if not isinstance(getattr(stage, "name", None), str) or not callable(getattr(stage, "run", None)):
                raise InvalidInput(f"stage must be a registered stage name or a Stage, got {stage!r}")
            if components is not None or options:
                raise InvalidInput("components and stage options apply only when the stage is given by name")
            built, name = stage, stage.name
        super().__init__(**{**fields, "stage_name": name, "options": dict(options)})
        self._stage_obj = built
        self._filter_obj = MetadataFilter.parse(self.filter)

    @classmethod
    def class_name(cls) -> str:
        return "StagePostprocessor"

    @field_serializer("options")
    def _json_options(self, value: dict[str, Any]) -> dict[str, Any]:
        # Durations as seconds, so to_dict()/to_json() stay JSON-safe.
        return {k: v.total_seconds() if isinstance(v, timedelta) else v for k, v in value.items()}

    def _needs_query(self) -> bool:
        if self.needs_query is None:
            return stage_traits(self._stage_obj).reads_query
        return self.needs_query

    def _filter(self) -> MetadataFilter | None:
        return self._filter_obj

    def _stage(self) -> Stage:
        return self._stage_obj
