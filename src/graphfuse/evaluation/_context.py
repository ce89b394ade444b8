"""What a context costs and holds, without an LLM: tokens, and whether the gold answer is in it."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import Embedder, GraphStore
from .._core._sync import sync_form
from .._core._types import Document, Result
from ..context import GraphCaps, TokenCounter, abuild_context
from ..indexing import SourceRecord

__all__ = [
    "CONTEXT_FORMATS",
    "ContextMetrics",
    "ContextReport",
    "aevaluate_contexts",
    "answer_in_text",
    "evaluate_contexts",
    "normalize_answer",
    "parse_context_budgets",
]

CONTEXT_FORMATS = ("passages", "evidence", "graph")
PASSAGES_TOP = 5
"""``<pipeline>/passages`` is the pipeline's top-5 results whole, whatever the budget (basic RAG)."""
CONTEXT_TOP = 10
"""``evidence`` and ``graph`` contexts are assembled from a pipeline's top-10 results, as
:func:`~graphfuse.context.retrieve_context` does by default."""
_BASIC_RAG = ("vector", "minimal")
"""A percentage budget is a share of the first of these pipelines' ``/passages`` tokens (basic RAG)."""

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans(dict.fromkeys(string.punctuation, " "))
_YES_NO = frozenset({"yes", "no"})


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, no punctuation, no articles, single spaces."""
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split())


def answer_in_text(answer: str, text: str) -> bool:
    """True when the normalised ``answer`` occurs in the normalised ``text`` on word boundaries."""
    a = normalize_answer(answer)
    return bool(a) and f" {a} " in f" {normalize_answer(text)} "


def parse_context_budgets(spec: str) -> list[int | float]:
    """``"250"`` -> ``[250]``; ``"20%,35%"`` -> ``[0.2, 0.35]`` (shares of ``vector/passages`` tokens).

    Raises :class:`~graphfuse.InvalidInput` for anything else (zero, negative, not a number).
    """
    out: list[int | float] = []
    for part in (p.strip() for p in spec.split(",")):
        try:
            if part.endswith("%"):
                share = float(part[:-1]) / 100.0
                if not 0.0 < share <= 10.0:
                    raise ValueError
                out.append(share)
            else:
                n = int(part)
                if n <= 0:
                    raise ValueError
                out.append(n)
        except ValueError:
            raise InvalidInput(
                f"context budget {part!r} is not a positive number of tokens or a percentage (e.g. 250 or 35%)"
            ) from None
    if not out:
        raise InvalidInput("no context budget given")
    return out


@dataclass
class ContextMetrics:
    """One pipeline/format: the share of questions whose answer is in the context, its mean tokens."""

    answer_in_context: float
    context_tokens: float
    n: int
    budget: int | None = None

    def as_json(self) -> dict[str, Any]:
        """``{"answer_in_context", "context_tokens", "n", "budget"}``."""
        return {
            "answer_in_context": self.answer_in_context,
            "context_tokens": self.context_tokens,
            "n": self.n,
            "budget": self.budget,
        }


@dataclass
class ContextReport:
    """Context metrics at the first budget (``entries``) and at every budget (``curve``)."""

    counter: str
    budget: int
    budgets: list[int]
    entries: dict[str, ContextMetrics]
    curve: dict[str, list[ContextMetrics]] = field(default_factory=dict)
    skipped_yes_no: int = 0
    skipped_no_answer: int = 0

    def as_json(self) -> dict[str, Any]:
        """The ``context*`` keys of ``graphfuse eval --json``."""
        return {
            "context": {key: m.as_json() for key, m in self.entries.items()},
            "context_budget": self.budget,
            "context_budgets": list(self.budgets),
            "context_counter": self.counter,
            "context_skipped": {"yes_no": self.skipped_yes_no, "no_answer": self.skipped_no_answer},
            "context_curve": {key: [m.as_json() for m in ms] for key, ms in self.curve.items()},
        }


class _Memo:
    """An embedder that embeds each distinct text once (contexts at several budgets share sentences)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._documents: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._documents))
        if missing:
            self._documents.update(zip(missing, await self._inner.embed_documents(missing), strict=True))
        return [self._documents[t] for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        if text not in self._queries:
            self._queries[text] = await self._inner.embed_query(text)
        return self._queries[text]


def _results(ranked: Sequence[str | Result], records: Mapping[str, SourceRecord]) -> list[Result]:
    """Results as given; a document id stands for its whole record (unknown ids are left out)."""
    out: list[Result] = []
    for rank, item in enumerate(ranked):
        if isinstance(item, Result):
            out.append(item)
            continue
        r = records.get(item)
        if r is None:
            continue
        meta = dict(r.metadata)
        if r.title:
            meta["title"] = r.title
        out.append(Result(Document(item, r.text, meta), 1.0 / (1 + rank), {}))
    return out


async def aevaluate_contexts(
    ranked: Mapping[str, Mapping[str, Sequence[str | Result]]],
    questions: Mapping[str, tuple[str, str | None]],
    records: Mapping[str, SourceRecord],
    budgets: Sequence[int | float],
    *,
    counter: TokenCounter,
    graph_store: GraphStore,
    formats: Sequence[str] = CONTEXT_FORMATS,
    embedder: Embedder | None = None,
    graph_caps: GraphCaps | None = None,
) -> ContextReport:
    """Context metrics for every pipeline and format.

    ``ranked[pipeline][query id]`` are the results a pipeline returned, best first: the
    :class:`~graphfuse.Result` objects themselves (passages, as users get them), or document
    ids, each standing for its whole record in ``records``. ``questions[query id]`` is
    ``(question, gold answer or None)``. Questions without an answer and yes/no questions are
    left out (and counted). ``<pipeline>/passages`` is the top :data:`PASSAGES_TOP` results
    whole (``vector/passages``: basic RAG's top-5 passages); ``evidence`` and ``graph`` are
    assembled from the top :data:`CONTEXT_TOP` results at each budget (an int, or a float share
    of basic RAG's mean tokens, which needs the ``vector`` or ``minimal`` pipeline).
    With ``embedder``, sentences are also scored by similarity to the question, as
    :func:`~graphfuse.context.retrieve_context` does with the pipeline's embedder (each distinct
    sentence is embedded once for the whole evaluation). ``graph_caps`` caps the ``graph``
    format (default :class:`~graphfuse.context.GraphCaps`).
    """
    sentences = _Memo(embedder) if embedder is not None else None
    usable = {qid: (q, a) for qid, (q, a) in questions.items() if a and normalize_answer(a) not in _YES_NO}
    yes_no = sum(1 for _, a in questions.values() if a and normalize_answer(a) in _YES_NO)
    no_answer = sum(1 for _, a in questions.values() if not a)
    entries: dict[str, ContextMetrics] = {}
    curve: dict[str, list[ContextMetrics]] = {}
    if not usable:
        raise InvalidInput("no question with a non-yes/no 'answer' to measure contexts on")
    huge = 10**9
    for name, per_query in ranked.items():
        hits, tokens = 0, 0
        for qid, (question, answer) in usable.items():
            top = _results(list(per_query.get(qid, ()))[:PASSAGES_TOP], records)
            ctx = await abuild_context(question, top, budget=huge, counter=counter)
            hits += answer_in_text(answer or "", ctx.text)
            tokens += ctx.tokens
        entries[f"{name}/passages"] = ContextMetrics(hits / len(usable), tokens / len(usable), len(usable))
    resolved: list[int] = []
    for b in budgets:
        if isinstance(b, float):
            base = next((entries[f"{n}/passages"] for n in _BASIC_RAG if f"{n}/passages" in entries), None)
            if base is None:
                raise InvalidInput(
                    "a percentage context budget is a share of basic RAG's tokens (vector/passages or "
                    "minimal/passages): add the vector or minimal pipeline"
                )
            resolved.append(max(1, round(b * base.context_tokens)))
        else:
            resolved.append(b)
    for name, per_query in ranked.items():
        for fmt in formats:
            if fmt == "passages":
                continue
            key = f"{name}/{fmt}"
            for budget in resolved:
                hits, tokens = 0, 0
                for qid, (question, answer) in usable.items():
                    results = _results(list(per_query.get(qid, ()))[:CONTEXT_TOP], records)
                    ctx = await abuild_context(
                        question,
                        results,
                        budget=budget,
                        format=fmt,
                        counter=counter,
                        graph_store=graph_store,
                        embedder=sentences,
                        caps=graph_caps,
                    )
                    hits += answer_in_text(answer or "", ctx.text)
                    tokens += ctx.tokens
                curve.setdefault(key, []).append(
                    ContextMetrics(hits / len(usable), tokens / len(usable), len(usable), budget)
                )
            entries[key] = curve[key][0]
    return ContextReport(counter.name, resolved[0], resolved, entries, curve, yes_no, no_answer)


evaluate_contexts = sync_form(aevaluate_contexts)
"""Sync form of :func:`aevaluate_contexts`: same arguments, result and errors, no event loop needed."""
