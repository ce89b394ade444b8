"""Evidence selection: which sentences of the retrieved passages carry the query's facts.

A sentence is worth keeping when it names the query's entities, or a bridge entity (another
retrieved document's subject, which graph stages reach through mentions), or shares the
query's content words; a passage's first sentence defines its subject and is kept with it.
No model: words, titles and positions only. The cues for what a question asks for (a date, a
number, a place) key on English question words ("when", "how many", "where") and prepositions;
in another language they stay silent and a sentence is scored by its words, names and position.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from .._core._sentences import ascii_word_map, content_terms, holds_term, sentence_spans, terms_of, words_of
from .._core._text import normalize
from ..defaults import EVIDENCE_WEIGHTS
from ..indexing import TextEntityExtractor
from ._dialogue import speaker_turns
from ._items import Item
from ._paragraphs import HEADING, MARKUP, span_kinds, subject_index

__all__ = [
    "NameMatcher",
    "Sentence",
    "SentenceScorer",
    "continues_turn",
    "entity_pattern",
    "joined_texts",
    "relation_query",
    "score_sentences",
]

_WORD = re.compile(r"\w+", re.UNICODE)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_NUMBER = re.compile(r"\d")
_TIME_WORDS = frozenset({"when", "year", "date", "founded", "old", "age", "older", "younger"})
_QUANTITY_WORDS = frozenset({"many", "much", "number", "long", "far", "tall", "high", "population"})
_PLACE_WORDS = frozenset({"where", "place", "city", "country", "town", "located", "location", "buried"})
# Words that say what a question is about, a birth or a death, not what it asks for: "where did X
# die" asks for a place and "when was X born" for a date; alone ("who died first?"), for dates.
_LIFE_WORDS = frozenset({"born", "die", "died"})
# "in Detroit", "at Ukiah", "of Port of Spain": a place named after a locative preposition.
_PLACE = re.compile(r"\b(?:in|at|near|of)\s+(?:the\s+)?[A-Z][\w\-]+")
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_QUERY_PARENS = re.compile(r"\([^()]*\)")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A candidate evidence sentence: its item, position, text and score."""

    item: int
    index: int
    text: str
    score: float
    semantic: float = 0.0  # the part of ``score`` that comes from similarity to the query
    terms: frozenset[str] = frozenset()  # the query's content terms the sentence holds
    # In a dialogue (see _dialogue): the length of the speaker label put before a sentence inside a
    # turn (``"Name: "``), and the turn's number (-1 outside any).
    lead: int = 0
    turn: int = -1


def continues_turn(before: Sentence, s: Sentence) -> bool:
    """Whether ``s`` is the sentence right after ``before`` in one speaker's turn, so that, shown
    after it, ``s`` goes without the turn's label."""
    return bool(s.lead) and s.turn == before.turn and s.item == before.item and s.index == before.index + 1


def joined_texts(sentences: Sequence[Sentence]) -> list[str]:
    """The texts of one item's kept ``sentences`` (in text order) as they are shown joined by spaces:
    a sentence that follows the previous one of its speaker's turn goes without the turn's label."""
    out: list[str] = []
    before: Sentence | None = None
    for s in sentences:
        out.append(s.text[s.lead :] if before is not None and continues_turn(before, s) else s.text)
        before = s
    return out


def _key(text: str) -> str:
    return " ".join(words_of(text))


_ONE_WORD: list[tuple[tuple[str, ...], str]] = []  # (the unread words of one-word keys: shared, never changed)


