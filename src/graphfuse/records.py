"""Host records as GraphFuse documents: the host-neutral layer every integration is written on.

A host (LlamaIndex, LangChain, your own framework) hands a batch of its own objects to a
:class:`RecordReader` built from accessors it supplies; the reader groups them by id, merges
duplicates, checks signals and timestamps, and gives a :class:`Batch`. The core stages and
scorers run on the batch (:func:`run_stages`, :func:`fuse`), and each resulting :class:`Hit`
names the host objects it stands for, so the host only builds its own types back. See
``docs/records.md``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, cast

from ._core._capabilities import ExplainsScores, SignalScorer, SignalStage, as_signal_stage
from ._core._errors import InvalidInput, NotFound
from ._core._protocols import GraphStore, Scorer, Stage
from ._core._timestamps import parse_timestamp
from ._core._types import Candidate, Document, Query, check_id, check_signal
from ._retrieval._pipeline import StageRunContext, run_signal_stage
from ._retrieval._pipeline import run_stages as _run_stages
from .scoring import reciprocal_rank_fusion
from .validation import check_choice, check_positive_int

__all__ = [
    "Batch",
    "Hit",
    "Record",
    "RecordReader",
    "SourceFusion",
    "StageChain",
    "check_known",
    "fuse",
    "merge_hits",
    "run_stages",
    "score_as_signal",
]

T = TypeVar("T")


def score_as_signal(score: object, name: str, what: str) -> float:
    """A host's score as the signal ``name``: a finite number at most 1; below 0 (a cosine under zero) is 0.0.

    Raises :class:`~graphfuse.InvalidInput` naming ``what`` for anything else (a score above 1
    is on another scale: normalise it, fuse ranks instead, or give the host no score signal).
    """
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        raise InvalidInput(f"{what} has score {score!r}; expected a finite number")
    if score > 1.0:
        raise InvalidInput(
            f"{what} has score {score!r} > 1, which cannot be the {name!r} signal (signals are in [0, 1]): "
            "normalise the scores first, fuse ranks instead, or take no score signal"
        )
    return max(0.0, float(score))


@dataclass(frozen=True, slots=True)
class Record(Generic[T]):
    """One distinct id of a batch: its document (from the first host object with that id), its merged
    signals, and the host objects sharing the id, in input order."""

    document: Document
    signals: Mapping[str, float]
    items: tuple[T, ...]

    @property
    def id(self) -> str:
        """The record's id."""
        return self.document.id

    def candidate(self) -> Candidate:
        """The record as a :class:`~graphfuse.Candidate`."""
        return Candidate.trusted(self.document, dict(self.signals))  # signals checked when read


@dataclass(frozen=True, slots=True)
class Hit(Generic[T]):
    """A result of running stages or a scorer over a batch.

    ``items`` are the host objects the hit stands for (empty for a document a stage added,
    e.g. a graph neighbour: the host builds a new object from ``document``); ``signals`` are
    the signals to carry; ``score`` and ``contributions`` are set by :func:`fuse`.
    """

    document: Document
    signals: Mapping[str, float]
    items: tuple[T, ...] = ()
    score: float | None = None
    contributions: Mapping[str, float] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """The document id."""
        return self.document.id

    def candidate(self) -> Candidate:
        """The hit as a :class:`~graphfuse.Candidate`."""
        return Candidate(self.document, self.signals)


