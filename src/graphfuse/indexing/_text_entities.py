"""Entities from plain text (no titles, no model): proper-noun phrases, joined names, aliases."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._core._errors import InvalidInput
from .._core._text import _CJK, _TOKEN, CJK_SPEAKER, STOPWORDS, has_cjk, normalize
from ._extractors import Mention, TitleLinker, _joined

if TYPE_CHECKING:
    from ._records import SourceRecord

__all__ = ["EntityMatcher", "TextEntityExtractor", "entity_key", "merge_variants"]

_SEAM = re.compile(r"(?<=[^\W\d_A-Z])(?=[A-Z])")
_PIECE = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"[.!?:;\n\"“”()\[\]]\s*$|^\s*$")
_CONNECTORS = frozenset({"of", "de", "von", "van", "der", "da", "del", "du", "la", "le", "y", "di"})
# A capitalised word (a contraction or possessive ending cut off: "Wolfgang's" -> "Wolfgang"),
# and runs of them joined by single spaces, with lower-case connectors inside.
# (A name's letters stop at Chinese or Japanese characters, which run into it without a space:
# "去Tokyo Tower吧" names "Tokyo Tower".)
_LETTER = rf"[^\W_{_CJK}]"
_CAP = rf"[A-ZÀ-ÖØ-Þ]{_LETTER}*(?:[\-]{_LETTER}+)*(?:['\u2019](?:s|ll|ve|re|d|m|t)\b)?"
_CJK_SPEAKER = re.compile(rf"^[ \t]*{CJK_SPEAKER}", re.MULTILINE)
_RUN = re.compile(rf"(?<!{_LETTER}){_CAP}(?: (?:(?:{'|'.join(sorted(_CONNECTORS))}) )*{_CAP})*")
# Capitalised words that are not names: calendar words and chat fillers.
_NOT_NAMES = frozenset(
    [
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "today",
        "tomorrow",
        "yesterday",
        "hey",
        "hi",
        "hello",
        "thanks",
        "thank",
        "yes",
        "no",
        "ok",
        "okay",
        "oh",
        "wow",
        "sure",
        "sounds",
        "great",
        "awesome",
        "perfect",
        "cool",
        "yeah",
        "lol",
        "haha",
        "please",
        "sorry",
        "good",
        "nice",
        "absolutely",
        "definitely",
        "totally",
        "let",
    ]
)
_CONTRACTION = re.compile(r"['\u2019](?:s|ll|ve|re|d|m|t)$")


def _fold(word: str) -> str:
    word = _CONTRACTION.sub("", word)
    return word.lower() if word.isascii() else normalize(word)


_CONTRACTIONS = re.compile(r"['\u2019](?:s|ll|ve|re|d|m|t)\b")


def entity_key(name: str) -> str:
    """The normalised key of a name: joined names split at their seams, case and accents folded.

    ``"WolfgangSchulz"``, ``"Wolfgang Schulz"`` and ``"wolfgang  schulz"`` share the key
    ``"wolfgang schulz"``; ``"ChaeSong-hwa"`` and ``"Chae Song-hwa"`` share ``"chae song hwa"``.
    """
    parts: list[str] = []
    for word in _PIECE.findall(_CONTRACTIONS.sub("", name)):
        parts.extend(p.lower() if p.isascii() else normalize(p) for p in _SEAM.split(word) if p)
    return " ".join(parts)


def _compact(key: str) -> str:
    return key.replace(" ", "")


class TextEntityExtractor:
    """Proper-noun phrases as entities, for corpora without titles (chats, tickets, notes, news).

    A phrase is a run of capitalised words (lower-case connectors such as *of*, *von* allowed
    inside; all-capital acronyms count), joined names (``WolfgangSchulz``) included. A single
    capitalised word that opens a sentence is left out (it is usually just capitalised), unless
    it is a joined name or a speaker (``Name:`` at the start of a line). Leading and trailing
    stopwords are dropped (``"The Rhine"`` is ``rhine``), calendar words and chat fillers are not
    names, and phrases shorter than ``min_chars`` or longer than ``max_words`` are ignored.

    The entity of a mention is its :func:`entity_key`, mapped through ``aliases`` (``{alias:
    canonical name}``, both spelled freely). Mentions carry no ``targets``: the
    :class:`~graphfuse.indexing.Indexer` links passages through them (entity nodes with
    ``entity_graph=True``, ``CO_MENTION`` otherwise). Offline, no model (its speed:
    ``docs/textgraph-spacy.md``).
    """

    def __init__(
        self,
        *,
        aliases: Mapping[str, str] | None = None,
        min_chars: int = 3,
        max_words: int = 6,
        stopwords: Iterable[str] = STOPWORDS,
    ) -> None:
        for what, value in (("min_chars", min_chars), ("max_words", max_words)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInput(f"{what} must be a positive integer, got {value!r}")
        if aliases is not None and not isinstance(aliases, Mapping):
            raise InvalidInput(f"aliases must be a mapping of alias to canonical name, got {aliases!r}")
        table: dict[str, str] = {}
        for alias, canonical in (aliases or {}).items():
            if (
                not isinstance(alias, str)
                or not isinstance(canonical, str)
                or not alias.strip()
                or not canonical.strip()
            ):
                raise InvalidInput(f"aliases must map non-empty names to non-empty names, got {alias!r}: {canonical!r}")
            table[entity_key(alias)] = entity_key(canonical)
        self._aliases = table
        self._min_chars = min_chars
        self._max_words = max_words
        self._stopwords = frozenset(normalize(w) for w in stopwords)

    def __repr__(self) -> str:
        return f"TextEntityExtractor(aliases={len(self._aliases)}, max_words={self._max_words})"

    def _mention(self, m: re.Match[str], text: str) -> Mention | None:
        words = m.group().split(" ")
        start = m.start()
        lowered = [_fold(w) for w in words]
        while lowered and (lowered[0] in self._stopwords or lowered[0] in _CONNECTORS or lowered[0] in _NOT_NAMES):
            start += len(words[0]) + 1
            words, lowered = words[1:], lowered[1:]
        while lowered and (lowered[-1] in self._stopwords or lowered[-1] in _CONNECTORS or lowered[-1] in _NOT_NAMES):
            words, lowered = words[:-1], lowered[:-1]
        if not words or len(words) > self._max_words:
            return None
        if len(words) == 1:
            word = words[0]
            if lowered[0] in _NOT_NAMES or lowered[0] in self._stopwords:
                return None
            joined = _SEAM.search(word) is not None
            end = start + len(word)
            line_start = text.rfind("\n", 0, start) + 1
            speaker = text[end : end + 1] == ":" and not text[line_start:start].strip()
            opens = _SENTENCE_END.search(text[max(0, start - 3) : start]) is not None
            if opens and not (joined or speaker):
                return None
        key = entity_key(" ".join(words))
        if len(key) - key.count(" ") < self._min_chars:
            return None
        return Mention(self._aliases.get(key, key), start, start + len(" ".join(words)))

    def extract(self, text: str) -> list[Mention]:
        """The proper-noun phrases of ``text``, in order."""
        out: list[Mention] = []
        for m in _RUN.finditer(text):
            found = self._mention(m, text)
            if found is not None:
                out.append(found)
        if "\uff1a" in text and has_cjk(text):
            # Chinese and Japanese have no capitals: the speakers of their chat lines are the names.
            for m in _CJK_SPEAKER.finditer(text):
                key = entity_key(m.group(1))
                # (A CJK character counts as two towards min_chars, as in the title linker.)
                if 2 * len(key) >= self._min_chars:
                    out.append(Mention(self._aliases.get(key, key), m.start(1), m.end(1)))
            out.sort(key=lambda mention: mention.start)
        return out


def merge_variants(counts: Mapping[str, int]) -> dict[str, str]:
    """Light merging of name variants: ``{variant key: canonical key}``.

    A one-word entity (``"wolfgang"``) that is the first or last word of exactly one longer
    entity (``"wolfgang schulz"``) is that entity; keys that differ only in spacing
    (``"chae songhwa"``, ``"chae song hwa"``) are one entity, the most frequent spelling.
    ``counts`` is how often each key was seen.
    """
    out: dict[str, str] = {}
    by_compact: dict[str, list[str]] = {}
    for key in counts:
        by_compact.setdefault(_compact(key), []).append(key)
    for keys in by_compact.values():
        if len(keys) > 1:
            best = max(keys, key=lambda k: (counts[k], k))
            out.update({k: best for k in keys if k != best})
    ends: dict[str, set[str]] = {}
    for key in counts:
        words = key.split()
        if len(words) > 1 and key not in out:
            ends.setdefault(words[0], set()).add(key)
            ends.setdefault(words[-1], set()).add(key)
    for key in counts:
        if " " not in key and key not in out:
            owners = ends.get(key, set())
            if len(owners) == 1:
                out[key] = next(iter(owners))
    return out


class EntityMatcher:
    """Finds known entities in a question, tolerant of spacing and case.

    Built from entity keys (:func:`entity_key`) and what they identify (e.g. entity node ids).
    A question's word sequences of up to ``max_words`` words are compared with every key in
    their joined form, so "Wolfgang Schulz", "wolfgang schulz", "WolfgangSchulz" and "Wolfgang
    Schulz's" all find ``"wolfgang schulz"``. Longest matches first, non-overlapping.
    """

    def __init__(
        self, entities: Mapping[str, Any], *, max_words: int = 6, stopwords: Iterable[str] = STOPWORDS
    ) -> None:
        if not isinstance(entities, Mapping):
            raise InvalidInput(f"entities must be a mapping of entity key to value, got {entities!r}")
        stop = frozenset(normalize(w) for w in stopwords)
        self._table: dict[str, tuple[str, Any]] = {}
        for key, value in entities.items():
            if not isinstance(key, str) or not key.strip():
                raise InvalidInput(f"entity keys must be non-empty strings, got {key!r}")
            norm = entity_key(key)
            if norm and not all(w in stop for w in norm.split()):
                self._table[_compact(norm)] = (norm, value)
        self._max_words = max_words

    def __len__(self) -> int:
        return len(self._table)

    def __repr__(self) -> str:
        return f"EntityMatcher({len(self._table)} entities)"

    def match(self, text: str) -> list[tuple[str, Any]]:
        """``(entity key, value)`` for every known entity in ``text``, in order of appearance."""
        return [(key, value) for key, value, _ in self.match_surface(text)]

    def match_surface(self, text: str) -> list[tuple[str, Any, str]]:
        """Like :meth:`match`, with the words of ``text`` that matched (``"WolfgangSchulz"``).

        The surface form tells a name from a common word: ``"place"`` in *the place of birth*
        is written in lower case, ``"Place"`` in *Place Vendôme* is not.
        """
        pieces: list[str] = []
        surface: list[str] = []
        for word in _PIECE.findall(text):
            # (Chinese and Japanese run words together: their characters are the pieces, so
            # "王明带了什么" holds "王明".)
            for p in _TOKEN.findall(word) if has_cjk(word) else _SEAM.split(word):
                if p:
                    pieces.append(normalize(p))
                    surface.append(p)
        out: list[tuple[str, Any, str]] = []
        i = 0
        table = self._table
        while i < len(pieces):
            for n in range(min(self._max_words * 2, len(pieces) - i), 0, -1):
                joined = "".join(pieces[i : i + n])
                hit = table.get(joined)
                if hit is None and n == 1 and joined.endswith("s"):
                    hit = table.get(joined[:-1])  # "Wolfgang's" -> "wolfgang", "s"
                if hit is not None:
                    out.append((hit[0], hit[1], _joined(surface[i : i + n])))
                    i += n
                    break
            else:
                i += 1
        return out


# wants_entity_graph: the share of records the titles must link, read from an even sample of this many.
_MIN_LINKING = 0.1
_LINK_SAMPLE = 2000


def wants_entity_graph(records: Sequence[SourceRecord]) -> bool:
    """Whether ``records`` need a graph built from their text (``Indexer(entity_graph=True)``).

    True when fewer than half of them carry a title that names something (a title with
    letters that the :class:`~graphfuse.indexing.TitleLinker` can match): chat logs, tickets
    and title-stripped passages get their graph from the proper nouns of the text, while
    titled corpora (Wikipedia-like) link through their titles. Also true when the titles do
    not link the records: fewer than 10 % of them (of an even sample of at most 2,000) carry
    ``links`` or name another record's title, as with notes titled by their file names or
    headings, whose title links alone would leave the graph empty. ``graphfuse index`` and
    ``graphfuse eval`` decide this way unless told.
    """
    if not records:
        return False
    linker = TitleLinker()
    titled = [r for r in records if r.title and any(c.isalpha() for c in r.title) and linker.keys(r.title)]
    if len(titled) < len(records) / 2:
        return True
    if len(records) < 2:
        return False  # (one record links nothing: its title decides)
    for r in titled:
        linker.add(r.title or "", r.id)
    sample = records[:: -(-len(records) // _LINK_SAMPLE)]
    linking = sum(1 for r in sample if r.links or any(set(m.targets) - {r.id} for m in linker.extract(r.text)))
    return linking < _MIN_LINKING * len(sample)
