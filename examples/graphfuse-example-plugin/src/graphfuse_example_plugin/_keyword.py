"""The keyword_boost stage."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from graphfuse import Candidate, InvalidInput, Query, RunContext

__all__ = ["KeywordBoost"]

_WORD = re.compile(r"\w+")
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "to",
        "was",
        "what",
        "when",
        "where",
        "which",
        "who",
    ]
)


class KeywordBoost:
    """Sets ``keyword`` = the fraction of the query's terms found in each candidate's content.

    Terms are lower-cased words, stopwords excluded. Candidates must be hydrated (put the
    ``hydrate`` stage first); order and other signals are left alone, the scorer decides.
    """

    def __init__(
        self, *, signal: str = "keyword", name: str = "keyword_boost", stopwords: Iterable[str] = _STOPWORDS
    ) -> None:
        for value, what in ((signal, "signal"), (name, "name")):
            if not isinstance(value, str) or not value.isidentifier():
                raise InvalidInput(f"{what} must be an identifier, got {value!r}")
        self._signal = signal
        self._name = name
        self._stopwords = frozenset(w.lower() for w in stopwords)

    @property
    def name(self) -> str:
        return self._name

    def terms(self, text: str) -> set[str]:
        """The terms of ``text`` this stage counts."""
        return {w for w in _WORD.findall(text.lower()) if w not in self._stopwords}

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        wanted = self.terms(query.text)
        out = []
        for c in candidates:
            if c.document.content is None:
                raise InvalidInput(f"stage {self._name!r} needs hydrated candidates: put 'hydrate' before it")
            found = len(wanted & self.terms(c.document.content)) / len(wanted) if wanted else 0.0
            out.append(c.with_signal(self._signal, found))
        return out