class Batch(Generic[T]):
    """The records read from one batch of host objects, one per distinct id, in first-seen order."""

    __slots__ = ("_by_id", "_records")

    def __init__(self, records: Iterable[Record[T]]) -> None:
        self._records = tuple(records)
        self._by_id = {r.id: r for r in self._records}
        if len(self._by_id) != len(self._records):
            raise InvalidInput("a batch holds each id once")

    @classmethod
    def _of(cls, records: list[Record[T]]) -> Batch[T]:
        # The reader's own batches: one record per id by construction.
        batch = cls.__new__(cls)
        batch._records = tuple(records)
        batch._by_id = {r.document.id: r for r in records}
        return batch

    @property
    def records(self) -> tuple[Record[T], ...]:
        """The records, in first-seen order."""
        return self._records

    @property
    def ids(self) -> list[str]:
        """The records' ids, in order."""
        return [r.id for r in self._records]

    def __len__(self) -> int:
        return len(self._records)

    def __bool__(self) -> bool:
        return bool(self._records)

    def get(self, doc_id: str) -> Record[T] | None:
        """The record with this id, if any."""
        return self._by_id.get(doc_id)

    def candidates(self) -> list[Candidate]:
        """The records as candidates, in order."""
        return [r.candidate() for r in self._records]

    def hits(self) -> list[Hit[T]]:
        """The records as hits (no stage run), in order."""
        return [Hit(r.document, r.signals, r.items) for r in self._records]

    def hits_for(self, candidates: Iterable[Candidate]) -> list[Hit[T]]:
        """Stage output as hits: a known id names its host objects, a new id none."""
        out: list[Hit[T]] = []
        for c in candidates:
            known = self._by_id.get(c.id)
            out.append(Hit(c.document, c.signals, known.items if known is not None else ()))
        return out


