"""Where cl100k_base always splits a text: the count of joined texts from the counts of their parts.

tiktoken encodes a text piece by piece: a regular expression (the pre-tokenizer) splits it, and
each piece is encoded on its own. A *cut* is a position where every text splits whatever comes
before or after the two characters around it, so the text's count is the sum of the counts of
the two sides. For ``cl100k_base`` (its pattern is ``_CL100K_PATTERN`` in ``_counters``) a
position ``i`` is a cut when:

- ``text[i]`` is a space (U+0020) and ``text[i - 1]`` is not whitespace: no branch of the
  pattern puts a space after a non-space character in one piece (only a letter run, a number,
  punctuation with trailing line breaks or a contraction can hold ``text[i - 1]``), and no
  branch looks further than the space when it decides a piece that ends before it;
- ``text[i - 1]`` is a line break (``\\n``) and ``text[i]`` is not whitespace: the piece holding
  the line break (trailing line breaks of punctuation, or a whitespace run ending in a line
  break) ends there, and again nothing looks beyond ``text[i]``.

The pattern has no lookbehind and no start anchor, so the text after a cut is split as it would
be on its own. (``o200k_base`` differs: its punctuation pieces take a ``/`` after line breaks.)
Whitespace is what :meth:`str.isspace` says: a superset of the pattern's ``\\s``, so the rules
only get stricter. Tests check the rules and :func:`joined_count` against the tokenizer on
random texts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

__all__ = ["first_cut", "joined_count", "last_cut"]

# Matches at each cut: a space after a non-space character, a non-space character after a line break.
_CUT = re.compile(r"(?<=\S) |(?<=\n)\S")
_TAIL = 64  # characters at the end of a text searched first for its last cut


def first_cut(text: str) -> int:
    """The first cut of ``text`` after its start (0 when it has none)."""
    m = _CUT.search(text, 1)
    return m.start() if m else 0


def last_cut(text: str) -> int:
    """The last cut of ``text`` before its end (0 when it has none)."""
    start = max(1, len(text) - _TAIL)
    while True:
        found = 0
        for m in _CUT.finditer(text, start):
            found = m.start()
        if found or start == 1:
            return found
        start = 1


def _cut_at(left: str, right: str) -> bool:
    """Whether the position between the characters ``left`` and ``right`` is a cut."""
    return (right == " " and not left.isspace()) or (left == "\n" and not right.isspace())


def joined_count(parts: Sequence[str], sep: str, count: Callable[[str], int]) -> int | None:
    """``count(sep.join(parts))`` by cl100k_base, from ``count`` of each part and of the short texts
    around each separator (the end of a part from its last cut, the start of the next to its first
    cut); ``None`` when a part has no cut where one is needed (then count the joined text).

    Every cut of a part is a cut of the joined text, which is the sum of its pieces between cuts
    as each part is the sum of its own: only the counts across the separators differ.
    """
    if not parts:
        return count("")
    total = count(parts[0])
    for left, right in zip(parts, parts[1:], strict=False):
        if not left or not right:
            return None
        # (Where the separator meets a part may be a cut already: nothing of that part is needed.)
        end = len(left) if _cut_at(left[-1], sep[0] if sep else right[0]) else last_cut(left)
        start = 0 if _cut_at(sep[-1] if sep else left[-1], right[0]) else first_cut(right) or -1
        if not end or start < 0:
            return None
        tail, head = left[end:], right[:start]
        total += count(right) + count(tail + sep + head) - count(tail) - count(head)
    return total
