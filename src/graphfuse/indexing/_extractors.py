"""Entity extractors: find mentions of entities (and of other documents) in passage text."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise

from .._core._errors import InvalidInput
from .._core._protocols import EntityExtractor
from .._core._text import _CJK, _TOKEN, CJK_SPEAKER, STOPWORDS, cjk_bigrams, has_cjk, normalize
from .._core._types import Mention

__all__ = [
    "CJK_SPEAKER",
    "STOPWORDS",
    "EntityExtractor",
    "HeuristicNameExtractor",
    "Mention",
    "TitleLinker",
    "cjk_bigrams",
    "has_cjk",
    "normalize",
]

_WORD = re.compile(r"\w+", re.UNICODE)
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")

# (A normalised CJK token: NFKD splits a Hangul syllable into its conjoining jamo.)
_CJK_WORD = re.compile(rf"[{_CJK}\u1100-\u11ff]+")


def _words(text: str) -> list[tuple[str, int, int]]:
    found = (_WORD if text.isascii() else _TOKEN).finditer(text)
    return [(normalize(m.group()), m.start(), m.end()) for m in found]


def _joined(words: Sequence[str]) -> str:
    """A mention's key: its words joined by spaces, but not between two CJK characters (東京タワー)."""
    out = words[0] if words else ""
    for before, w in pairwise(words):
        out += w if _CJK_WORD.fullmatch(w) and _CJK_WORD.fullmatch(before) else f" {w}"
    return out


def _weight(words: Sequence[str]) -> tuple[int, int]:
    """``(characters, words)`` of a title's words for the linker's limits: a CJK character counts as
    two characters (東京, Tokyo, is a name; one character alone is not), and a run of CJK
    characters as one word."""
    chars = n = 0
    in_run = False
    for w in words:
        cjk = _CJK_WORD.fullmatch(w) is not None
        chars += 2 if cjk else len(w)
        n += not (cjk and in_run)
        in_run = cjk
    return chars, n


class TitleLinker:
    """Dictionary linker over the corpus's own document titles (and aliases).

    A title matches on whole words, case- and accent-insensitively, ignoring punctuation
    (``"Lambert, Margrave of Tuscany"`` matches ``"Lambert Margrave of Tuscany"``).
    Matching is leftmost-longest over a token dictionary (a trie by length), linear in the
    text. A title ending in a parenthesised disambiguation (``"Mercury (planet)"``) also
    matches without it; with ``comma_alias``, a title with a comma also matches by its part
    before the comma (``"Louisville, Kentucky"`` by ``"Louisville"``). With ``require_capital``
    (the default) a title that starts with a capital letter matches only where the text
    capitalises it too: ``"Brand (play)"`` matches "Brand" but not "a brand of whiskey".
    Titles made only of stopwords, of digits, or shorter than ``min_chars`` characters are
    ignored (they would link everything to everything).

    The :class:`~graphfuse.indexing.Indexer` adds the titles of the records it indexes;
    ``titles`` preloads a mapping of title to document ids.
    """

    def __init__(
        self,
        titles: Mapping[str, Sequence[str]] | None = None,
        *,
        min_chars: int = 3,
        max_words: int = 12,
        stopwords: Iterable[str] = STOPWORDS,
        comma_alias: bool = False,
        require_capital: bool = True,
    ) -> None:
        if isinstance(min_chars, bool) or not isinstance(min_chars, int) or min_chars < 1:
            raise InvalidInput(f"min_chars must be a positive integer, got {min_chars!r}")
        if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
            raise InvalidInput(f"max_words must be a positive integer, got {max_words!r}")
        self._min_chars = min_chars
        self._max_words = max_words
        self._stopwords = frozenset(normalize(w) for w in stopwords)
        self._comma_alias = bool(comma_alias)
        self._require_capital = bool(require_capital)
        self._lock = threading.Lock()
        # words tuple -> (capitalised?, document ids); changed in place under the lock, one key
        # at a time (readers never lock: a dict lookup sees a whole entry, old or new).
        self._entries: dict[tuple[str, ...], tuple[bool, tuple[str, ...]]] = {}
        self._keys_of: dict[str, set[tuple[str, ...]]] = {}  # doc id -> its keys, for remove()
        self._lengths: Counter[int] = Counter()  # key length -> how many keys have it
        self._longest = 0
        for title, ids in (titles or {}).items():
            for doc_id in ids:
                self.add(title, doc_id)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"TitleLinker({len(self._entries)} titles, min_chars={self._min_chars})"

    def keys(self, title: str) -> list[tuple[str, ...]]:
        """The word tuples ``title`` is matched by (empty when it is too short or all stopwords)."""
        forms = {title}
        stripped = _PAREN.sub("", title)
        if stripped and stripped != title:
            forms.add(stripped)
        if self._comma_alias and "," in stripped:
            forms.add(stripped.split(",", 1)[0])
        out = []
        for form in sorted(forms):
            words = tuple(w for w, _, _ in _words(form))
            chars, n_words = _weight(words)
            if not words or n_words > self._max_words:
                continue
            if all(w in self._stopwords or w.isdigit() for w in words):
                continue
            if chars < self._min_chars:
                continue
            out.append(words)
        return out

    def add(self, title: str, doc_id: str) -> None:
        """Register ``doc_id`` as a document about ``title`` (constant time in the titles known)."""
        with self._lock:
            entries = self._entries
            capital = title[:1].isupper()
            for key in self.keys(title):
                was_capital, ids = entries.get(key, (True, ()))
                if doc_id not in ids:
                    if not ids:
                        self._lengths[len(key)] += 1
                    # One assignment of a new tuple: a concurrent reader sees the old or the new entry.
                    entries[key] = (was_capital and capital, (*ids, doc_id))
                    self._keys_of.setdefault(doc_id, set()).add(key)
            self._longest = max((n for n, c in self._lengths.items() if c), default=0)

    def remove(self, doc_id: str) -> None:
        """Forget ``doc_id`` under every title (time proportional to its own titles)."""
        with self._lock:
            entries = self._entries
            for key in self._keys_of.pop(doc_id, ()):
                shown, ids = entries.get(key, (True, ()))
                kept = tuple(i for i in ids if i != doc_id)
                if kept:
                    entries[key] = (shown, kept)
                elif key in entries:
                    del entries[key]
                    self._lengths[len(key)] -= 1
            self._longest = max((n for n, c in self._lengths.items() if c), default=0)

    def lookup(self, title: str) -> tuple[str, ...]:
        """The ids of documents registered under ``title`` (exact normalised match)."""
        entries = self._entries
        for key in self.keys(title):
            if key in entries:
                return entries[key][1]
        return ()

    def extract(self, text: str) -> list[Mention]:
        """Every registered title in ``text``, leftmost-longest, non-overlapping."""
        entries, longest = self._entries, self._longest
        words = _words(text)
        out: list[Mention] = []
        i = 0
        while i < len(words):
            lower_start = self._require_capital and not text[words[i][1]].isupper()
            for n in range(min(longest, len(words) - i), 0, -1):
                hit = entries.get(tuple(w for w, _, _ in words[i : i + n]))
                if hit is not None and not (hit[0] and lower_start):
                    key = _joined([w for w, _, _ in words[i : i + n]])
                    out.append(Mention(key, words[i][1], words[i + n - 1][2], hit[1]))
                    i += n
                    break
            else:
                i += 1
        return out