class NameMatcher:
    """Finds name keys as whole words in a text's normalised words, as :func:`entity_pattern` does.

    ``findall(words)`` returns what ``_pattern(keys).findall(" ".join(words))`` would (at each
    word, the longest key that starts there, ties by text; matches do not overlap), without a
    regex alternation of every name tried at every character: keys are looked up by their first
    word. ``keys`` are ``_key`` forms (words joined by single spaces).
    """

    __slots__ = ("_by_first", "_single")

    def __init__(self, keys: Iterable[str]) -> None:
        distinct = set(keys)
        # Every key one word: a match is any word that is a key (the common case of one-word titles),
        # and the keys' words are never read.
        self._single = not any(" " in k for k in distinct)
        by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        if self._single:
            by_first = dict.fromkeys(distinct, _ONE_WORD)
        else:
            for k in distinct:
                words = tuple(k.split(" "))
                by_first.setdefault(words[0], []).append((words, k))
            for group in by_first.values():
                if len(group) > 1:
                    group.sort(key=lambda pair: (-len(pair[1]), pair[1]))
        self._by_first = by_first

    def __bool__(self) -> bool:
        return bool(self._by_first)

    def findall(self, words: Sequence[str]) -> list[str]:
        """The keys found in ``words``, left to right, longest first at each word, not overlapping."""
        by_first = self._by_first
        if by_first.keys().isdisjoint(words):
            return []
        if self._single:
            return [w for w in words if w in by_first]
        out: list[str] = []
        after = 0  # the first word after the last match
        for i in [i for i, w in enumerate(words) if w in by_first]:
            if i < after:
                continue
            for key_words, key in by_first[words[i]]:
                m = len(key_words)
                if m == 1 or tuple(words[i : i + m]) == key_words:
                    out.append(key)
                    after = i + m
                    break
        return out

    def found(self, words: Sequence[str]) -> set[str]:
        """The distinct keys found in ``words``: ``set(findall(words))``."""
        if self._single:
            return self._by_first.keys() & words
        return set(self.findall(words))

    def search(self, words: Sequence[str]) -> bool:
        """Whether any key occurs in ``words`` (as whole words)."""
        by_first = self._by_first
        if by_first.keys().isdisjoint(words):
            return False
        if self._single:
            return True
        for i in [i for i, w in enumerate(words) if w in by_first]:
            for key_words, _ in by_first[words[i]]:
                m = len(key_words)
                if m == 1 or tuple(words[i : i + m]) == key_words:
                    return True
        return False


