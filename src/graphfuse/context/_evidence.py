"""Evidence selection: which sentences of the retrieved passages carry the query's facts.

A sentence is worth keeping when it names the query's entities, or a bridge entity (another
retrieved document's subject, which graph stages reach through mentions), or shares the
query's content words; a passage's first sentence defines its subject and is kept with it.
No model: words, titles and positions only, so it works on any corpus and language.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..indexing._extractors import normalize
from ._items import Item
from ._text import content_terms, sentence_spans

__all__ = ["Sentence", "SentenceScorer", "entity_pattern", "score_sentences"]

_WORD = re.compile(r"\w+", re.UNICODE)
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_NUMBER = re.compile(r"\d")
_TIME_WORDS = frozenset({"when", "year", "date", "born", "die", "died", "founded", "old", "age", "older", "younger"})
_QUANTITY_WORDS = frozenset({"many", "much", "number", "long", "far", "tall", "high", "population"})
_PAREN = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A candidate evidence sentence: its item, position, text and score."""

    item: int
    index: int
    text: str
    score: float
    semantic: float = 0.0  # the part of ``score`` that comes from similarity to the query
    terms: frozenset[str] = frozenset()  # the query's content terms the sentence holds


def _key(text: str) -> str:
    return " ".join(_WORD.findall(normalize(text)))


def entity_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``names`` as whole words in a normalised text (``_key`` form)."""
    return _pattern(k for n in names if (k := _name_key(n)))


def _expects(query: str) -> tuple[bool, bool]:
    words = {normalize(w) for w in _WORD.findall(query)}
    return bool(words & _TIME_WORDS), bool(words & _QUANTITY_WORDS)


# Chosen on the dev questions of three multi-hop sets (docs/context.md has the table).
_WEIGHTS = {
    "decay": 2.0,  # rank weight 1 / (1 + decay * rank)
    "query_entity": 0.4,
    "bridge": 0.4,
    "subject": 0.6,
    "linked": 0.8,  # a bridge document keeps this share of the weight of the document naming it
    "cue": 0.2,
    "semantic": 1.0,  # times the sentence's cosine similarity to the query, when an embedder is given
}


def score_sentences(
    query: str, items: Sequence[Item], similarity: Mapping[str, float] | None = None
) -> list[list[Sentence]]:
    """Every sentence of every item, scored for ``query`` (see :class:`SentenceScorer`), by item."""
    scorer = SentenceScorer(query, items, similarity)
    return [scorer.sentences(i) for i in range(len(items))]


class SentenceScorer:
    """Scores the sentences of ``items`` for ``query``; an item's sentences are scored when first asked for.

    A sentence's score is its item's rank weight ``1 / (1 + decay * rank)`` times the sum of:
    its share of the query's content terms (each weighted by how few items contain it), a
    bonus for naming an entity of the query (a retrieved document's title that the question
    names), for naming a bridge entity (another retrieved document's subject), for being the
    subject-defining first sentence, and a small one for a date/number where the question asks
    when/how many. A document whose subject a better-ranked document (or the query) names is
    a bridge document: its rank weight is raised towards that document's, by ``linked``.
    With ``similarity`` (a sentence's text -> its cosine similarity to the query, from an
    embedder), ``semantic`` times the similarity is added too: it finds the sentences that
    answer in other words than the question's (*born in* for *place of birth*).
    Names are matched as whole words, longest first (a title inside a longer title that the
    text names does not count on its own).
    """

    __slots__ = (
        "_cache",
        "_every",
        "_items",
        "_norm",
        "_owners",
        "_q_terms",
        "_query_entities",
        "_rank",
        "_similarity",
        "_wants",
        "_weight",
    )

    def __init__(self, query: str, items: Sequence[Item], similarity: Mapping[str, float] | None = None) -> None:
        w = _WEIGHTS
        self._items = items
        self._similarity = similarity
        self._cache: dict[int, list[Sentence]] = {}
        self._q_terms = q_terms = content_terms(query)
        titles = [it.title or "" for it in items]
        names = [_name_key(t) if t else None for t in titles]
        every_title = _pattern(n for n in names if n)

        def in_text(key: str) -> set[str]:
            return set(every_title.findall(key)) if every_title is not None else set()

        in_query_names = in_text(_key(query))
        in_query = [n is not None and n in in_query_names for n in names]
        item_terms = [content_terms(it.text) | content_terms(it.title or "") for it in items]
        df = {t: sum(1 for terms in item_terms if t in terms) for t in q_terms}
        n_items = max(1, len(items))
        self._weight = {t: math.log(1.0 + n_items / (1.0 + df[t])) for t in q_terms}
        self._norm = sum(self._weight.values()) or 1.0
        self._wants = _expects(query)
        self._query_entities = _pattern(n for n, q in zip(names, in_query, strict=True) if n and q)
        rank = [1.0 / (1.0 + w["decay"] * i) for i in range(len(items))]
        # Bridge documents: named by a better-ranked document; they inherit part of its weight.
        first_naming: dict[str, int] = {}
        for i, it in enumerate(items):
            for named in in_text(_key(it.text)):
                first_naming.setdefault(named, i)
        for j, own in enumerate(names):
            if own is None or in_query[j]:
                continue
            i = first_naming.get(own, j)
            if i < j:
                rank[j] = max(rank[j], w["linked"] * rank[i])
        self._rank = rank
        # A bridge match counts for item i when the name belongs to another item.
        self._owners: dict[str, set[int]] = {}
        for j, own in enumerate(names):
            if own and not in_query[j]:
                self._owners.setdefault(own, set()).add(j)
        self._every = _pattern(self._owners)

    def term_weight(self, term: str) -> float:
        """The normalised weight of one of the query's content terms (0 for any other term)."""
        return self._weight.get(term, 0.0) / self._norm

    def sentences(self, i: int) -> list[Sentence]:
        """The scored sentences of item ``i``, in text order."""
        found = self._cache.get(i)
        if found is not None:
            return found
        w = _WEIGHTS
        item = self._items[i]
        wants_time, wants_number = self._wants
        weight, q_terms, norm = self._weight, self._q_terms, self._norm
        out = []
        for k, (start, end) in enumerate(sentence_spans(item.text)):
            text = item.text[start:end]
            key = _key(text)
            shared = frozenset(content_terms(text) & q_terms)
            score = sum(weight[t] for t in shared) / norm
            if self._query_entities is not None and self._query_entities.search(key):
                score += w["query_entity"]
            if self._every is not None and any(self._owners[m] - {i} for m in self._every.findall(key)):
                score += w["bridge"]
            if k == 0:
                score += w["subject"]
            if (wants_time and _YEAR.search(text)) or (wants_number and _NUMBER.search(text)):
                score += w["cue"]
            semantic = 0.0
            if self._similarity is not None:
                semantic = w["semantic"] * max(0.0, self._similarity.get(text, 0.0))
            rank = self._rank[i]
            out.append(Sentence(i, k, text, (score + semantic) * rank, semantic * rank, shared))
        self._cache[i] = out
        return out


def _name_key(name: str) -> str | None:
    key = _key(_PAREN.sub("", name))
    return key if len(key) >= 3 else None


def _pattern(keys: Iterable[str]) -> re.Pattern[str] | None:
    ordered = sorted(set(keys), key=lambda k: (-len(k), k))
    if not ordered:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in ordered) + r")\b")
