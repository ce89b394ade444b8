"""Sentences and terms: how context assembly and multi-hop read passages and questions (no model, any script)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

from ._text import STOPWORDS, cjk_bigrams, has_cjk, normalize

__all__ = [
    "ascii_word_map",
    "content_terms",
    "cut_to",
    "holds_term",
    "is_heading",
    "sentence_spans",
    "stem",
    "stem_prefixes",
    "terms_of",
    "words_of",
]

# A sentence ends at . ! ? (and their CJK forms), closing quotes/brackets included, before
# whitespace; CJK terminators end a sentence without whitespace. Newlines end one too.
# Written to start with one character class (the lookbehinds say which branch it opened) so that
# the regex engine skips ahead to candidate characters instead of trying every alternative at
# every position, as the plain alternation
# ``(?:[.!?]+["')\]\u201d\u2019]*(?=\s))|[\u3002\uff01\uff1f]+|\n+`` does; the matches are the same.
_END = re.compile(
    r"""[.!?\u3002\uff01\uff1f\n]"""
    r"""(?:(?<=[.!?])[.!?]*["')\]\u201d\u2019]*(?=\s)|(?<=[\u3002\uff01\uff1f])[\u3002\uff01\uff1f]*|(?<=\n)\n*)"""
)
# Words before a period that do not end a sentence: titles, initials, common abbreviations.
_ABBREVIATION_TEXT = """mr mrs ms dr prof st jr sr vs etc eg ie no nos vol pp inc ltd co corp fig gen gov col lt
    sgt capt rev mt ft jan feb mar apr jun jul aug sep sept oct nov dec approx est ca cf al op"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_TEXT.split())
_LONGER = max(map(len, _ABBREVIATIONS)) + 1
_WORD = re.compile(r"\w+", re.UNICODE)


def sentence_spans(text: str, limit: int | None = None) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``, whitespace trimmed, in order.

    A rule-based splitter: ends at ``.``/``!``/``?`` before whitespace (not after an initial,
    a number's decimal point or a known abbreviation such as *Dr.* or *U.S.*), at the CJK full
    stop, exclamation and question marks, and at line breaks. A text without any boundary is
    one sentence. With ``limit``, only the first ``limit`` sentences are returned (and the rest
    of the text is not read). The spans of a long text are remembered (by its content) for the
    next calls: packing and scoring split the same long pages again and again. (A context joins
    the lines of each paragraph first, :mod:`~graphfuse.context._paragraphs`: there a line
    break ends a paragraph, a heading, a list item or a line of code, never a wrapped line.)
    """
    if limit is None and len(text) >= _REMEMBERED_FROM:
        return list(_long_spans(text))
    return _spans(text, limit)


_REMEMBERED_FROM = 4096  # characters


@lru_cache(maxsize=32)
def _long_spans(text: str) -> tuple[tuple[int, int], ...]:
    return tuple(_spans(text, None))


def _spans(text: str, limit: int | None) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _END.finditer(text):
        if limit is not None and len(spans) >= limit:
            return spans
        end = m.end()
        dot = m.start()
        # (Seven letters or digits before the period: a word longer than any abbreviation, whose
        # case folding cannot shorten it, so the word need not be read.)
        if text[dot] == "." and not (dot >= _LONGER and text[dot - _LONGER : dot].isalnum()):
            before = _word_before(text, dot)
            # Initials (J. R. R.), abbreviations (Dr., U.S.) and single letters do not end sentences.
            if (len(before) == 1 and before.isalpha()) or before.casefold() in _ABBREVIATIONS:
                continue
        _add(text, start, end, spans)
        start = end
    if limit is None or len(spans) < limit:
        _add(text, start, len(text), spans)
    return spans


def _add(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    # Whitespace trimmed off both ends (str.strip removes what str.isspace calls whitespace).
    piece = text[start:end]
    left = start + len(piece) - len(piece.lstrip())
    right = end - (len(piece) - len(piece.rstrip()))
    if right > left:
        spans.append((left, right))


_WORD_FIRST = re.compile(r"\W*(\w+)")


def _word_before(text: str, dot: int) -> str:
    """The last word in the 40 characters before ``text[dot]`` and up to it, trailing non-word
    characters skipped: what ``(\\w+)\\W*$`` finds in ``text[dot - 40 : dot + 1]``, read from the
    reversed window (a regex search over the window would try every start)."""
    m = _WORD_FIRST.match(text[max(0, dot - 40) : dot + 1][::-1])
    return m.group(1)[::-1] if m else ""


_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("er", ""), ("or", ""))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude, language-neutral stem for matching: normalised, one English suffix off, 6 characters.

    ``directed``/``director``/``directors`` -> ``direct``; ``died``/``dies`` -> ``die``.
    Words of other scripts are only normalised (and cut to 6 characters when alphabetic).
    """
    w = normalize(word)
    if w.endswith("'s"):
        w = w[:-2]
    for suffix, replacement in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: len(w) - len(suffix)] + replacement
            break
    else:
        if w.endswith("ed") and len(w) == 4:  # died -> die
            w = w[:-1]
    w = w[:6]
    return _RELATION_STEMS.get(w, w)


# Words that name one family/biographical relation in a question and another in the text that
# states it (*place of death* / *died in* / *assassinated*, *spouse* / *married*, *father* /
# *son of*: a parent and a child are one relation read from either end; *where did X study* /
# *graduated from* / *educated at*; *place of burial* / *buried* / *interred*).
_RELATION_STEMS = {
    "death": "die",
    "birth": "born",
    "marry": "spouse",
    "marria": "spouse",
    "wife": "spouse",
    "husban": "spouse",
    "son": "child",
    "daught": "child",
    "childr": "child",
    "broth": "siblin",
    "sist": "siblin",
    "fath": "child",
    "moth": "child",
    "parent": "child",
    "grandf": "child",
    "grandm": "child",
    "kill": "die",
    "assass": "die",
    "murder": "die",
    "execut": "die",
    "dying": "die",
    "study": "educat",
    "studen": "educat",
    "gradua": "educat",
    "alumnu": "educat",
    "alumni": "educat",
    "burial": "bury",
    "interr": "bury",
    "entomb": "bury",
}


@lru_cache(maxsize=4096)
def stem_prefixes(term: str) -> tuple[str, ...]:
    """Prefixes, one of which starts every normalised word that :func:`stem` maps to ``term``.

    :func:`stem` cuts one suffix off a word's end (``ies``/``ied`` become ``y``), keeps six
    characters and maps some stems to others (``_RELATION_STEMS``): such a word starts with
    ``term`` or with a stem mapped to it, less a final ``y`` that the suffix rules may have added.
    """
    bases = {term, *(k for k, v in _RELATION_STEMS.items() if v == term)}
    found = {p for b in bases for p in ((b, b[:-1]) if b.endswith("y") else (b,))}
    # (A prefix that starts with another one finds nothing more; the term's own prefix is looked for first.)
    kept = [p for p in found if not any(q != p and p.startswith(q) for q in found)]
    return tuple(sorted(kept, key=lambda p: (not term.startswith(p), p)))


def holds_term(padded: str, term: str) -> bool:
    """Whether ``padded``, an ASCII text's ``f" {ascii_word_map(text.lower())} "``, has a word that
    :func:`stem` maps to ``term`` (of more than one character, not a stopword): whether ``term in
    content_terms(text)``, read with ``str.find`` at the words that start with a
    :func:`stem_prefixes` prefix instead of splitting the text into words."""
    for prefix in stem_prefixes(term):
        # (Searched without the space before it: spaces are everywhere, its first letter is not.)
        at = padded.find(prefix)
        while at >= 0:
            if padded[at - 1] == " ":
                end = padded.find(" ", at)
                word = padded[at:end]
                if len(word) > 1 and word not in STOPWORDS and stem(word) == term:
                    return True
            at = padded.find(prefix, at + 1)
    return False


def content_terms(text: str, *, stopwords: Iterable[str] = STOPWORDS) -> set[str]:
    """The stems of ``text``'s content words (stopwords and one-character words left out)."""
    return terms_of(words_of(text), stopwords=stopwords)


def words_of(text: str) -> list[str]:
    """The words (``\\w+``) of ``text`` once normalised: what :func:`content_terms` and the match keys read."""
    if text.isascii():
        return ascii_word_map(text.lower()).split()
    if not has_cjk(text):
        return _WORD.findall(normalize(text))
    # (Chinese, Japanese, Korean: character bigrams are the words, so that a name or a term is
    # found inside a run of text without spaces.)
    # (NFC after normalising puts the Hangul syllables that NFKD split into jamo back together.)
    return [part for word in _WORD.findall(unicodedata.normalize("NFC", normalize(text))) for part in cjk_bigrams(word)]


# ASCII bytes: a word character (letter, digit, underscore: what \w matches in ASCII) kept, any other a space.
_ASCII_WORD_MAP = bytes(i if i < 0x80 and (chr(i).isalnum() or chr(i) == "_") else 0x20 for i in range(256))


def ascii_word_map(text: str) -> str:
    """ASCII ``text`` with every non-word character replaced by a space: its ``split()`` is the
    ``\\w+`` runs (of any slice too), several times faster than a regex ``findall``."""
    return text.encode("ascii").translate(_ASCII_WORD_MAP).decode("ascii")


def terms_of(words: Iterable[str], *, stopwords: Iterable[str] = STOPWORDS) -> set[str]:
    """:func:`content_terms` of a text from its :func:`words_of` (one normalisation for several uses)."""
    stop = stopwords if isinstance(stopwords, frozenset) else frozenset(stopwords)
    return {stem(w) for w in set(words) - stop if len(w) > 1}


def cut_to(text: str, fits: object, *, ellipsis: str = "\u2026") -> str:
    """The longest prefix of ``text`` (ended at a word boundary when possible, plus ``ellipsis``) that ``fits``.

    ``fits(candidate) -> bool`` is the budget test; a binary search over prefix lengths
    calls it O(log n) times. Returns ``""`` when not even one character fits.
    """
    check = fits if callable(fits) else None
    if check is None:
        raise TypeError("fits must be callable")
    if check(text):
        return text
    lo, hi = 0, len(text)  # lo: a length known to fit (0 always does, as ""), hi: known not to
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if check(text[:mid].rstrip() + ellipsis):
            lo = mid
        else:
            hi = mid
    if lo == 0:
        return ""
    prefix = text[:lo]
    space = prefix.rfind(" ")
    if space > lo // 2:
        prefix = prefix[:space]
    out = prefix.rstrip() + ellipsis
    return out if check(out) else ""


_HEADING_LINE = re.compile(r"#{1,6}[ \t]")


def is_heading(sentence: str) -> bool:
    """Whether ``sentence`` is a markdown heading line (``## Overview``): it names a section, it
    states nothing (a line break ends a sentence, so a heading is a sentence of its own)."""
    return sentence.startswith("#") and _HEADING_LINE.match(sentence) is not None