class RecordReader(Generic[T]):
    """Reads a host's objects into a :class:`Batch` through the accessors the host supplies.

    - ``id(item)``: the id (a non-empty string of at most 512 characters).
    - ``content(item)``: the text, a ``str`` (may be empty); anything else is refused.
    - ``metadata(item)``: the user metadata, a mapping (without GraphFuse's signals); values
      need not be JSON (nothing is stored), and timestamps are read from it.
    - ``signals(item)``: the signals GraphFuse wrote on the object, a mapping, or ``None`` for an
      object no GraphFuse step has seen.
    - ``score(item)`` (optional): the host's score, taken as ``score_signal`` for an object
      without signals (see :func:`score_as_signal`); ``None`` scores give no signal.
    - ``rank_signal``: instead, objects without signals get this signal from their rank among
      them, ``(n - rank) / n`` (1.0 for the first): for hosts whose objects carry no score.
    - ``label(item)``: how errors name an object (default: ``record <id>``).

    Objects sharing an id are one record: the first one's content, metadata and timestamps,
    each signal's largest value across them. ``created_at_key`` / ``updated_at_key`` name the
    metadata keys holding timestamps (:func:`graphfuse.parse_timestamp`'s rule).
    """

    __slots__ = (
        "_content",
        "_created_at_key",
        "_id",
        "_label",
        "_metadata",
        "_rank_signal",
        "_score",
        "_score_signal",
        "_signals",
        "_updated_at_key",
        "_whats",
    )

    def __init__(
        self,
        *,
        id: Callable[[T], object],
        content: Callable[[T], object],
        metadata: Callable[[T], Mapping[str, Any]],
        signals: Callable[[T], object] | None = None,
        score: Callable[[T], object] | None = None,
        score_signal: str | None = "semantic",
        rank_signal: str | None = None,
        label: Callable[[T], str] | None = None,
        created_at_key: str | None = "created_at",
        updated_at_key: str | None = "updated_at",
    ) -> None:
        for name, fn in (("id", id), ("content", content), ("metadata", metadata)):
            if not callable(fn):
                raise InvalidInput(f"RecordReader {name} must be callable, got {fn!r}")
        for name, key in (("created_at_key", created_at_key), ("updated_at_key", updated_at_key)):
            if key is not None and (not isinstance(key, str) or not key):
                raise InvalidInput(f"{name} must be None or a non-empty string, got {key!r}")
        if score_signal is not None:
            check_signal(score_signal, 0.0)
        if rank_signal is not None:
            check_signal(rank_signal, 0.0)
        self._id, self._content, self._metadata = id, content, metadata
        self._signals, self._score, self._label = signals, score, label
        self._score_signal, self._rank_signal = score_signal, rank_signal
        self._created_at_key, self._updated_at_key = created_at_key, updated_at_key
        self._whats = (f"metadata {created_at_key!r}", f"metadata {updated_at_key!r}")

    def read(self, items: Iterable[T]) -> Batch[T]:
        """The batch of ``items`` (an empty iterable gives an empty batch)."""
        if isinstance(items, (str, bytes, Mapping)):
            raise InvalidInput(f"expected a sequence of records, got {type(items).__name__}")
        id_of, own_signals = self._id, self._own_signals
        first: dict[str, T] = {}  # id -> its first object, in first-seen order
        merged: dict[str, dict[str, float]] = {}
        more: dict[str, list[T]] = {}  # id -> the objects after the first, for ids seen twice or more
        unseen: list[str] = []
        for item in items:
            try:
                doc_id = check_id(id_of(item), "id")
            except InvalidInput as exc:
                raise InvalidInput(f"{self._name(item)}: {exc}") from None
            own = own_signals(item)
            known = merged.get(doc_id)
            if known is None:
                first[doc_id] = item
                merged[doc_id] = {} if own is None else own
                if own is None:
                    unseen.append(doc_id)
                continue
            more.setdefault(doc_id, []).append(item)
            for name, value in (own or {}).items():
                known[name] = max(value, known.get(name, value))
        if self._rank_signal is not None and unseen:
            n = len(unseen)
            for rank, doc_id in enumerate(unseen):
                signals = merged[doc_id]
                signals[self._rank_signal] = max((n - rank) / n, signals.get(self._rank_signal, 0.0))
        document = self._document
        records = [
            Record(
                document(item, doc_id),
                merged[doc_id],
                (item,) if doc_id not in more else (item, *more[doc_id]),
            )
            for doc_id, item in first.items()
        ]
        return Batch._of(records)

    def _name(self, item: T) -> str:
        if self._label is not None:
            return self._label(item)
        try:
            return f"record {self._id(item)!r}"
        except Exception:  # an id the accessor cannot even read
            return "record"

    def _own_signals(self, item: T) -> dict[str, float] | None:
        raw = None if self._signals is None else self._signals(item)
        if raw is not None:
            if type(raw) is not dict and not isinstance(raw, Mapping):
                raise InvalidInput(f"{self._name(item)}: signals must be a mapping, got {raw!r}")
            try:
                return {
                    (key := name if type(name) is str else str(name)): check_signal(key, value)
                    for name, value in raw.items()
                }
            except InvalidInput as exc:
                raise InvalidInput(f"{self._name(item)}: {exc}") from None
        if self._rank_signal is not None or self._score is None or self._score_signal is None:
            return None
        score = self._score(item)
        if score is None:
            return {}
        if type(score) is float and 0.0 <= score <= 1.0:
            return {self._score_signal: score}
        return {self._score_signal: score_as_signal(score, self._score_signal, self._name(item))}

    def _document(self, item: T, doc_id: str) -> Document:
        try:
            content = self._content(item)
            if not isinstance(content, str):
                raise InvalidInput(f"has no text: content must be a string, got {type(content).__name__}")
            metadata = self._metadata(item)
            if type(metadata) is not dict and not isinstance(metadata, Mapping):
                raise InvalidInput(f"metadata must be a mapping, got {type(metadata).__name__}")
            created_key, updated_key = self._created_at_key, self._updated_at_key
            created = updated = None
            if created_key is not None and (value := metadata.get(created_key)) is not None:
                created = parse_timestamp(value, self._whats[0])
            if updated_key is not None and (value := metadata.get(updated_key)) is not None:
                updated = parse_timestamp(value, self._whats[1])
        except InvalidInput as exc:
            raise InvalidInput(f"{self._name(item)} {exc}") from None
        # Every part is checked: build without checking again (metadata copied, so nobody else holds it).
        return Document.trusted(doc_id, content, dict(metadata), created, updated)


