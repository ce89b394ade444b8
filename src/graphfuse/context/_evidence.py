"""Evidence selection: which sentences of the retrieved passages carry the query's facts.

A sentence is worth keeping when it names the query's entities, or a bridge entity (another
retrieved document's subject, which graph stages reach through mentions), or shares the
query's content words; a passage's first sentence defines its subject and is kept with it.
No model: words, titles and positions only, so it works on any corpus and language.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..indexing._extractors import normalize
from ._items import Item
from ._text import content_terms, sentence_spans

__all__ = ["Sentence", "entity_pattern", "score_sentences"]

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


def _key(text: str) -> str:
    return " ".join(normalize(w) for w in _WORD.findall(text))


def entity_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``names`` as whole words in a normalised text (``_key`` form)."""
    keys = sorted({k for n in names if len(k := _key(_PAREN.sub("", n))) >= 3}, key=len, reverse=True)
    if not keys:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in keys) + r")\b")


def _expects(query: str) -> tuple[bool, bool]:
    words = {normalize(w) for w in _WORD.findall(query)}
    return bool(words & _TIME_WORDS), bool(words & _QUANTITY_WORDS)


def score_sentences(query: str, items: Sequence[Item]) -> list[list[Sentence]]:
    """Every sentence of every item, scored for ``query`` (higher is more useful), by item.

    Score = rank weight of the item x (query-term overlap, each term weighted by how few
    items contain it + 1.0 for naming an entity of the query + 0.6 for naming a bridge
    entity (another retrieved item's subject) + 0.5 for the subject-defining first sentence
    + 0.3 for a date/number where the question asks when/how many).
    """
    q_terms = content_terms(query)
    q_key = _key(query)
    titles = [it.title or "" for it in items]
    # Query entities: retrieved subjects the question names. Bridge entities: the other subjects.
    in_query = [bool(t) and (p := entity_pattern([t])) is not None and p.search(q_key) is not None for t in titles]
    item_terms = [content_terms(it.text) | content_terms(it.title or "") for it in items]
    df = {t: sum(1 for terms in item_terms if t in terms) for t in q_terms}
    n_items = max(1, len(items))
    weight = {t: math.log(1.0 + n_items / (1.0 + df[t])) for t in q_terms}
    norm = sum(weight.values()) or 1.0
    wants_time, wants_number = _expects(query)
    query_entities = entity_pattern([t for t, q in zip(titles, in_query, strict=True) if q])
    out: list[list[Sentence]] = []
    for i, item in enumerate(items):
        bridges = entity_pattern([t for j, t in enumerate(titles) if j != i and t and not in_query[j]])
        rank_weight = 1.0 / (1.0 + 0.15 * i)
        sentences = []
        for k, (start, end) in enumerate(sentence_spans(item.text)):
            text = item.text[start:end]
            key = _key(text)
            terms = content_terms(text)
            score = sum(weight[t] for t in terms & q_terms) / norm
            if query_entities is not None and query_entities.search(key):
                score += 1.0
            if bridges is not None and bridges.search(key):
                score += 0.6
            if k == 0:
                score += 0.5 + (0.5 if in_query[i] else 0.0)
            if (wants_time and _YEAR.search(text)) or (wants_number and _NUMBER.search(text)):
                score += 0.3
            sentences.append(Sentence(i, k, text, score * rank_weight))
        out.append(sentences)
    return out
