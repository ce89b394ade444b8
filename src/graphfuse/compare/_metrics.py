"""Deterministic answer metrics: exact match and token F1 (SQuAD's normalisation), containment."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["contains_answer", "exact_match", "normalize_answer", "token_f1"]

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1's normalisation: lower case, drop punctuation and articles, squeeze spaces."""
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _golds(gold: str | Sequence[str]) -> list[str]:
    return [gold] if isinstance(gold, str) else list(gold)


def exact_match(prediction: str, gold: str | Sequence[str]) -> float:
    """1.0 when the normalised prediction equals a normalised gold answer (any of several), else 0.0."""
    predicted = normalize_answer(prediction)
    return float(any(predicted == normalize_answer(g) for g in _golds(gold)))


def _f1(prediction: str, gold: str) -> float:
    predicted, truth = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not truth:
        return float(predicted == truth)
    common = sum((Counter(predicted) & Counter(truth)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(truth)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, gold: str | Sequence[str]) -> float:
    """SQuAD's token-level F1 between the normalised prediction and gold (the best over several)."""
    return max((_f1(prediction, g) for g in _golds(gold)), default=0.0)


def contains_answer(context: str, gold: str | Sequence[str]) -> bool:
    """Whether a normalised gold answer occurs, on word boundaries, in the normalised context.

    Answers that normalise to nothing (``"the"``) count as not contained.
    """
    haystack = f" {normalize_answer(context)} "
    return any((needle := normalize_answer(g)) and f" {needle} " in haystack for g in _golds(gold))
