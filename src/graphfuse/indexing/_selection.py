"""Entity extractors chosen by registered name (``graphfuse index --entity-extractor``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from ..plugins import ENTITY_EXTRACTOR, get_registry
from ._extractors import EntityExtractor

__all__ = ["DEFAULT_TEXT_EXTRACTOR", "entity_extractor", "entity_extractors"]

DEFAULT_TEXT_EXTRACTOR = "text"
"""The extractor that builds the text graph unless told otherwise (:class:`TextEntityExtractor`)."""


def entity_extractor(spec: str, **options: Any) -> EntityExtractor:
    """The registered entity extractor ``spec`` names: ``NAME`` or ``NAME:MODEL``.

    ``NAME`` is an ``entity_extractor`` in the plugin registry (``text`` is built in;
    ``graphfuse-spacy`` adds ``spacy``); ``MODEL`` is passed as its ``model`` option
    (``"spacy:en_core_web_sm"`` builds ``SpacyEntityExtractor(model="en_core_web_sm")``; a
    path works too); ``options`` go to its factory as well (``llm`` takes ``base_url=``, ``cache=``).
    An unknown name raises :class:`~graphfuse.NotFound` listing the known ones.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInput(f"an entity extractor is NAME or NAME:MODEL (e.g. spacy:en_core_web_sm), got {spec!r}")
    name, colon, model = spec.strip().partition(":")
    if not name or (colon and not model):
        raise InvalidInput(f"an entity extractor is NAME or NAME:MODEL (e.g. spacy:en_core_web_sm), got {spec!r}")
    settings = dict(options)
    if colon:
        if "model" in settings:
            raise InvalidInput(f"entity extractor {spec!r} names its model, and a model is given as well: give one")
        settings["model"] = model
    return get_registry().create(ENTITY_EXTRACTOR, name, **settings)


def entity_extractors(
    specs: Sequence[str] | None, options: Mapping[str, Mapping[str, Any]] | None = None
) -> list[EntityExtractor]:
    """:func:`entity_extractor` of each spec, in order; ``None`` or empty: the default (``text``).

    ``options`` maps an extractor's name to options for its factory (``{"llm": {"base_url": ...}}``).
    """
    if isinstance(specs, str):
        raise InvalidInput(f"entity extractors must be a list of names, not the string {specs!r}")
    chosen = list(specs or [DEFAULT_TEXT_EXTRACTOR])
    dup = sorted({s for s in chosen if chosen.count(s) > 1})
    if dup:
        raise InvalidInput(f"entity extractor(s) named twice: {dup}")
    given = options or {}
    return [entity_extractor(s, **given.get(s.strip().partition(":")[0], {})) for s in chosen]
