"""Speaker turns: who says a sentence of a chat log or transcript, when the sentence does not say it.

A chat log's line ``WolfgangSchulz: That pasta sounds amazing! I really liked the steak I had.``
splits into two sentences; the second, taken alone into an evidence context, loses its speaker
(and, next to another turn's sentence, reads as someone else's). A sentence inside a labelled
turn is therefore shown with its turn's label: ``WolfgangSchulz: I really liked the steak I had.``
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .._core._text import has_cjk

__all__ = ["Turns", "is_dialogue", "speaker_turns", "starts_turn"]

# "Name: words" at a line's start: a label of at most four words and 40 characters that starts
# with a letter (no digits first: "12:30 pm" is a time, not a speaker), then a colon and a space;
# or the fullwidth colon (U+FF1A) of Chinese and Japanese text, which needs no space after it.
_LABEL = re.compile(r"^[ \t]*([^\W\d_][\w.'\u2019-]*(?: [\w.'\u2019-]+){0,3})(?::[ \t]+|\uff1a[ \t]*)\S", re.MULTILINE)
_MAX_LABEL = 40
# A label in a script without spaces is one run of characters: a short name, not a clause (the
# limit of graphfuse.indexing CJK_SPEAKER).
_MAX_CJK_LABEL = 8
# A text is a dialogue when at least this many lines start with a label; one "Note: ..." line is not.
_MIN_TURNS = 2


def _label_fits(label: str) -> bool:
    return len(label) <= (_MAX_CJK_LABEL if has_cjk(label) else _MAX_LABEL)


def starts_turn(line: str) -> bool:
    """Whether ``line`` starts with a speaker label (``Anna: ...``; a CJK name and the fullwidth colon)."""
    m = _LABEL.match(line)
    return m is not None and _label_fits(m.group(1))


def is_dialogue(text: str) -> bool:
    """Whether ``text`` is a dialogue: at least two of its lines start with a speaker label."""
    if ":" not in text and "\uff1a" not in text:
        return False
    found = 0
    for m in _LABEL.finditer(text):
        found += _label_fits(m.group(1))
        if found >= _MIN_TURNS:
            return True
    return False


class Turns:
    """For each sentence of a text: the label of the turn it lies inside (``None`` for a sentence
    that starts its turn or lies outside any), and the turn's number (``-1`` outside any)."""

    __slots__ = ("labels", "turns")

    def __init__(self, labels: list[str | None], turns: list[int]) -> None:
        self.labels = labels
        self.turns = turns


def speaker_turns(text: str, spans: Sequence[tuple[int, int]]) -> Turns | None:
    """The speakers of ``text``'s sentences (``spans``, in order), or ``None`` when the text is not
    a dialogue: fewer than two of its lines start with a ``Label: `` speaker label (or a label and
    the fullwidth colon, U+FF1A)."""
    if ":" not in text and "\uff1a" not in text:
        return None
    starts: list[tuple[int, int, str]] = []  # (turn start, label end, label) by position
    for m in _LABEL.finditer(text):
        label = m.group(1)
        if _label_fits(label):
            starts.append((m.start(1), m.end(1) + 1, label))
    if len(starts) < _MIN_TURNS:
        return None
    labels: list[str | None] = []
    turns: list[int] = []
    t = -1
    for start, _ in spans:
        while t + 1 < len(starts) and starts[t + 1][0] <= start:
            t += 1
        # (A turn runs to the end of its line: a sentence on a later, unlabelled line is outside it.)
        if t < 0 or "\n" in text[starts[t][0] : start]:
            labels.append(None)
            turns.append(-1)
            continue
        begin, _, label = starts[t]
        labels.append(None if start == begin else label)
        turns.append(t)
    return Turns(labels, turns)
