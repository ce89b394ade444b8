"""Text normalisation shared by indexing, passage selection, BM25 and context assembly.

Lower-casing and accent folding, stopwords, scripts written without spaces (Chinese, Japanese,
Korean) and the BM25 tokenizer: one definition each, below every layer that reads text.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["CJK_SPEAKER", "STOPWORDS", "bm25_tokens", "cjk_bigrams", "has_cjk", "normalize"]

_STOPWORD_TEXT = """a an and are as at be but by for from had has have he her his i in is it its me my not of on or our
    she so that the their them there these they this those to was we were what when where which who whom
    why will with you your all any can do does did how if into no nor only other out over own same such
    than then too very s t just also about after again against before being below between both during
    each few more most off once under until up while one two three new first last
    """
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def normalize(text: str) -> str:
    """Lower-case, strip accents: the form titles and passages are matched in."""
    if text.isascii():  # NFKD changes nothing and there are no combining marks: the common case, no decomposition
        return text.lower()
    if "\n" in text:
        # Line by line: a line break is a starter (no mark combines with it), so each line decomposes,
        # loses its marks and folds on its own; the ASCII lines of a long page (an emoji here and
        # there) take the fast way.
        return "".join(_normalized(line) for line in text.splitlines(keepends=True))
    return _normalized(text)


def _normalized(text: str) -> str:
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


# Scripts written without spaces between words (Han, kana, and Hangul, whose particles attach to
# the noun: 서울은): a title is found inside a run of them character by character, so each of their
# characters is a word of its own to the title linker ("東京タワーは港区にある" holds "東京タワー").
_CJK = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
# A chat speaker in a script without capitals or spaces: a name of at most eight characters and
# the fullwidth colon (U+FF1A) that ends it, at the start of a line.
CJK_SPEAKER = rf"([{_CJK}]{{1,8}})\uff1a"


def has_cjk(text: str) -> bool:
    """Whether ``text`` has a Chinese, Japanese or Korean character (scripts without spaces)."""
    return not text.isascii() and _CJK_RUN.search(text) is not None


def cjk_bigrams(word: str) -> list[str]:
    """A word (a ``\\w+`` run, not normalised) with each run of CJK characters in it as its
    overlapping character bigrams, a run of one character as itself: the usual way to index text
    without spaces (``"東京タワーは"`` -> ``東京 京タ タワ ワー ーは``); other words unchanged."""
    if not has_cjk(word):
        return [word]
    out: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(word):
        if m.start() > pos:
            out.append(word[pos : m.start()])
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    if pos < len(word):
        out.append(word[pos:])
    return out


_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A lower-case letter followed by an upper-case one: the seam of a joined name ("WolfgangSchulz").
_CAMEL = re.compile(r"(?<=[^\W\d_A-Z])(?=[A-Z])")


def bm25_tokens(text: str, *, stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """Lower-cased, accent-stripped word tokens without stopwords.

    Words are runs of letters and digits (an underscore separates: ``20260430_18:30`` is
    ``20260430 18 30``); a joined name is split at its lower-to-upper seams, so
    ``WolfgangSchulz`` and "Wolfgang Schulz" give the same tokens. Runs of Chinese, Japanese
    or Korean characters, written without spaces, give their character bigrams
    (``東京タワー`` -> ``東京 京タ タワ ワー``).
    """
    out: list[str] = []
    words = _WORD.findall(text)
    if has_cjk(text):  # (runs of Chinese, Japanese or Korean: their character bigrams)
        words = [part for word in words for part in cjk_bigrams(word)]
    for word in words:
        parts = _CAMEL.split(word) if not word.islower() else (word,)
        for part in parts:
            token = part.lower() if part.isascii() else normalize(part)
            if token not in stopwords:
                out.append(token)
    return out