async def run_stages(stages: Sequence[Stage], query: Query, batch: Batch[T]) -> list[Hit[T]]:
    """Run core stages over a batch, as a :class:`~graphfuse.Pipeline` runs them (the same logs,
    metrics, spans and :class:`~graphfuse.StageFailed` wrapping), in the stages' output order.

    When every stage is a signal stage (:func:`graphfuse.hosts.as_signal_stage`: the built-in
    temporal, PageRank and access stages), each one's values are computed from the records
    (:func:`graphfuse.hosts.run_signal_stage`) and no candidate is built: the same hits."""
    if not batch:
        return []
    signal_stages = [as_signal_stage(stage) for stage in stages]
    if all(stage is not None for stage in signal_stages):
        return await _run_signal_stages(cast(list[SignalStage], signal_stages), query, batch)
    out = await _run_stages(stages, query, batch.candidates(), StageRunContext())
    return batch.hits_for(out)


async def _run_signal_stages(stages: Sequence[SignalStage], query: Query, batch: Batch[T]) -> list[Hit[T]]:
    # What run_stages gives for signal stages: the records in order, each stage's signal set on each.
    records = batch.records
    ids = [r.document.id for r in records]
    documents = [r.document for r in records]
    signals = [dict(r.signals) for r in records]
    context = StageRunContext()
    for stage in stages:
        read = stage.signal_input.read
        values = await run_signal_stage(stage, query, ids, [read(d) for d in documents], context)
        name = stage.signal
        for own, value in zip(signals, values, strict=True):
            own[name] = value  # checked by run_signal_stage
    return [Hit(r.document, own, r.items) for r, own in zip(records, signals, strict=True)]


class StageChain(Generic[T]):
    """Stages that separate host steps would run one after another, run over one batch in as few
    :func:`run_stages` calls as their queries allow.

    :meth:`add` queues a stage with the query its step runs it with: consecutive stages with equal
    queries join one :func:`run_stages` call. :meth:`hits` runs what was queued, in order, and
    gives the hits: the first run reads the batch, each later run reads the hits before it as
    records (their documents, signals and host objects), so the result is what the steps give
    one after the other. Call :meth:`hits` between two :meth:`add` calls when something (a check
    a step makes, an error it raises) must come after the stages before it have run. A chain that
    raised is spent: build a new one.
    """

    __slots__ = ("_batch", "_hits", "_runs")

    def __init__(self, batch: Batch[T]) -> None:
        if not isinstance(batch, Batch):
            raise InvalidInput(f"StageChain runs over a Batch, got {type(batch).__name__}")
        self._batch = batch
        self._hits: list[Hit[T]] | None = None  # None: no stage has run, the batch's records stand
        self._runs: list[tuple[list[Stage], Query]] = []

    def add(self, stage: Stage, query: Query) -> None:
        """Queue ``stage``, run with ``query`` after the stages queued before it."""
        if self._runs and self._runs[-1][1] == query:
            self._runs[-1][0].append(stage)
        else:
            self._runs.append(([stage], query))

    async def hits(self) -> list[Hit[T]]:
        """Run the queued stages and give the hits (the batch's records as hits if none ever ran)."""
        runs, self._runs = self._runs, []
        for stages, query in runs:
            records = self._batch if self._hits is None else Batch(_records_of(self._hits))
            self._hits = await run_stages(stages, query, records)
        return self._batch.hits() if self._hits is None else self._hits


def _records_of(hits: Sequence[Hit[T]]) -> Iterable[Record[T]]:
    return (Record(h.document, h.signals, h.items) for h in hits)


def _signal_scorer(scorer: Scorer, explains: bool) -> SignalScorer | None:
    # A scorer whose score_signals/explain_signals may stand in for score/explain: both pairs defined
    # by the same class (a subclass overriding only one of a pair is scored through candidates).
    # (isinstance(scorer, SignalScorer) without the typing machinery's cost on every call.)
    if not callable(getattr(scorer, "score_signals", None)) or not callable(getattr(scorer, "explain_signals", None)):
        return None
    mro = type(scorer).__mro__

    def owner(attr: str) -> type | None:
        return next((c for c in mro if attr in c.__dict__), None)

    if owner("score") is not owner("score_signals"):
        return None
    if explains and owner("explain") is not owner("explain_signals"):
        return None
    return cast(SignalScorer, scorer)


