"""Registers the ``spacy`` entity extractor with GraphFuse (entry point group ``graphfuse``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphfuse.plugins import Register, hookimpl

if TYPE_CHECKING:
    from ._extractor import SpacyEntityExtractor

__all__ = ["make_spacy_entity_extractor", "register_entity_extractors"]


def make_spacy_entity_extractor(**options: Any) -> SpacyEntityExtractor:
    """Build a :class:`SpacyEntityExtractor` (options as its constructor's; ``model`` defaults to
    ``en_core_web_sm``). ``graphfuse index --entity-extractor spacy:NAME`` passes ``model=NAME``."""
    from ._extractor import SpacyEntityExtractor  # here, not at the top: loading the plugin must not import spacy

    return SpacyEntityExtractor(**options)


@hookimpl
def register_entity_extractors(register: Register) -> None:
    register("spacy", make_spacy_entity_extractor)
