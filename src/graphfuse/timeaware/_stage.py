"""The time-aware stage: a boost (or a filter) on ``created_at`` from the question's own time words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._types import Candidate, Document, Query
from ..stages import NamedStage
from ..validation import check_name, check_options, check_positive_int
from ._expressions import TimeWindow, parse_time
from ._timeline import Timeline

__all__ = ["TimeAware"]

_OPTIONS = ("reference", "mode", "keep_undated")
_MODES = ("boost", "filter")


def _reference(value: object, what: str) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"{what} {value!r} is not an ISO 8601 time") from exc
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime or an ISO 8601 string, got {value!r}")
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _mode(value: object, what: str) -> str:
    if value not in _MODES:
        raise InvalidInput(f"{what} must be one of {list(_MODES)}, got {value!r}")
    return str(value)


class TimeAware(NamedStage):
    """Favour candidates created when the question says; fetch both events of an ordering question.

    The query text is read with :func:`~graphfuse.timeaware.parse_time` against the
    ``reference`` time (per-call option, a datetime or ISO string: when the question is asked;
    without one, only expressions that name their year count). For each window it found:

    - ``mode="boost"`` (default): a candidate created in a window gets the ``time`` signal (the
      window's confidence); others get 0 and stay, undated ones too;
    - ``mode="filter"``: candidates created outside every window are dropped (undated ones
      stay unless ``keep_undated=False``).

    With a ``timeline`` (a :class:`Timeline` of the corpus), creation times of candidates not
    hydrated yet are looked up there, and a window holding at most ``window_limit`` documents
    (a day, not a year) adds its documents as candidates (ids only: hydrate later), unless the
    query has a metadata filter (the timeline cannot check it). With a ``bm25`` index, each of
    the two events of an ordering question ("Did A happen before B?") is searched on its own
    and its ``event_limit`` best hits get the ``event`` signal (score / best score of that
    event), so both events are retrieved. A question without time words passes through.

    Per-call options (``options={"time": {...}}``): ``reference``, ``mode``, ``keep_undated``.
    """

    __slots__ = (
        "_bm25",
        "_event_limit",
        "_event_signal",
        "_keep_undated",
        "_mode",
        "_reference",
        "_timeline",
        "_window_limit",
    )

    def __init__(
        self,
        timeline: Timeline | None = None,
        *,
        bm25: Any = None,
        mode: str = "boost",
        reference: datetime | str | None = None,
        keep_undated: bool = True,
        window_limit: int = 10,
        event_limit: int = 5,
        name: str = "time",
        signal: str = "time",
        event_signal: str = "event",
    ) -> None:
        if timeline is not None and not isinstance(timeline, Timeline):
            raise InvalidInput(f"timeline must be a Timeline, got {timeline!r}")
        if bm25 is not None and not callable(getattr(bm25, "search", None)):
            raise InvalidInput(f"bm25 must be a BM25Index (with 'search'), got {bm25!r}")
        self._timeline = timeline
        self._bm25 = bm25
        self._mode = _mode(mode, "mode")
        self._reference = _reference(reference, "reference")
        if not isinstance(keep_undated, bool):
            raise InvalidInput(f"keep_undated must be a bool, got {keep_undated!r}")
        self._keep_undated = keep_undated
        self._window_limit = check_positive_int(window_limit, "window_limit", low=0)
        self._event_limit = check_positive_int(event_limit, "event_limit", low=0)
        self._set_names(name, signal)
        self._event_signal = check_name(event_signal, "event_signal")

    def __repr__(self) -> str:
        return f"TimeAware(timeline={self._timeline!r}, mode={self._mode!r}, name={self._name!r})"

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[datetime | None, str, bool]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        reference = _reference(options["reference"], f"{prefix} 'reference'") if "reference" in options else None
        mode = _mode(options.get("mode", self._mode), f"{prefix} 'mode'")
        keep = options.get("keep_undated", self._keep_undated)
        if not isinstance(keep, bool):
            raise InvalidInput(f"{prefix} 'keep_undated' must be a bool, got {keep!r}")
        return reference or self._reference, mode, keep

    def _created(self, candidate: Candidate) -> datetime | None:
        moment = candidate.document.created_at
        if moment is None and self._timeline is not None:
            moment = self._timeline.created_at(candidate.id)
        return moment

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        reference, mode, keep_undated = self._settings(query.options.get(self._name, {}))
        parsed = parse_time(query.text, reference)
        out = list(candidates)
        if parsed.windows:
            out = self._apply(parsed.windows, out, mode, keep_undated, query.filter is None)
        if parsed.order is not None and self._bm25 is not None and self._event_limit:
            out = self._events(parsed.events, out, query)
        return out

    def _apply(
        self, windows: Sequence[TimeWindow], candidates: list[Candidate], mode: str, keep_undated: bool, add: bool
    ) -> list[Candidate]:
        out: list[Candidate] = []
        for c in candidates:
            moment = self._created(c)
            if moment is None:
                if mode == "boost" or keep_undated:
                    out.append(c)
                continue
            strength = max((w.confidence for w in windows if w.contains(moment)), default=0.0)
            if strength > 0 or mode == "boost":
                out.append(c.with_signal(self._signal, strength))
        timeline = self._timeline
        if add and timeline is not None and self._window_limit:
            present = {c.id for c in out}
            for w in windows:
                if timeline.count(w.start, w.end) > self._window_limit:
                    continue
                for doc_id in timeline.between(w.start, w.end):
                    if doc_id not in present:
                        present.add(doc_id)
                        out.append(Candidate(Document(doc_id), {self._signal: w.confidence}))
        return out

    def _events(self, events: Sequence[str], candidates: list[Candidate], query: Query) -> list[Candidate]:
        strength: dict[str, float] = {}
        for event in events:
            hits = self._bm25.search(event, self._event_limit, filter=query.filter) if event.strip() else []
            if not hits:
                continue
            top = hits[0][1]
            for doc_id, score in hits:
                strength[doc_id] = max(strength.get(doc_id, 0.0), min(1.0, score / top))
        if not strength:
            return candidates
        out = [c.with_signal(self._event_signal, strength[c.id]) if c.id in strength else c for c in candidates]
        present = {c.id for c in candidates}
        out.extend(Candidate(Document(i), {self._event_signal: v}) for i, v in strength.items() if i not in present)
        return out
