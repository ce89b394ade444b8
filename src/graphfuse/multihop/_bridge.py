"""The bridge stage: a second lexical hop through the names the best passages mention."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._sentences import content_terms, sentence_spans
from .._core._traits import StageTraits
from .._core._types import Candidate, Document, Query
from ..defaults import BRIDGE_SEEDS
from ..indexing import TextEntityExtractor
from ..stages import NamedStage
from ..validation import check_name, check_options, check_positive_int
from ._bm25 import BM25Index
from ._ppr import checked_seed_signals, top_seeds
from ._subjects import subject_span

__all__ = ["BridgeSearch"]

_OPTIONS = ("seeds", "limit")
_PARENT = "parent_id"  # the indexer's link from a chunk node to its document


def _uncovered(question: str, covered: frozenset[str]) -> str:
    """The words of ``question`` whose stems ``covered`` (a seed's terms) does not hold (the hop still to take)."""
    return " ".join(w for w in question.split() if not content_terms(w) & covered)


_MEMO_SIZE = 4096  # seed passages remembered (their names and terms): a few MB at most


class _SeedFacts:
    """What the stage reads of a seed passage's text, whatever the question: its proper-noun
    phrases (in order) and its content terms with its title's, the last ``_MEMO_SIZE`` texts kept.

    Both are functions of the text alone, and the best passages of a corpus are seeds of many
    questions: they are read once, not at every query.
    """

    def __init__(self, extractor: TextEntityExtractor) -> None:
        self._extractor = extractor
        self._seen: OrderedDict[tuple[str, object], tuple[tuple[str, ...], frozenset[str]]] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, text: str, title: object) -> tuple[tuple[str, ...], frozenset[str]]:
        key = (text, title if isinstance(title, str) else None)
        with self._lock:
            found = self._seen.get(key)
            if found is not None:
                self._seen.move_to_end(key)
                return found
        surfaces = tuple(text[m.start : m.end] for m in self._extractor.extract(text) if m.start >= 0)
        terms = frozenset(content_terms(f"{text} {title}" if isinstance(title, str) else text))
        with self._lock:
            self._seen[key] = (surfaces, terms)
            if len(self._seen) > _MEMO_SIZE:
                self._seen.popitem(last=False)
        return surfaces, terms


