"""Packing under a token budget: whole passages or selected evidence, never over the budget."""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from itertools import pairwise

from .._core._sentences import cut_to, sentence_spans
from ..defaults import COVERAGE, DENSITY, DENSITY_OFFSET
from ._counters import TiktokenCounter, TokenCounter, checked_count
from ._cuts import seam
from ._evidence import Sentence, SentenceScorer, continues_turn, joined_texts
from ._items import Item
from ._types import ContextSource, DroppedSource

__all__ = ["EMPTY_TEXT", "Packed", "fit_parts", "pack_evidence", "pack_passages"]

EMPTY_TEXT = "No retrieved context for this query."
_SEP = "\n\n"

Packed = tuple[str, list[ContextSource], list[DroppedSource]]


class Budgeter:
    """Counts with one counter and answers "does this fit?" against one budget."""

    __slots__ = ("_at_least", "_counts", "_seams", "additive", "budget", "counter", "sep_cost")

    def __init__(self, counter: TokenCounter, budget: int) -> None:
        self.counter = counter
        self.budget = budget
        self._counts: dict[str, int] = {}
        self._seams: dict[tuple[str, str, str], int] = {}
        self.sep_cost = checked_count(counter, _SEP)
        # A cheap lower bound of the count, when the counter has a proven one (cl100k_base does; not
        # a subclass, whose count may differ).
        self._at_least = counter.at_least if type(counter) is TiktokenCounter else None
        # Whether count_joined works from the counts of the parts (see _cuts: cl100k_base only); without,
        # counting the parts first is extra work.
        self.additive = type(counter) is TiktokenCounter and counter.name == "cl100k_base"

    def over(self, text: str, room: int) -> bool:
        """Whether ``text`` has more than ``room`` tokens; decided without counting when a lower
        bound of its count already exceeds ``room`` (the answer is the same as ``count > room``)."""
        if room < 0:
            return True
        found = self._counts.get(text)
        if found is None:
            # (k separate runs of letters take 2k - 1 characters: a text of at most 2 * room
            # characters has a bound of at most room, not worth working out.)
            if self._at_least is not None and len(text) > 2 * room and self._at_least(text) > room:
                return True
            found = self.count(text)
        return found > room

    def count(self, text: str) -> int:
        # Packers ask for the same short strings (heads, sentences) again and again.
        found = self._counts.get(text)
        if found is None:
            found = self._counts[text] = checked_count(self.counter, text)
        return found

    def count_joined(self, parts: Sequence[str], sep: str) -> int:
        """``count(sep.join(parts))``; with cl100k_base worked out from the counts of the parts and
        of the few characters around each separator (see :func:`~graphfuse.context._cuts.seam`)."""
        text = sep.join(parts)
        found = self._counts.get(text)
        if found is None:
            found = self._sum(parts, sep) if self.additive else None
            if found is None:
                found = checked_count(self.counter, text)
            self._counts[text] = found
        return found

    def _sum(self, parts: Sequence[str], sep: str) -> int | None:
        if not parts:
            return self.count("")
        total = self.count(parts[0])
        seams = self._seams
        for left, right in pairwise(parts):
            extra = seams.get((left, sep, right))
            if extra is None:
                extra = seam(left, sep, right, self.count)
                if extra is None:
                    return None
                seams[left, sep, right] = extra
            total += self.count(right) + extra
        return total

    def fits(self, text: str) -> bool:
        return self.count(text) <= self.budget


def fit_parts(parts: list[str], b: Budgeter, sep: str = _SEP) -> list[str]:
    """Drop parts from the end until the joined text fits (token counts are not exactly additive)."""
    while parts and b.count_joined(parts, sep) > b.budget:
        parts.pop()
    return parts


def empty_text(b: Budgeter) -> str:
    """The text of a context without sources: a short notice when it fits, else nothing."""
    return EMPTY_TEXT if b.fits(EMPTY_TEXT) else ""


def _head(n: int, title: str | None, sep: str) -> str:
    return f"[{n}] {title}{sep}" if title else f"[{n}] "


