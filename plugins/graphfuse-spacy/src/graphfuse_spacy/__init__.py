"""Named entities from a spaCy pipeline for GraphFuse's text graph (entity extractor ``spacy``)."""

from typing import TYPE_CHECKING

from graphfuse.plugins import lazy_exports

if TYPE_CHECKING:
    from ._extractor import DEFAULT_LABELS, DEFAULT_MODEL, SpacyEntityExtractor

__all__ = ["DEFAULT_LABELS", "DEFAULT_MODEL", "SpacyEntityExtractor"]

# The public names are imported on first access (PEP 562): the plugin entry point
# ``graphfuse_spacy._plugin`` imports this package, and must not pay for importing ``spacy``.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, dict.fromkeys(__all__, "._extractor"))