class BridgeSearch(NamedStage):
    """Find the passages one hop on from the best ones through the names those mention.

    A multi-hop question names the first entity ("the director of *Forced Vengeance*"); the
    passage about it names the bridge ("... directed by James Fargo") but the question does
    not, so neither vector nor BM25 search for the question reaches the next passage. This
    stage takes the ``seeds`` best candidates (by ``sum(seed_signals[name] * signal)``, as
    :class:`PersonalizedPageRank` picks its seeds), reads the proper-noun phrases each one's
    text carries that the question does not (:class:`~graphfuse.indexing.TextEntityExtractor`;
    ``max_names`` per passage, in text order), and searches the :class:`BM25Index` for those
    names plus the question's words that the seed does not already hold (the hop still to
    take: "the highest city in the state" once the seed has "Dell ranks sixth by revenue").
    Of the ``limit`` plus as many as there are seeds best hits of each search, those that hold
    at least one of the names (a hit on the question's words alone is no hop through a name;
    the first-stage BM25 ranks it already) and are no seed, ``limit`` at most, get the
    ``bridge`` signal ``score / best score`` (the largest over the seeds); new ones are added
    with ids only (hydrate later). A seed after the first that holds no content word of the
    question that the seeds before it do not hold is not searched: it restates what they cover
    (another passage on the same topic), and its names lead to more of the same, not to the
    part of the question still open (the two entities of a comparison each add their own);
    ``per_name`` searches every seed. It works the same with or without titles, which is why
    it helps most where no title links exist. Needs hydrated seeds (it reads their text); the
    query's metadata filter applies to the searches.

    With ``per_name=n`` (the ``multihop`` preset sets 4 on a store without titles), each seed's
    ``n`` names that share a sentence with the most of the question's content words ("directed
    by *Gia Coppola*" for "the director of ...") are searched one at a time, and each search's
    best hit gets ``bridge`` 1.0: without titles the bridge's own passage does not repeat the
    first hop's words, so one search for all names together finds the passages that mention
    several of them instead. The seed's own subject (its names, and the question's words it
    restates) takes no part in that choice. A name is searched in the index's
    :attr:`~BM25Index.subjects` when it has them (the passage *about* the name, not one more
    that mentions it), else, or when that finds nothing, as the question plus the name.

    With ``hop_signal`` (a signal name; the ``multihop`` preset sets ``"next_hop"``), the
    passages this stage reached as a next hop also get that signal, for the
    :class:`~graphfuse.scoring.AdaptiveScorer`'s ``second_hop`` rule: in the per-name form the
    passages found *about* a name (in the index's subjects), not those the question plus a name
    found: such a search is the question's own lexical search leaning on a name it mentions
    (in a chat log, a speaker present in many of the conversations), which is no evidence that
    the answer lies one hop on. In the combined form every hit gets it, with its ``bridge`` value.

    Per-call options (``options={"bridge": {...}}``): ``seeds``, ``limit``.
    """

    traits = StageTraits(needs_stores=False, in_memory_only=True)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = (
        "_extractor",
        "_facts",
        "_hop",
        "_index",
        "_limit",
        "_max_names",
        "_per_name",
        "_seed_signals",
        "_seeds",
    )

    def __init__(
        self,
        index: BM25Index,
        *,
        seeds: int = BRIDGE_SEEDS,
        limit: int = 10,
        max_names: int = 8,
        per_name: int = 0,
        seed_signals: Mapping[str, float] | None = None,
        name: str = "bridge",
        signal: str = "bridge",
        hop_signal: str | None = None,
    ) -> None:
        if not isinstance(index, BM25Index):
            raise InvalidInput(f"index must be a BM25Index, got {index!r}")
        self._index = index
        self._seeds = check_positive_int(seeds, "seeds")
        self._limit = check_positive_int(limit, "limit")
        self._max_names = check_positive_int(max_names, "max_names")
        if isinstance(per_name, bool) or not isinstance(per_name, int) or per_name < 0:
            raise InvalidInput(f"per_name must be a non-negative int, got {per_name!r}")
        self._per_name = per_name
        self._seed_signals = checked_seed_signals(seed_signals)
        self._extractor = TextEntityExtractor()
        self._facts = _SeedFacts(self._extractor)
        self._set_names(name, signal)
        if hop_signal is not None:
            check_name(hop_signal, "hop_signal")
            if hop_signal == signal:
                raise InvalidInput(f"hop_signal must differ from the stage's signal {signal!r}")
        self._hop = hop_signal

    def __repr__(self) -> str:
        per_name = f", per_name={self._per_name}" if self._per_name else ""
        return f"BridgeSearch({self._index!r}, seeds={self._seeds}, limit={self._limit}{per_name}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[int, int]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        return (
            check_positive_int(options.get("seeds", self._seeds), f"{prefix} 'seeds'"),
            check_positive_int(options.get("limit", self._limit), f"{prefix} 'limit'"),
        )

    def names(self, text: str, question: str, exclude: Sequence[str] = ()) -> list[str]:
        """The proper-noun phrases of ``text`` (in order, once each) that ``question`` does not contain."""
        return self._names(self._facts.of(text, None)[0], question, exclude)

    def _names(self, surfaces: Sequence[str], question: str, exclude: Sequence[str]) -> list[str]:
        asked = question.casefold()
        skip = {e.casefold() for e in exclude}
        out: dict[str, None] = {}
        for surface in surfaces:
            folded = surface.casefold()
            if folded in asked or folded in skip:
                continue
            out.setdefault(surface, None)
            if len(out) >= self._max_names:
                break
        return list(out)

    @staticmethod
    def _closest_names(text: str, question: str, names: Sequence[str]) -> list[str]:
        """``names`` by the most question content words a sentence naming them holds (stable)."""
        asked = content_terms(question)
        sentences = [text[a:b] for a, b in sentence_spans(text)]
        shared = [len(content_terms(s) & asked) for s in sentences]

        def closeness(name: str) -> int:
            return max((n for s, n in zip(sentences, shared, strict=True) if name in s), default=0)

        return sorted(names, key=lambda name: -closeness(name))

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        n_seeds, limit = self._settings(query.options.get(self._name, {}))
        seeds = [c for _, c in top_seeds([c for c in candidates if c.document.content], self._seed_signals, n_seeds)]
        # A chunk seed's document is the seed too: a hit on it is no next hop.
        seed_ids = {c.id for c in seeds} | {p for c in seeds if isinstance(p := c.document.metadata.get(_PARENT), str)}
        bridge: dict[str, float] = {}
        hop: dict[str, float] = {}  # the passages reached as a next hop (see hop_signal)
        # One search for all of a seed's names: a further seed that holds nothing of the question the
        # seeds before it do not already hold leads to more of the same, not to another hop.
        for c in seeds if self._per_name else self._adding(query.text, seeds):
            text = c.document.content or ""
            title = c.document.metadata.get("title")
            surfaces, terms = self._facts.of(text, title)
            names = self._names(surfaces, query.text, [title] if isinstance(title, str) else ())
            if not names:
                continue
            if self._per_name:
                for name in self._nearest_names(text, query.text, names):
                    reached = self._next_hop(query, name, seed_ids)
                    if reached is not None:
                        best, about = reached
                        bridge[best] = 1.0
                        if about:
                            hop[best] = 1.0
                continue
            named = " ".join(names)
            hits = self._index.search(
                f"{_uncovered(query.text, terms)} {named}", limit + len(seed_ids), filter=query.filter
            )
            # A hit holding none of the names matched the question's words alone: no hop through a name
            # (the first-stage BM25 ranks such passages already), so it gets no bridge value.
            holders = self._index.holding(named, (i for i, _ in hits))
            hits = [(i, s) for i, s in hits if i not in seed_ids and i in holders][:limit]
            if not hits:
                continue
            top = hits[0][1]
            for doc_id, score in hits:
                value = min(1.0, score / top)
                if value > bridge.get(doc_id, 0.0):
                    bridge[doc_id] = hop[doc_id] = value
        if not bridge:
            return list(candidates)
        found = {i: {self._signal: v} for i, v in bridge.items()}
        if self._hop is not None:
            for i, v in hop.items():
                found[i][self._hop] = v
        out = [c.with_signals(found[c.id]) if c.id in found else c for c in candidates]
        present = {c.id for c in candidates}
        out.extend(Candidate(Document(i), signals) for i, signals in found.items() if i not in present)
        return out

    def _adding(self, question: str, seeds: Sequence[Candidate]) -> list[Candidate]:
        """The first of ``seeds``, then each that holds a content word of ``question`` no seed before it holds."""
        asked = content_terms(question)
        covered: frozenset[str] | None = None
        kept: list[Candidate] = []
        for c in seeds:
            held = self._facts.of(c.document.content or "", c.document.metadata.get("title"))[1] & asked
            if covered is None or held - covered:
                kept.append(c)
                covered = held if covered is None else covered | held
        return kept

    def _nearest_names(self, text: str, question: str, names: Sequence[str]) -> list[str]:
        """The ``per_name`` names nearest the question, the seed's own subject left out of the choice."""
        subject = subject_span(text)
        if subject is not None:
            names = [n for n in names if n not in subject]
            restated = content_terms(subject)
            question = " ".join(w for w in question.split() if not content_terms(w) & restated)
        return self._closest_names(text, question, names)[: self._per_name]

    def _next_hop(self, query: Query, name: str, seed_ids: set[str]) -> tuple[str, bool] | None:
        """The best passage for ``name`` that is no seed, and whether it was found as the passage about it.

        About it if the index knows subjects and one matches; else the best hit of the question
        plus the name.
        """
        subjects = self._index.subjects
        if subjects is not None:
            found = subjects.search(name, 1 + len(seed_ids), filter=query.filter)
            best = next((i for i, _ in found if i not in seed_ids), None)
            if best is not None:
                return best, True
        found = self._index.search(f"{query.text} {name}", 1 + len(seed_ids), filter=query.filter)
        hit = next((i for i, _ in found if i not in seed_ids), None)
        return None if hit is None else (hit, False)
