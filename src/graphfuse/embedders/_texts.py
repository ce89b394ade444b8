"""The one check every embedder and reranker applies to its input texts."""

from __future__ import annotations

from collections.abc import Sequence

from .._core._errors import InvalidInput

__all__ = ["check_texts"]


def check_texts(texts: Sequence[str], what: str = "texts") -> list[str]:
    """``texts`` as a list, or ``InvalidInput`` for a bare string or a non-string item."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InvalidInput(f"{what} must be a sequence of strings, not {type(texts).__name__}")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise InvalidInput(f"{what} must be strings, got {type(t).__name__}")
    return out
