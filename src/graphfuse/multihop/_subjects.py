"""A passage's subject: what its first sentence is about, read without a title."""

from __future__ import annotations

import re

from ..context._text import sentence_spans
from ..indexing._extractors import CJK_SPEAKER

__all__ = ["subject_span"]

# The first copula of a definitional lead: "Frank Launder (1906 - 1997) was a British writer".
_COPULA = re.compile(r"\s(?:is|was|are|were)\s")
# A line of dialogue: a one- or two-word speaker and a colon ("LiHua: ...", "Ana Ruiz: ..."), or
# a Chinese or Japanese speaker (CJK_SPEAKER).
_SPEAKER = re.compile(rf"[^\W\d][\w.'-]*(?: [^\W\d][\w.'-]*)?:\s|{CJK_SPEAKER}")
_WINDOW = 300  # characters of the first sentence searched for the copula


def subject_span(text: str) -> str | None:
    """The part of ``text`` that names its subject, or ``None`` for dialogue and empty text.

    Encyclopedic, catalogue and reference passages open by naming what they are about
    (*"Frank Launder (28 January 1906 - 1997) was a British writer"*): the subject is the
    first sentence up to its first copula (*is*, *was*, *are*, *were*) within its first 300
    characters, aliases and dates included; a first sentence without one (as in a language
    other than English) is the subject as a whole. A passage whose first line is a line of
    dialogue (``Name: ...``) has no subject.
    """
    spans = sentence_spans(text, 1)
    if not spans:
        return None
    lead = text[spans[0][0] : spans[0][1]]
    if _SPEAKER.match(lead):
        return None
    found = _COPULA.search(lead, 0, _WINDOW)
    return (lead[: found.start()] if found else lead) or None