def fuse(
    hits: Sequence[Hit[T]], scorer: Scorer, *, top_n: int | None = None, min_score: float | None = None
) -> list[Hit[T]]:
    """Score hits with ``scorer`` and sort them best first, ties by id (a pipeline's order), keeping
    ``top_n`` (and those scoring at least ``min_score``); each carries its score and contributions."""
    if top_n is not None and (isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1):
        raise InvalidInput(f"top_n must be None or a positive integer, got {top_n!r}")
    if not hits:
        return []
    explains = callable(getattr(scorer, "explain", None))  # (isinstance(scorer, ExplainsScores), cheaper)
    by_signals = _signal_scorer(scorer, explains)
    if by_signals is not None:
        # The hits' ids and signals are all such a scorer reads: no candidates built (the signals
        # checked as a Candidate checks them).
        ids = [h.document.id for h in hits]
        signals = [h.signals for h in hits]
        for own in signals:
            for name, value in own.items():
                check_signal(name, value)
        scores = by_signals.score_signals(ids, signals)
        shares = by_signals.explain_signals(ids, signals) if explains else [{} for _ in hits]
    else:
        candidates = [h.candidate() for h in hits]
        scores = scorer.score(candidates)
        shares = cast(ExplainsScores, scorer).explain(candidates) if explains else [{} for _ in hits]
    if len(scores) != len(hits):
        raise InvalidInput(f"scorer {type(scorer).__name__} returned {len(scores)} scores for {len(hits)} hits")
    order = sorted(range(len(hits)), key=lambda i: (-scores[i], hits[i].id))
    ranked = [
        Hit(hits[i].document, hits[i].signals, hits[i].items, float(scores[i]), dict(shares[i]))
        for i in order
        if min_score is None or scores[i] >= min_score
    ]
    return ranked if top_n is None else ranked[:top_n]


def merge_hits(batches: Iterable[Batch[T]]) -> list[Hit[T]]:
    """One hit per id across several batches (one per source), in first-seen order: the first batch's
    document and host objects for an id, the signals of every batch holding it merged (a later
    batch's value wins for a signal name two batches carry)."""
    merged: dict[str, Hit[T]] = {}
    for batch in batches:
        for r in batch.records:
            known = merged.get(r.id)
            if known is None:
                merged[r.id] = Hit(r.document, dict(r.signals), r.items)
            else:
                merged[r.id] = Hit(known.document, {**known.signals, **r.signals}, known.items)
    return list(merged.values())


async def check_known(graph_store: GraphStore, ids: Sequence[str], what: str) -> None:
    """Raise :class:`~graphfuse.NotFound` naming the ids ``graph_store`` does not hold."""
    if not ids:
        return
    found = await graph_store.get_documents(list(ids))
    missing = [i for i in ids if i not in found]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise NotFound(
            f"{what}: {len(missing)} record(s) are not in the graph store ({shown}); pass unknown='keep' to keep "
            "them unexpanded, or set id_key to the metadata key holding their graph id"
        )


_FUSION_MODES = ("rrf", "weighted")


