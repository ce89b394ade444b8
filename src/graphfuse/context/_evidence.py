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
    return " ".join(_WORD.findall(normalize(text)))


def entity_pattern(names: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching any of ``names`` as whole words in a normalised text (``_key`` form)."""
    keys = sorted({k for n in names if len(k := _key(_PAREN.sub("", n))) >= 3}, key=len, reverse=True)
    if not keys:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(k) for k in keys) + r")\b")


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
}


def score_sentences(query: str, items: Sequence[Item]) -> list[list[Sentence]]:
    """Every sentence of every item, scored for ``query`` (higher is more useful), by item.

    A sentence's score is its item's rank weight ``1 / (1 + decay * rank)`` times the sum of:
    its share of the query's content terms (each weighted by how few items contain it), a
    bonus for naming an entity of the query (a retrieved document's title that the question
    names), for naming a bridge entity (another retrieved document's subject), for being the
    subject-defining first sentence, and a small one for a date/number where the question asks
    when/how many. A document whose subject a better-ranked document (or the query) names is
    a bridge document: its rank weight is raised towards that document's, by ``linked``.
    """
    w = _WEIGHTS
    q_terms = content_terms(query)
    q_key = _key(query)
    titles = [it.title or "" for it in items]
    patterns = [entity_pattern([t]) if t else None for t in titles]
    in_query = [p is not None and p.search(q_key) is not None for p in patterns]
    keys = [_key(it.text) for it in items]
    item_terms = [content_terms(it.text) | content_terms(it.title or "") for it in items]
    df = {t: sum(1 for terms in item_terms if t in terms) for t in q_terms}
    n_items = max(1, len(items))
    weight = {t: math.log(1.0 + n_items / (1.0 + df[t])) for t in q_terms}
    norm = sum(weight.values()) or 1.0
    wants_time, wants_number = _expects(query)
    query_entities = entity_pattern([t for t, q in zip(titles, in_query, strict=True) if q])
    rank_weight = [1.0 / (1.0 + w["decay"] * i) for i in range(len(items))]
    # Bridge documents: named by a better-ranked document; they inherit part of its weight.
    for j, p in enumerate(patterns):
        if p is None or in_query[j]:
            continue
        for i in range(j):
            if p.search(keys[i]):
                rank_weight[j] = max(rank_weight[j], w["linked"] * rank_weight[i])
                break
    # One pattern for every bridge title; a match counts for item i when it names another item.
    owners: dict[str, set[int]] = {}
    for j, t in enumerate(titles):
        if t and not in_query[j]:
            for name in {_key(t), _key(_PAREN.sub("", t))}:
                owners.setdefault(name, set()).add(j)
    every = entity_pattern([t for j, t in enumerate(titles) if t and not in_query[j]])
    out: list[list[Sentence]] = []
    for i, item in enumerate(items):
        sentences = []
        for k, (start, end) in enumerate(sentence_spans(item.text)):
            text = item.text[start:end]
            key = _key(text)
            terms = content_terms(text)
            score = sum(weight[t] for t in terms & q_terms) / norm
            if query_entities is not None and query_entities.search(key):
                score += w["query_entity"]
            if every is not None and any(owners.get(m, {i}) - {i} for m in every.findall(key)):
                score += w["bridge"]
            if k == 0:
                score += w["subject"]
            if (wants_time and _YEAR.search(text)) or (wants_number and _NUMBER.search(text)):
                score += w["cue"]
            sentences.append(Sentence(i, k, text, score * rank_weight[i]))
        out.append(sentences)
    return out
