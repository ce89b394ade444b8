"""A sample GraphFuse plugin: the ``keyword_boost`` stage, which adds the ``keyword`` signal."""

from __future__ import annotations

from typing import Any

from graphfuse.plugins import Components, hookimpl
from graphfuse.plugins.hookspecs import Register

from ._keyword import KeywordBoost

__all__ = ["KeywordBoost", "register_stages"]


def _keyword_boost(components: Components, **options: Any) -> KeywordBoost:
    return KeywordBoost(**options)


@hookimpl
def register_stages(register: Register) -> None:
    """keyword_boost (options: ``signal``, ``name``, ``stopwords``)."""
    register("keyword_boost", _keyword_boost)