class SourceFusion:
    """Fuse the ranked hits of several named sources (a host's retrievers) into one ranking.

    ``names`` are the sources; ``weights`` a mapping of source name to weight, a sequence in
    the order of ``names``, or ``None`` (every source weighs 1). Each weight is a finite number
    >= 0, at least one above zero. ``what`` names a source in errors (``"retriever"``).

    - ``mode="rrf"``: each item gets ``sum(weight[source] / (k + rank))`` over the sources that
      list it (the weights honoured, unlike an unweighted RRF; a zero-weight source takes no part).
    - ``mode="weighted"``: ``sum(weight[source] * score)``, every score a signal in [0, 1]
      (below 0 is 0.0; ``None`` or above 1 raises :class:`~graphfuse.InvalidInput`).

    An item one source lists twice counts once for it, at its best rank (or score). With
    ``normalize=True`` the fused score is divided by its largest possible value
    (``sum(weights) / (k + 1)`` for RRF, ``sum(weights)`` for weighted), so it lies in [0, 1];
    1.0 means first (or a perfect score) in every source. The order is the same either way.
    """

    __slots__ = ("_k", "_mode", "_scale", "_weights", "_what")

    def __init__(
        self,
        names: Sequence[str],
        weights: Mapping[str, float] | Sequence[float] | None = None,
        *,
        mode: str = "rrf",
        k: int = 60,
        normalize: bool = True,
        what: str = "source",
    ) -> None:
        self._what = what
        self._weights = self._checked(self._named(weights, list(names)))
        self._k = check_positive_int(k, "k")
        self._mode = check_choice(mode, "mode", _FUSION_MODES)
        if not isinstance(normalize, bool):
            raise InvalidInput(f"normalize must be True or False, got {normalize!r}")
        total = sum(self._weights.values())
        self._scale = (1.0 / (total / (self._k + 1) if self._mode == "rrf" else total)) if normalize else 1.0

    @property
    def weights(self) -> Mapping[str, float]:
        """The weight of each source."""
        return dict(self._weights)

    @property
    def mode(self) -> str:
        """``"rrf"`` or ``"weighted"``."""
        return self._mode

    def __repr__(self) -> str:
        return f"SourceFusion({self._weights!r}, mode={self._mode!r}, k={self._k})"

    def fuse(
        self,
        found: Mapping[str, Sequence[tuple[str, object]]],
        *,
        top_n: int | None = None,
        label: Callable[[str, int], str] | None = None,
    ) -> list[tuple[str, float]]:
        """The fused ranking of ``found`` (source name -> its ``(id, score)`` hits, best first) as
        ``(id, fused score)`` pairs, best first, ties by id, the ``top_n`` best. Scores are read in
        ``"weighted"`` mode only; ``label(source, position)`` names a hit whose score is refused."""
        if top_n is not None:
            check_positive_int(top_n, "top_n")
        if self._mode == "rrf":
            # Weights applied here rather than by reciprocal_rank_fusion, which restricts source
            # names to signal names.
            active = {s: [key for key, _ in hits] for s, hits in found.items() if self._weights.get(s, 0.0) > 0}
            parts = reciprocal_rank_fusion(active, None, self._k)
            fused = {key: sum(self._weights[s] * v for s, v in p.items()) for key, p in parts.items()}
        else:
            fused = {}
            for source, hits in found.items():
                w = self._weights.get(source, 0.0)
                best: dict[str, float] = {}
                for i, (key, score) in enumerate(hits):
                    what = label(source, i) if label is not None else f"{self._what} {source!r} hit {i}"
                    best[key] = max(score_as_signal(score, f"{source} score", what), best.get(key, 0.0))
                for key, value in best.items():
                    fused[key] = fused.get(key, 0.0) + w * value
        order = sorted(fused, key=lambda key: (-fused[key], key))
        # min() guards the [0, 1] bound against a rounding error in the scaling.
        return [(key, min(1.0, fused[key] * self._scale)) for key in order[:top_n]]

    def _named(self, weights: Mapping[str, float] | Sequence[float] | None, names: list[str]) -> Mapping[str, float]:
        if weights is None:
            return dict.fromkeys(names, 1.0)
        if isinstance(weights, Mapping):
            unknown = sorted(set(map(str, weights)) - set(names))
            if unknown:
                raise InvalidInput(f"weights name unknown {self._what}s {unknown}; the {self._what}s are {names}")
            return {str(n): w for n, w in weights.items()}
        if isinstance(weights, Sequence) and not isinstance(weights, (str, bytes)):
            if len(weights) != len(names):
                raise InvalidInput(f"got {len(weights)} weights for {len(names)} {self._what}s")
            return dict(zip(names, weights, strict=True))
        raise InvalidInput(f"weights must be a mapping, a sequence or None, got {weights!r}")

    def _checked(self, weights: Mapping[str, float]) -> dict[str, float]:
        checked: dict[str, float] = {}
        for name, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise InvalidInput(f"weight for {self._what} {name!r} must be a finite number >= 0, got {w!r}")
            checked[name] = float(w)
        if not any(checked.values()):
            raise InvalidInput(f"at least one {self._what} weight must be greater than zero")
        return checked