def pack_passages(
    query: str,
    items: Sequence[Item],
    b: Budgeter,
    similarity: Mapping[str, float] | None = None,
    relation_similarity: Mapping[str, float] | None = None,
    *,
    scorer: SentenceScorer | None = None,
) -> Packed:
    """Whole passages by score; one that does not fit is cut to its query-relevant sentences, else dropped.

    ``scorer`` (made from ``query``, ``items`` and the similarities when not given) ranks the
    sentences of a passage that is cut.

    A passage too long for the space left, whose best sentence alone does not fit either, is
    cut at a word boundary when it would be the first in the context (so one long paragraph
    without sentence boundaries still yields a context), and dropped otherwise.
    """
    parts: list[str] = []
    sources: list[ContextSource] = []
    dropped: list[DroppedSource] = []
    used = 0
    for pos, item in enumerate(items):
        n = len(parts) + 1
        head = _head(n, item.title, "\n")
        extra = b.sep_cost if parts else 0
        left = b.budget - used - extra
        whole = head + item.text
        if not b.over(whole, left):
            cost = b.count(whole)
            parts.append(whole)
            sources.append(ContextSource(item.id, item.title, item.score))
            used += cost + extra
            continue
        short = None
        if _one_sentence_fits(head, item.text, b, left):
            if scorer is None:
                # (Only one passage's sentences are ranked here: no cross-document weights needed.)
                scorer = SentenceScorer(query, items, similarity, relation_similarity, shared_names=False)
            short = _shorten(head, scorer.sentences(pos), b, left)
        if short is None and not parts:
            cut = cut_to(whole, lambda t, room=left: b.count(t) <= room)
            short = (cut, b.count(cut)) if cut.startswith(head) and len(cut) > len(head) + 1 else None
        if short is None:
            dropped.append(DroppedSource(item.id, item.title, item.score, "budget"))
            continue
        parts.append(short[0])
        sources.append(ContextSource(item.id, item.title, item.score, shortened=True))
        used += short[1] + extra
    return _finish(parts, sources, dropped, b)


def _one_sentence_fits(head: str, text: str, b: Budgeter, left: int) -> bool:
    """Whether the head and at least one sentence of ``text`` fit in ``left`` tokens.

    When none does, :func:`_shorten` finds nothing whatever the scores: the sentences need not
    be scored (nor, with a lower bound of the counter, counted).
    """
    room = left - b.count(head) - 1
    return room >= 0 and any(not b.over(text[s:e], room) for s, e in sentence_spans(text))


def _shorten(head: str, sentences: Sequence[Sentence], b: Budgeter, left: int) -> tuple[str, int] | None:
    """The item's best sentences (by score, kept in text order) that fit in ``left`` tokens."""
    chosen: list[Sentence] = []
    cost = b.count(head)
    for s in sorted(sentences, key=lambda s: (-s.score, s.index)):
        if s.score <= 0:
            break
        if not b.over(s.text, left - cost - 1):
            chosen.append(s)
            cost += b.count(s.text) + 1
    if not chosen:
        return None
    texts = joined_texts(sorted(chosen, key=lambda s: s.index))
    body = " ".join(texts)
    if b.additive:  # (the body counted from its sentences' counts)
        b.count_joined(texts, " ")
    return head + body, b.count_joined([head, body], "")


def _finish(parts: list[str], sources: list[ContextSource], dropped: list[DroppedSource], b: Budgeter) -> Packed:
    kept = fit_parts(list(parts), b)
    for s in sources[len(kept) :]:
        dropped.append(DroppedSource(s.id, s.title, s.score, "budget"))
    sources = sources[: len(kept)]
    text = _SEP.join(kept) if kept else empty_text(b)
    return text, sources, dropped