def entity_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``names`` as whole words in a normalised text (``_key`` form)."""
    return _pattern(k for n in names if (k := _name_key(n)))


def _expects(query: str) -> tuple[bool, bool, bool]:
    words = {normalize(w) for w in _WORD.findall(query)}
    place = bool(words & _PLACE_WORDS)
    time = bool(words & _TIME_WORDS) or (not place and bool(words & _LIFE_WORDS))
    return time, bool(words & _QUANTITY_WORDS), place


_SHARED_DF = 2
_SHARED_AMONG = 10


def relation_query(query: str, items: Sequence[Item]) -> str | None:
    """The question without the titles of the retrieved documents it names: what it asks about them.

    ``"Where did the director of film Atomised die?"`` -> ``"where did the director of film die"``
    (normalised words) when *Atomised* is a retrieved title; ``None`` when the question names none.
    """
    keys = [k for it in items if it.title and (k := _name_key(it.title))]
    if not keys:
        return None
    words = words_of(query)
    matcher = NameMatcher(keys)
    found = matcher.findall(words)
    if not found:
        return None
    out: list[str] = []
    i = 0
    for key in found:
        # findall gives the matches left to right, not overlapping: skip each where it starts.
        span = key.split(" ")
        while words[i : i + len(span)] != span:
            out.append(words[i])
            i += 1
        i += len(span)
    out.extend(words[i:])
    return " ".join(out) or None


def score_sentences(
    query: str,
    items: Sequence[Item],
    similarity: Mapping[str, float] | None = None,
    relation_similarity: Mapping[str, float] | None = None,
) -> list[list[Sentence]]:
    """Every sentence of every item, scored for ``query`` (see :class:`SentenceScorer`), by item."""
    scorer = SentenceScorer(query, items, similarity, relation_similarity)
    return [scorer.sentences(i) for i in range(len(items))]


class SentenceScorer:
    """Scores the sentences of ``items`` for ``query``; an item's sentences are scored when first asked for.

    A sentence's score is its item's rank weight ``1 / (1 + decay * rank)`` times the sum of:
    its share of the query's content terms (each weighted by how few items contain it), a
    bonus for naming an entity of the query (a retrieved document's title that the question
    names), for naming a bridge entity (another retrieved document's subject), for being the
    subject-defining first sentence (in markdown, the first after the opening headings), and a
    small one for a date/number where the question asks when/how many. A document whose
    subject a better-ranked document (or the query) names is a bridge document: its rank
    weight is raised to ``linked`` (1.0) times that document's.
    With ``similarity`` (a sentence's text -> its cosine similarity to the query, from an
    embedder), ``semantic`` times the similarity is added too: it finds the sentences that
    answer in other words than the question's (*born in* for *place of birth*); with
    ``relation_similarity`` (similarity to :func:`relation_query`), ``relation`` times it is
    added in the documents the question does not name. In a document the question names,
    sentences other than the first that name no bridge keep the ``restated`` share of their
    score, unless the question names two or more retrieved documents (a comparison, whose
    answer is their own facts). A document sharing a rare proper-noun phrase (found by
    :class:`~graphfuse.indexing.TextEntityExtractor`, not in the question) with the best-ranked
    document is a bridge document too, at the ``shared`` share of its weight: the hop that no
    title links (``shared_names=False`` leaves this out: it scales each document's sentences
    alike, so ranking one document's sentences does not need it). Names are matched as whole
    words, longest first (a title inside a longer title that the text names does not count on
    its own).
    """

    __slots__ = (
        "_alone",
        "_cache",
        "_every",
        "_every_title",
        "_in_query",
        "_items",
        "_keys",
        "_named_count",
        "_named_in",
        "_names",
        "_norm",
        "_owners",
        "_padded",
        "_q_terms",
        "_query_entities",
        "_rank",
        "_relation_similarity",
        "_shared",
        "_similarity",
        "_title_share",
        "_wants",
        "_weight",
    )

    def __init__(
        self,
        query: str,
        items: Sequence[Item],
        similarity: Mapping[str, float] | None = None,
        relation_similarity: Mapping[str, float] | None = None,
        *,
        shared_names: bool = True,
    ) -> None:
        self._items = items
        self._similarity = similarity
        self._relation_similarity = relation_similarity
        self._cache: dict[int, list[Sentence]] = {}
        self._q_terms = q_terms = content_terms(query)
        titles = [it.title or "" for it in items]
        title_words = [words_of(t) for t in titles]
        names = [_name_key(t, ws) if t else None for t, ws in zip(titles, title_words, strict=True)]
        every_title = NameMatcher(n for n in names if n)

        def in_text(words: Sequence[str]) -> set[str]:
            return every_title.found(words) if every_title else set()

        in_query_names = in_text(words_of(query))
        in_query = [n is not None and n in in_query_names for n in names]
        # An ASCII item's normalised text with every non-word character a space, between spaces: its
        # words are found with str.find, not split out (few are ever needed).
        self._padded = [f" {ascii_word_map(it.text.lower())} " if it.text.isascii() else None for it in items]
        # A term's document frequency counts the items holding a word that stems to it, in their text
        # or title (as if counted in terms_of(words) | content_terms(title)).
        title_terms = [terms_of(tw) & q_terms for tw in title_words]
        df = dict.fromkeys(q_terms, 0)
        for it, padded, in_title in zip(items, self._padded, title_terms, strict=True):
            held = set(in_title)
            if padded is None:
                held |= terms_of(words_of(it.text)) & q_terms
            else:
                held.update(t for t in q_terms if t not in held and holds_term(padded, t))
            for t in held:
                df[t] += 1
        n_items = max(1, len(items))
        self._weight = {t: math.log(1.0 + n_items / (1.0 + df[t])) for t in q_terms}
        # fsum: exact, so the result does not depend on the (hash-seeded) order of a set of terms.
        self._norm = math.fsum(self._weight.values()) or 1.0
        self._wants = _expects(query)
        # The share of the question's words in the title of a document it does not name: a passage
        # titled by what is asked ("Governor of Vatican City" for "the governor of the city where ...").
        self._title_share = [
            0.0 if in_query[i] else math.fsum(self._weight[t] for t in terms) / self._norm
            for i, terms in enumerate(title_terms)
        ]
        query_entities = NameMatcher(n for n, q in zip(names, in_query, strict=True) if n and q)
        self._query_entities = query_entities if query_entities else None
        # Rank weights are worked out when an item's sentences are first asked for (see _rank_of).
        self._names = names
        self._every_title = every_title
        self._rank: dict[int, float] = {}
        self._named_in: dict[int, set[str]] = {}  # item -> the titles its text names
        # (Whether a document shares a name with the first is worked out when its sentences are scored.)
        self._shared = _SharedNames(query, items) if shared_names else None
        self._in_query = in_query
        # A name the question gives only in parentheses disambiguates another ("Am I Wrong (Étienne de
        # Crécy song)"): it does not make the question a comparison of the documents it names.
        self._named_count = sum(in_query)
        if "(" in query and self._named_count > 1:
            outside = in_text(words_of(_QUERY_PARENS.sub(" ", query)))
            self._named_count = sum(n is not None and n in outside for n in names)
        # A bridge match counts for item i when the name belongs to another item.
        self._owners: dict[str, set[int]] = {}
        for j, own in enumerate(names):
            if own and not in_query[j]:
                self._owners.setdefault(own, set()).add(j)
        # The names item i alone owns: a bridge match counts for it when it is any other.
        self._alone: dict[int, set[str]] = {}
        for name, holders in self._owners.items():
            if len(holders) == 1:
                self._alone.setdefault(next(iter(holders)), set()).add(name)
        every = NameMatcher(self._owners)
        self._every = every if every else None
        self._keys: dict[str, str] = {}

    def key(self, text: str) -> str:
        """``_key(text)``, worked out once per text."""
        found = self._keys.get(text)
        if found is None:
            found = self._keys[text] = _key(text)
        return found

    def term_weight(self, term: str) -> float:
        """The normalised weight of one of the query's content terms (0 for any other term)."""
        return self._weight.get(term, 0.0) / self._norm

    def term_weights(self) -> dict[str, float]:
        """:meth:`term_weight` of each of the query's content terms (the terms a sentence holds)."""
        return {t: self.term_weight(t) for t in self._weight}

    def _rank_of(self, j: int) -> float:
        """Item ``j``'s rank weight ``1 / (1 + decay * j)``; a bridge document (one whose subject a
        better-ranked document names, the query not) keeps ``linked`` times the weight of the first
        document naming it, if more."""
        rank = self._rank
        # j, the first document naming it, the first naming that one, ...: weighed from the last.
        chain: list[tuple[int, int | None]] = []
        k: int | None = j
        while k is not None and k not in rank:
            by = self._first_naming(k)
            chain.append((k, by))
            k = by
        for k, by in reversed(chain):
            weight = 1.0 / (1.0 + EVIDENCE_WEIGHTS["decay"] * k)
            rank[k] = weight if by is None else max(weight, EVIDENCE_WEIGHTS["linked"] * rank[by])
        return rank[j]

    def _first_naming(self, j: int) -> int | None:
        """The first item before ``j`` whose text names item ``j``'s title (``None`` when none does, or
        when the query names it)."""
        own = self._names[j]
        if own is None or self._in_query[j]:
            return None
        first_word = f" {own.split(' ', 1)[0]} "
        for i in range(j):
            padded = self._padded[i]
            if padded is not None and first_word not in padded:
                continue  # (a name is found only where its first word is)
            named = self._named_in.get(i)
            if named is None:
                named = self._named_in[i] = self._every_title.found(words_of(self._items[i].text))
            if own in named:
                return i
        return None

    def sentences(self, i: int) -> list[Sentence]:
        """The scored sentences of item ``i``, in text order."""
        found = self._cache.get(i)
        if found is not None:
            return found
        w = EVIDENCE_WEIGHTS
        item = self._items[i]
        wants_time, wants_number, wants_place = self._wants
        weight, q_terms, norm = self._weight, self._q_terms, self._norm
        query_entities, every, similarity = self._query_entities, self._every, self._similarity
        alone: AbstractSet[str] = self._alone.get(i, frozenset())  # (any other name found makes a bridge)
        rank = self._rank_of(i)
        named = self._in_query[i]
        title_share = w["title"] * self._title_share[i]
        if self._shared is not None and not named and self._shared.shares(i):
            rank = max(rank, w["shared"] * self._rank_of(0))
        # (A question naming two retrieved documents compares them: their own facts are the answer.)
        restating = named and self._named_count < 2
        relation = None if named else self._relation_similarity
        out = []
        whole = item.text
        # ASCII text: normalising is lower-casing, character by character, so each sentence's words
        # are read from the item's lower-cased text, its non-word characters made spaces (once per item).
        mapped = ascii_word_map(whole.lower()) if whole.isascii() else None
        spans = sentence_spans(whole)
        turns = speaker_turns(whole, spans)
        kinds = span_kinds(whole, spans)
        subject_at = subject_index(kinds)
        for k, (start, end) in enumerate(spans):
            text = whole[start:end]
            words = words_of(text) if mapped is None else mapped[start:end].split()
            turn = -1 if turns is None else turns.turns[k]
            if not words or kinds[k] in (HEADING, MARKUP):
                # No word at all ("🕒", "..."), a heading or markup (an underline, a directive): nothing stated.
                out.append(Sentence(i, k, text, 0.0, 0.0, frozenset(), 0, turn))
                continue
            label = None if turns is None else turns.labels[k]
            if label is not None:
                # (Said by the turn's speaker: the label's words count, as the reader will see them.)
                words = words_of(label) + words
            shared = frozenset(terms_of(words) & q_terms)
            score = w["terms"] * math.fsum(map(weight.__getitem__, shared)) / norm
            if query_entities is not None and query_entities.search(words):
                score += w["query_entity"]
            bridge = every is not None and bool(every.found(words) - alone)
            if bridge:
                score += w["bridge"]
            if k == subject_at:
                score += w["subject"]
            score += title_share
            # (A year has a 1 or a 2: the plain tests skip the regex scan for most sentences.)
            if (
                (wants_time and ("1" in text or "2" in text) and _YEAR.search(text))
                or (wants_number and _NUMBER.search(text))
                or (wants_place and _PLACE.search(text))
            ):
                score += w["cue"]
            semantic = 0.0
            if similarity is not None:
                semantic = w["semantic"] * max(0.0, similarity.get(text, 0.0))
            if relation is not None:
                semantic += w["relation"] * max(0.0, relation.get(text, 0.0))
            total = score + semantic
            if restating and k != subject_at and not bridge:
                total *= w["restated"]
            shown = text if label is None else f"{label}: {text}"
            out.append(Sentence(i, k, shown, total * rank, semantic * rank, shared, len(shown) - len(text), turn))
        self._cache[i] = out
        return out


_EXTRACTOR = TextEntityExtractor()


class _SharedNames:
    """Which of the first ``_SHARED_AMONG`` items share with the first a proper-noun phrase the query
    does not contain and at most ``_SHARED_DF`` of them hold; an item's phrases are extracted when
    first needed (and not at all from an ASCII text that cannot hold the phrase asked about)."""

    __slots__ = ("_asked", "_lowered", "_names", "_texts")

    def __init__(self, query: str, items: Sequence[Item]) -> None:
        self._asked = f" {' '.join(words_of(query))} "
        self._texts = [it.text for it in items[:_SHARED_AMONG]] if len(items) >= 2 else []
        self._names: dict[int, set[str]] = {}
        self._lowered: dict[int, str | None] = {}

    def _names_of(self, i: int) -> set[str]:
        found = self._names.get(i)
        if found is None:
            keys = {" ".join(words_of(m.entity)) for m in _EXTRACTOR.extract(self._texts[i])}
            found = self._names[i] = {k for k in keys if len(k) >= 3 and f" {k} " not in self._asked}
        return found

    def _holds(self, i: int, name: str) -> bool:
        """Whether item ``i``'s phrases include ``name``. A phrase found in an ASCII text has lower-cased
        pieces of the text as its words: a text missing one of them does not hold it."""
        if i not in self._lowered:
            text = self._texts[i]
            self._lowered[i] = text.lower() if text.isascii() else None
        lowered = self._lowered[i]
        if lowered is not None and not all(word in lowered for word in name.split(" ")):
            return False
        return name in self._names_of(i)

    def shares(self, j: int) -> bool:
        """Whether item ``j`` (not the first) holds a phrase of the first that at most ``_SHARED_DF``
        of the items hold (the other items are read until that count is passed)."""
        if not 0 < j < len(self._texts):
            return False
        others = [i for i in range(1, len(self._texts)) if i != j]
        for name in sorted(self._names_of(0)):
            if not self._holds(j, name):
                continue
            holders = 2
            for i in others:
                holders += self._holds(i, name)
                if holders > _SHARED_DF:
                    break
            else:
                return True
        return False


def _name_key(name: str, words: Sequence[str] | None = None) -> str | None:
    """The match key of a name, its trailing parenthesis left out (``None`` when under 3 characters);
    ``words`` are the name's :func:`words_of`, when already known."""
    key = " ".join(words) if words is not None and "(" not in name else _key(_PAREN.sub("", name))
    return key if len(key) >= 3 else None


def _pattern(keys: Iterable[str]) -> re.Pattern[str] | None:
    ordered = sorted(set(keys), key=lambda k: (-len(k), k))
    if not ordered:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in ordered) + r")\b")