_CONNECTORS = frozenset({"of", "the", "de", "von", "van", "der", "da", "del", "du", "la", "le", "and", "y", "di"})


class HeuristicNameExtractor:
    """Capitalised multi-word names (``"Port of Spain"``, ``"Lothair II"``) as co-mention entities.

    Finds runs of at least ``min_words`` capitalised words (lower-case connectors such as
    *of*, *de*, *von* allowed inside a run). It produces no ``targets``: passages sharing a
    name are linked by ``CO_MENTION`` only. Offline, no model.
    """

    def __init__(self, *, min_words: int = 2, stopwords: Iterable[str] = STOPWORDS) -> None:
        if isinstance(min_words, bool) or not isinstance(min_words, int) or min_words < 1:
            raise InvalidInput(f"min_words must be a positive integer, got {min_words!r}")
        self._min_words = min_words
        self._stopwords = frozenset(normalize(w) for w in stopwords)

    def __repr__(self) -> str:
        return f"HeuristicNameExtractor(min_words={self._min_words})"

    def extract(self, text: str) -> list[Mention]:
        out: list[Mention] = []
        run: list[re.Match[str]] = []

        def flush() -> None:
            while run and not run[-1].group()[0].isupper():
                run.pop()
            capital = [m for m in run if m.group()[0].isupper()]
            if len(capital) >= self._min_words and not all(normalize(m.group()) in self._stopwords for m in capital):
                key = " ".join(normalize(m.group()) for m in run)
                out.append(Mention(key, run[0].start(), run[-1].end()))
            run.clear()

        last_end = 0
        for m in _WORD.finditer(text):
            gap = text[last_end : m.start()]
            word = m.group()
            if run and (not gap.isspace() or len(gap) > 2):
                flush()
            titlecase = word[0].isupper() and not word.isupper()
            numeral = word.isupper() and len(word) > 1 and bool(run)
            if titlecase or numeral or (run and word in _CONNECTORS):
                run.append(m)
            elif run:
                flush()
            last_end = m.end()
        flush()
        return out
