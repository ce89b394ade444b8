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


# A gold answer written as code: snake_case, a dotted name (two letters or more on one side of the
# dot, so "U.S." and "a.m." are not), a call or subscript, a command-line option, an assignment,
# a decorator or a backtick. Prose answers (names, dates, titles, "Hesse-Kassel") match none.
_CODE_LIKE = re.compile(
    r"[A-Za-z0-9]_[A-Za-z]|[A-Za-z]_[A-Za-z0-9]|(?<!\w)__?[A-Za-z]"
    r"|[A-Za-z_]\w+\.[A-Za-z_]\w*|[A-Za-z_]\w*\.[A-Za-z_]\w+"
    r"|\w[(\[]|(?<![\w-])--?[A-Za-z]|\w=|=[\w\"'\[]|(?<![\w.])@[A-Za-z_]|`"
)
# Code's tokens: identifiers (underscores and inner hyphens inside: ``--workers-count`` is not
# ``--workers``) and single punctuation marks; quotes and backticks are left out
# (`scope="function"` is scope='function' is ``scope=function``).
_CODE_TOKEN = re.compile(r"\w+(?:-\w+)*|[^\w\s\"'`\u2018\u2019\u201c\u201d]")


def _code_tokens(text: str) -> str:
    return " ".join(_CODE_TOKEN.findall(text.lower()))


def contains_answer(context: str, gold: str | Sequence[str]) -> bool:
    """Whether a normalised gold answer occurs, on word boundaries, in the normalised context.

    A gold answer written as code (``app.dependency_overrides``, ``dependency_overrides``,
    ``--workers``, ``scope="function"``, ``model_post_init()``) also counts when its tokens
    (identifiers and punctuation marks, quotes aside) occur in that order in the context's:
    ``dependency_overrides`` is in ``app.dependency_overrides[get_db]``, which SQuAD's
    normalisation reads as one word. Other answers are matched as SQuAD normalises them. Answers that
    normalise to nothing (``"the"``) count as not contained.
    """
    golds = _golds(gold)
    haystack = f" {normalize_answer(context)} "
    if any((needle := normalize_answer(g)) and f" {needle} " in haystack for g in golds):
        return True
    code = [g for g in golds if _CODE_LIKE.search(g)]
    if not code:
        return False
    tokens = f" {_code_tokens(context)} "
    return any((needle := _code_tokens(g)) and f" {needle} " in tokens for g in code)
