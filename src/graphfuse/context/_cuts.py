"""Where cl100k_base always splits a text: the count of joined texts from the counts of their parts.

tiktoken encodes a text piece by piece after its pre-tokenizer splits it, so at a *cut* (a
position every text splits at, whatever lies beyond the two characters around it) a text's count
is the sum of the counts of its two sides: :func:`seam` gives the count a separator adds between
two counted texts. Why each rule below is a cut is written beside ``_CUT``; tests check the rules
against the tokenizer on random texts. See ``docs/context.md``, "Assembly speed".
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

__all__ = ["first_cut", "last_cut", "seam"]

# Matches at each cut: a space after a non-space character, a non-space character after a line
# break, ASCII punctuation after an ASCII letter or digit. For cl100k_base (its pattern is
# _CL100K_PATTERN in _counters) each is a cut because:
# - a space after a non-space: no branch of the pattern puts a space after a non-space character
#   in one piece (only a letter run, a number, punctuation with trailing line breaks or a
#   contraction can hold text[i - 1]);
# - a non-space after a line break: the piece holding the line break (trailing line breaks of
#   punctuation, or a whitespace run ending in a line break) ends there;
# - ASCII punctuation after an ASCII letter or digit: a letter run or a number (of at most three
#   digits) ends before it, and so does a contraction ('s, 'll).
# No branch looks further than text[i] when it decides a piece that ends before it, and the
# pattern has no lookbehind and no start anchor, so the text after a cut is split as it would be
# on its own. (o200k_base differs: its punctuation pieces take a "/" after line breaks, its letter
# pieces a contraction after them: other counters count the joined text.) Whitespace is what str.isspace says: a
# superset of the pattern's \s, so the rules only get stricter.
_CUT = re.compile(r"(?<=\S) |(?<=\n)\S|(?<=[A-Za-z0-9])[!-/:-@\[-`{-~]")
_ALNUM = frozenset(string.ascii_letters + string.digits)
_PUNCTUATION = frozenset(string.punctuation)


def _cut_at(left: str, right: str) -> bool:
    """Whether the position between the characters ``left`` and ``right`` is a cut (as ``_CUT`` finds)."""
    return (
        (right == " " and not left.isspace())
        or (left == "\n" and not right.isspace())
        or (left in _ALNUM and right in _PUNCTUATION)
    )


def first_cut(text: str) -> int:
    """The first cut of ``text`` after its start (0 when it has none)."""
    if len(text) > 1 and _cut_at(text[0], text[1]):
        return 1
    m = _CUT.search(text, 1)
    return m.start() if m else 0


def last_cut(text: str) -> int:
    """The last cut of ``text`` before its end (0 when it has none)."""
    n = len(text)
    if n > 1 and _cut_at(text[-2], text[-1]):
        return n - 1
    start = max(1, n - 32)
    while True:
        found = 0
        for m in _CUT.finditer(text, start):
            found = m.start()
        if found or start == 1:
            return found
        start = 1


def seam(left: str, sep: str, right: str, count: Callable[[str], int]) -> int | None:
    """``count(left + sep + right) - count(left) - count(right)`` by cl100k_base, from ``count`` of
    the short texts around ``sep`` (the end of ``left`` from its last cut, the start of ``right`` to
    its first cut); ``None`` when ``left`` or ``right`` has no cut where one is needed.

    Every cut of ``left`` and of ``right`` is a cut of the joined text: each is the sum of its
    pieces between cuts, and only the pieces across ``sep`` differ. So the count of many texts
    joined by ``sep`` is the sum of their counts and of the seams between neighbours, when every
    seam is found (which vouches for a cut in each text between two separators: the sum needs one).
    """
    if not left or not right:
        return None
    if not sep and _cut_at(left[-1], right[0]):
        return 0
    # (Where the separator meets a text may be a cut already: nothing of that text is needed.)
    end = len(left) if _cut_at(left[-1], sep[0] if sep else right[0]) else last_cut(left)
    start = 0 if _cut_at(sep[-1] if sep else left[-1], right[0]) else first_cut(right) or -1
    if not end or start < 0:
        return None
    tail, head = left[end:], right[:start]
    return count(tail + sep + head) - count(tail) - count(head)
