"""Named entities from a spaCy pipeline, as GraphFuse mentions."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import spacy

from graphfuse import InvalidInput, NotFound
from graphfuse.indexing import Mention, entity_key

__all__ = ["DEFAULT_LABELS", "DEFAULT_MODEL", "SpacyEntityExtractor"]

DEFAULT_MODEL = "en_core_web_sm"
"""The pipeline loaded when none is named (install it first: see :class:`SpacyEntityExtractor`)."""

DEFAULT_LABELS: frozenset[str] = frozenset(
    {"PERSON", "NORP", "FAC", "ORG", "GPE", "LOC", "PRODUCT", "EVENT", "WORK_OF_ART", "LAW", "LANGUAGE"}
)
"""The OntoNotes labels kept by default: names of things. Dates, times, numbers, amounts and
ordinals (``DATE``, ``TIME``, ``CARDINAL``, ``MONEY``, ...) are left out: two passages sharing
"2010" or "three" are not about the same thing."""

# Components a named-entity recogniser does not need: excluding them makes loading and
# running the pipeline several times faster (en_core_web_sm's ``ner`` has its own tok2vec).
_NOT_NEEDED = ("parser", "tagger", "lemmatizer", "attribute_ruler", "morphologizer", "senter")
_LEADING = re.compile(r"(?:the|a|an)\s+", re.IGNORECASE)  # "the Rhine" is "rhine", as in TextEntityExtractor


def _install_hint(model: str) -> str:
    package = model.replace("_", "-")
    return (
        f"spaCy pipeline {model!r} is not installed (GraphFuse never downloads models). Install it with "
        f"`python -m spacy download {model}` (or `pip install {package}` from wherever you keep model wheels), "
        "or pass the path of a pipeline directory saved with `nlp.to_disk()`"
    )


class SpacyEntityExtractor:
    """Entities from a spaCy pipeline's named-entity recogniser, for the text graph.

    ``model`` is an installed pipeline package's name (``"en_core_web_sm"``) or the path of a
    pipeline directory; nothing is ever downloaded: a name that is not installed raises
    :class:`~graphfuse.NotFound` saying how to install it. Each entity span whose label is in
    ``labels`` (default :data:`DEFAULT_LABELS`) becomes a :class:`~graphfuse.indexing.Mention`
    keyed by :func:`~graphfuse.indexing.entity_key` (case, accents, possessives folded; a
    leading *the*/*a*/*an* dropped), as the built-in
    :class:`~graphfuse.indexing.TextEntityExtractor` keys its names, so that the question-side
    :class:`~graphfuse.indexing.EntityMatcher` finds them. Keys shorter than ``min_chars``
    letters are left out. Mentions carry no ``targets``: with ``Indexer(entity_graph=True)``
    they become entity nodes.

    The pipeline is loaded once, in the constructor, without the components entity recognition
    does not use (parser, tagger, lemmatizer, ...). Calls are serialised by a lock (a spaCy
    ``Language`` object is not documented as safe to share across threads).
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = DEFAULT_MODEL,
        *,
        labels: Iterable[str] | None = None,
        min_chars: int = 3,
        max_chars: int = 1_000_000,
    ) -> None:
        if isinstance(model, os.PathLike):
            model = os.fspath(model)
        if not isinstance(model, str) or not model.strip():
            raise InvalidInput(f"model must be a spaCy pipeline name or path, got {model!r}")
        for what, value in (("min_chars", min_chars), ("max_chars", max_chars)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
        if labels is not None and isinstance(labels, str):
            raise InvalidInput(f"labels must be a collection of entity labels, not the string {labels!r}")
        chosen = frozenset(DEFAULT_LABELS if labels is None else labels)
        if not chosen or not all(isinstance(label, str) and label for label in chosen):
            raise InvalidInput(f"labels must be non-empty label names, got {labels!r}")
        self._model = model
        self._nlp = _load(model)
        if "ner" not in self._nlp.pipe_names:
            raise InvalidInput(
                f"spaCy pipeline {model!r} has no 'ner' component (its components: {', '.join(self._nlp.pipe_names)})"
            )
        known = set(self._nlp.get_pipe("ner").labels)
        unknown = sorted(chosen - known)
        if labels is not None and unknown:
            raise InvalidInput(
                f"spaCy pipeline {model!r} does not predict label(s) {unknown}; it predicts: {', '.join(sorted(known))}"
            )
        self._labels = chosen & known
        self._min_chars = min_chars
        self._nlp.max_length = max(self._nlp.max_length, max_chars)
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The pipeline's name or path, as given."""
        return self._model

    @property
    def labels(self) -> frozenset[str]:
        """The entity labels kept."""
        return self._labels

    def __repr__(self) -> str:
        meta = self._nlp.meta
        return f"SpacyEntityExtractor({self._model!r}, pipeline={meta.get('name')}-{meta.get('version')})"

    def extract(self, text: str) -> list[Mention]:
        """The named entities of ``text`` whose label is kept, in order."""
        if not isinstance(text, str):
            raise InvalidInput(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            return []
        with self._lock:
            doc = self._nlp(text)
        out: list[Mention] = []
        for ent in doc.ents:
            if ent.label_ not in self._labels:
                continue
            article = _LEADING.match(ent.text)
            start = ent.start_char + (article.end() if article else 0)
            key = entity_key(text[start : ent.end_char])
            if len(key) - key.count(" ") < self._min_chars:
                continue
            out.append(Mention(key, start, ent.end_char))
        return out


def _load(model: str) -> Any:
    path = Path(model).expanduser()
    is_path = path.exists() or os.sep in model or model.startswith(".")
    if is_path and not path.is_dir():
        raise NotFound(f"spaCy pipeline directory {model!r} does not exist (or is not a directory)")
    if not is_path and not spacy.util.is_package(model):
        raise NotFound(_install_hint(model))
    try:
        return spacy.load(path if is_path else model, exclude=list(_NOT_NEEDED))
    except (OSError, ImportError, AttributeError, ValueError) as exc:
        # Not a pipeline directory, a package without its data, or a package that is no pipeline.
        raise NotFound(f"spaCy could not load pipeline {model!r}: {type(exc).__name__}: {exc}") from exc
