"""Which sentences are worth embedding: the few that can still win a place in the context.

Scoring a sentence by words, titles and positions costs microseconds; embedding it costs a model
call. So the sentences are scored by words first, and only those that a good similarity could
carry into the context are embedded: in the ``passages`` format only the passages that do not fit
whole (the others are shown as they are), in ``graph`` only the best documents' sentences that the
question's words or entities point at (the only ones similarity orders), and in every format at
most :func:`pool_size` tokens of sentences, the best by their score with a high similarity assumed
(:data:`~graphfuse.defaults.ASSUMED_SIMILARITY`). The rest keep their word score, as without an embedder. So what a
context costs follows its budget, not the length of the retrieved documents.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from .._core._sentences import is_heading
from ..defaults import ASSUMED_SIMILARITY, MAX_POOL, MIN_POOL, POOL_PER_BUDGET
from ._evidence import Sentence, SentenceScorer, relation_query
from ._graph import GraphCaps
from ._items import Item
from ._packing import Budgeter, pack_passages

__all__ = ["pool_size", "worth_embedding"]

_SEEN_TOKENS = 256  # an embedder reads at most this many tokens of a text (MiniLM's limit)
# A passage cut to fit: its sentences that can be kept are at most the budget's tokens.
_CUT_POOL_PER_BUDGET = 2
_MIN_CUT_POOL = 256
# In the graph format, similarity orders the supporting sentences of each of the best documents.
_GRAPH_PER_DOCUMENT = 32


def pool_size(budget: int) -> int:
    """How many tokens of sentences at most are embedded for a context of ``budget`` tokens (an
    embedder's cost follows the tokens it reads)."""
    return max(MIN_POOL, min(MAX_POOL, budget * POOL_PER_BUDGET))


class _Assumed(Mapping[str, float]):
    """Every text's similarity taken as one value (scores under it rank sentences for embedding)."""

    __slots__ = ("_value",)

    def __init__(self, value: float) -> None:
        self._value = value

    def __getitem__(self, key: str) -> float:
        return self._value

    def get(self, key: str, default: object = None) -> float:  # type: ignore[override]
        return self._value

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _best(sentences: Sequence[Sentence], b: Budgeter, limit: int, *, positive: bool = True) -> list[str]:
    """The distinct texts of the best ``sentences`` (by score; ties by position), up to ``limit``
    tokens (each counted up to what an embedder reads); with ``positive``, only those scoring above 0."""
    if positive:
        kept = [s for s in sentences if s.score > 0]
    else:
        kept = [s for s in sentences if s.text.strip() and not is_heading(s.text)]
    ranked = sorted(kept, key=lambda s: (-s.score, s.item, s.index))
    out: dict[str, None] = {}
    used = 0
    for s in ranked:
        text = s.text[s.lead :]  # (the text without a speaker's label)
        if text in out:
            continue
        cost = 1 + _SEEN_TOKENS if b.over(text, _SEEN_TOKENS) else b.count(text)
        if used + cost > limit and out:
            break
        out[text] = None
        used += cost
    return list(out)


def worth_embedding(query: str, items: Sequence[Item], fmt: str, b: Budgeter, caps: GraphCaps | None) -> list[str]:
    """The sentence texts of ``items`` worth embedding for a ``fmt`` context within ``b``'s budget
    (a sentence's text as :class:`~graphfuse.context._evidence.SentenceScorer` looks it up)."""
    if not items:
        return []
    assumed = _Assumed(ASSUMED_SIMILARITY)
    relation = assumed if relation_query(query, items) is not None else None
    limit = pool_size(b.budget)
    if fmt == "passages":
        # Shown whole, a passage needs no sentence scores: only those a words-only packing shortens
        # are looked at (one left out by it has no sentence that fits the room left, or none that the
        # question's words point at; the rest of the context does not depend on similarity). A cut
        # passage gets the room left, at most the budget: its pool follows the budget alone.
        words = SentenceScorer(query, items, shared_names=False)
        _, sources, _ = pack_passages(query, items, b, scorer=words)
        shortened = {s.id for s in sources if s.shortened}
        if not shortened:
            return []
        # (One passage's sentences are ranked among themselves: by their word score, the best first.)
        pool = [s for i, it in enumerate(items) if it.id in shortened for s in words.sentences(i)]
        return _best(pool, b, max(_MIN_CUT_POOL, b.budget * _CUT_POOL_PER_BUDGET), positive=False)
    if fmt == "graph":
        caps = caps or GraphCaps()
        retrieved = items[: caps.max_entities]
        words = SentenceScorer(query, retrieved)
        scorer = SentenceScorer(query, retrieved, assumed, relation)
        out: dict[str, None] = {}
        for i in range(min(caps.max_documents, len(retrieved))):
            # (Supporting text keeps only sentences the question's words or entities point at.)
            pointed = [s for s, w in zip(scorer.sentences(i), words.sentences(i), strict=True) if w.score > 0]
            out.update(dict.fromkeys(_best(pointed, b, limit)[:_GRAPH_PER_DOCUMENT]))
        return list(out)
    scorer = SentenceScorer(query, items, assumed, relation)
    return _best([s for i in range(len(items)) for s in scorer.sentences(i)], b, limit)
