"""A passage's subject: what its first sentence is about, read without a title."""

from __future__ import annotations

import re

from .._core._sentences import sentence_spans
from .._core._text import CJK_SPEAKER, STOPWORDS, normalize

__all__ = ["linked_names", "name_forms", "subject_name", "subject_span"]

# The first copula of a definitional lead: "Frank Launder (1906 - 1997) was a British writer".
_COPULA = re.compile(r"\s(?:is|was|are|were)\s")
# A line of dialogue: a one- or two-word speaker and a colon ("LiHua: ...", "Ana Ruiz: ..."), or
# a Chinese or Japanese speaker (CJK_SPEAKER).
_SPEAKER = re.compile(rf"[^\W\d][\w.'-]*(?: [^\W\d][\w.'-]*)?:\s|{CJK_SPEAKER}")
_WINDOW = 300  # characters of the first sentence searched for the copula
# Where a subject's name ends: dates or aliases in brackets ("Frank Launder (1906 - 1997)") or an
# apposition after a comma that goes on in lower case ("Adolf I of Lotharingia, count of ...");
# a comma followed by a capital stays ("Love, Honor and Oh-Baby!").
_NAME_END = re.compile(r"\s*[(\[]|,\s+(?=[a-z])")
_WORDS = re.compile(r"\w+")
_QUOTES = "\"'\u201c\u201d\u2018\u2019 "


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


def subject_name(text: str) -> str | None:
    """The name ``text`` is about, read from its subject (:func:`subject_span`), or ``None``.

    The subject up to its dates, aliases or apposition: *"Frank Launder (28 January 1906 -
    1997)"* is ``"Frank Launder"``, *"Adolf I of Lotharingia, count of Keldachgau"* is ``"Adolf
    I of Lotharingia"``; quotes around it are dropped. A subject with a lower-case word of more
    than three letters that is no stopword is a description, not a name (*"The film"*,
    *"Pydantic models"*; *von*, *de*, *al* are parts of names), and dialogue has no subject.
    What a title is to a titled document, this is to one without: the name a question uses for it.
    """
    subject = subject_span(text)
    if subject is None:
        return None
    name = _NAME_END.split(subject, maxsplit=1)[0].strip(_QUOTES)
    words = _WORDS.findall(name)
    # A name capitalises its words but the small ones ("Interview with a Hitman", "Ludwig von
    # Mises"); a subject with a longer lower-case word that is no stopword is a description ("The
    # film", "Pydantic models"), not a name.
    if not words or any(w[0].islower() and len(w) > 3 and normalize(w) not in STOPWORDS for w in words):
        return None
    return name


def name_forms(name: str) -> tuple[str, ...]:
    """The forms other passages call a subject by: ``name``, and for a full personal name its first and last word.

    A lead gives a person's full name (*"William Augustus Wellman"*, *"Jesse John Hibbs"*),
    the passages that mention them the short one (*William Wellman*, *Jesse Hibbs*): a name of
    three or more capitalised words, none of them a stopword, is also known by its first and
    last word. A title (*"Interview with a Hitman"*) holds small words and keeps its one form.
    """
    words = name.split()
    if len(words) >= 3 and all(w[:1].isupper() and normalize(w) not in STOPWORDS for w in words):
        return name, f"{words[0]} {words[-1]}"
    return (name,)


def linked_names(title: str | None, text: str) -> tuple[str, ...]:
    """The names the title linker knows a document by: its title, or without one each of
    :func:`name_forms` of its subject's name (:func:`subject_name`; none for dialogue or a description)."""
    if title is not None:
        return (title,)
    name = subject_name(text)
    return () if name is None else name_forms(name)