def pack_evidence(
    query: str,
    items: Sequence[Item],
    b: Budgeter,
    similarity: Mapping[str, float] | None = None,
    relation_similarity: Mapping[str, float] | None = None,
    *,
    min_share: float = 0.0,
) -> Packed:
    """The best-scoring sentences across all passages within the budget, grouped under their passage.

    Sentences are taken greedily by their score (see
    :class:`~graphfuse.context._evidence.SentenceScorer`) plus the weight of the query terms
    they add to those already taken (so that every hop of a question gets its sentences),
    per token (damped: ``(tokens + 8) ** 0.3``), each once (a sentence repeated in two
    passages is kept in the first), while the estimate fits; the selection is rendered per
    passage in rank order (``[n] Title: s1 s2``, or ``[n] s1 s2`` when a kept sentence states
    the title: the words are there already, and the tokens go to evidence) and the text is
    checked against the budget, dropping the last sentences if needed.
    """
    scorer = SentenceScorer(query, items, similarity, relation_similarity)
    scored = [scorer.sentences(i) for i in range(len(items))]
    pool = sorted((s for group in scored for s in group), key=lambda s: (-s.score, s.item, s.index))
    best = max((s.score for s in pool), default=0.0)
    seen: set[str] = set()
    chosen: dict[int, list[Sentence]] = {}
    used = 0
    head_cost = {i: b.count(_head(len(items), it.title, ": ")) for i, it in enumerate(items)}
    bare_cost = b.count(_head(len(items), None, ": "))
    title_keys = [_title_key(it.title) for it in items]
    stated: set[int] = set()  # items whose kept sentences state their title
    covered: set[str] = set()
    taken: set[tuple[int, int]] = set()  # (item, index) of the sentences kept

    weight = scorer.term_weights()

    def gain(s: Sentence) -> float:
        # fsum is exact: the gain does not depend on the hash-seeded order of the set of terms.
        value = s.score + COVERAGE * math.fsum(map(weight.__getitem__, s.terms - covered))
        return value / cost_scale[id(s)]

    # Lazy greedy: a sentence's gain only falls as the query's terms get covered.
    candidates = [(n, s) for n, s in enumerate(pool) if s.score > 0 and s.score >= best * min_share]
    cost_scale = {id(s): float((b.count(s.text) + DENSITY_OFFSET) ** DENSITY) for _, s in candidates}
    heap = [(-gain(s), n, s) for n, s in candidates]
    heapq.heapify(heap)
    while heap:
        _, n, s = heapq.heappop(heap)
        now = gain(s)
        if heap and now < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-now, n, s))
            continue
        key = " ".join(s.text.split()).casefold()
        if key in seen:
            continue
        # (key is the sentence in _title_key's form: casefolded, spaces collapsed.)
        title_key = title_keys[s.item]
        states = title_key is not None and s.item not in stated and title_key in key
        # (A sentence costs its tokens and a space; a passage's first one its head and separator
        # too, without the title if the sentence states it; one stating it later gives the title back.)
        if s.item in chosen:
            extra = 1 - (head_cost[s.item] - bare_cost if states else 0)
        else:
            extra = 1 + (bare_cost if states else head_cost[s.item]) + b.sep_cost
        # (In a dialogue, a sentence right after a kept one of its turn is shown without the turn's
        # label, and one kept before it lets the next kept one drop its label: see joined_texts.)
        # (Outside a dialogue, turn is -1 and none of this is looked at: the common case.)
        group = scored[s.item]
        before = group[s.index - 1] if s.lead and s.index > 0 else None
        follows = before is not None and (s.item, before.index) in taken and continues_turn(before, s)
        text = s.text[s.lead :] if follows else s.text
        if b.over(text, b.budget - used - extra):
            continue
        cost = b.count(text) + extra
        after = group[s.index + 1] if s.turn >= 0 and s.index + 1 < len(group) else None
        if after is not None and (s.item, after.index) in taken and continues_turn(s, after):
            cost -= b.count(after.text) - b.count(after.text[after.lead :])
        taken.add((s.item, s.index))
        if states:
            stated.add(s.item)
        seen.add(key)
        chosen.setdefault(s.item, []).append(s)
        covered |= s.terms
        used += cost
    if not chosen and pool:
        # Not one sentence fits whole: cut the best one, so a long unsplittable passage still counts.
        s = pool[0]
        head = _head(1, items[s.item].title, ": ")
        cut = cut_to(head + s.text, b.fits)
        if cut.startswith(head) and len(cut) > len(head) + 1:
            chosen[s.item] = [Sentence(s.item, s.index, cut[len(head) :], s.score)]
    return render_evidence(items, chosen, b, [sum(len(s.text) for s in group) for group in scored])


def _title_key(title: str | None) -> str | None:
    return " ".join(title.casefold().split()) or None if title else None


def _states(title_key: str | None, text: str) -> bool:
    """Whether ``text`` holds the title (its :func:`_title_key`), case and spacing aside."""
    return title_key is not None and title_key in " ".join(text.casefold().split())


def render_evidence(
    items: Sequence[Item], chosen: dict[int, list[Sentence]], b: Budgeter, lengths: Sequence[int]
) -> Packed:
    """Render selected sentences per passage and enforce the budget (dropping the weakest sentences).

    ``lengths[i]`` is the length of all of item ``i``'s sentences: a passage is shortened when less
    is kept. A head leaves out the title that one of its sentences states.
    """
    while True:
        order = sorted(chosen)
        parts = []
        sources = []
        for n, i in enumerate(order, start=1):
            item = items[i]
            texts = joined_texts(sorted(chosen[i], key=lambda s: s.index))
            key = _title_key(item.title)
            head = _head(n, None if any(_states(key, t) for t in texts) else item.title, ": ")
            if b.additive:  # (counted from its sentences' counts: the head ends with a space)
                b.count_joined([head[:-1], *texts], " ")
            parts.append(head + " ".join(texts))
            full = sum(len(s.text) for s in chosen[i]) >= lengths[i]
            sources.append(ContextSource(item.id, item.title, item.score, shortened=not full))
        text = _SEP.join(parts)
        if not parts or b.count_joined(parts, _SEP) <= b.budget:
            break
        weakest = min(((i, s) for i in chosen for s in chosen[i]), key=lambda p: (p[1].score, -p[0]))
        chosen[weakest[0]].remove(weakest[1])
        if not chosen[weakest[0]]:
            del chosen[weakest[0]]
    dropped = [DroppedSource(it.id, it.title, it.score, "budget") for i, it in enumerate(items) if i not in chosen]
    return (text if parts else empty_text(b)), sources, dropped
