"""The aggregate stage: fold the chunks of a document and the document itself into one candidate."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .._core._errors import InvalidInput
from .._core._protocols import RunContext
from .._core._traits import StageTraits
from .._core._types import Candidate, Document, Query
from ..validation import check_choice, check_options, require_hydrated
from ._named import NamedStage

__all__ = ["ParentAggregation"]

_OPTIONS = ("reduce", "keep")
_REDUCE = ("max", "sum", "mean")
_KEEP = ("parent", "best_chunk")


def _max(values: list[float]) -> float:
    return max(values)


def _sum(values: list[float]) -> float:
    return min(1.0, sum(values))


def _mean(values: list[float]) -> float:
    return min(1.0, sum(values) / len(values))


_REDUCERS: Mapping[str, Callable[[list[float]], float]] = {"max": _max, "sum": _sum, "mean": _mean}


class ParentAggregation(NamedStage):
    """Group chunks with their parent document and combine their signals: one candidate per document.

    A candidate whose metadata holds ``key`` (the :class:`~graphfuse.indexing.Indexer` writes
    ``parent_id`` on every chunk node ``<id>#<n>``) belongs to the group of that parent id;
    a candidate whose id *is* such a parent id joins the group too. Every signal present on
    at least one member is combined over the members that carry it (a member without the
    signal is not counted, so a mean is not diluted by chunks that were never scored):

    - ``reduce="max"`` (default): the best member's value;
    - ``"sum"``: the sum, capped at 1.0;
    - ``"mean"``: the average.

    Each group becomes one candidate, carrying the combined signals, at the position of its
    first member:

    - ``keep="parent"`` (default): the parent document. When the parent is not among the
      candidates it is an id-only ``Document(parent_id)``: put a
      :class:`~graphfuse.stages.Hydrate` stage after this one to load it (that hydrate also
      applies the query's filter to it);
    - ``keep="best_chunk"``: the chunk whose own (input) signals have the largest sum, the
      first such chunk on a tie; the parent's own candidate, if any, is folded into it.

    Candidates without ``key`` that are no member's parent pass through unchanged, in place;
    output ids are unique. Needs hydrated candidates (it reads metadata); an id-only candidate
    raises :class:`~graphfuse.InvalidInput` ("hydrate first"). A ``key`` value that is not a
    non-empty string raises :class:`~graphfuse.InvalidInput` naming the document. With no
    candidate holding ``key`` (an unchunked corpus) the stage returns its input unchanged.
    One level only: the parent's own ``key``, if any, is not followed.

    Per-call options (``options={"aggregate": {...}}``): ``reduce``, ``keep``.
    """

    traits = StageTraits(reads_query=False, needs_stores=False, in_memory_only=True)
    """What this stage declares to hosts (:func:`graphfuse.hosts.stage_traits`)."""

    __slots__ = ("_keep", "_key", "_reduce")

    def __init__(
        self, *, key: str = "parent_id", reduce: str = "max", keep: str = "parent", name: str = "aggregate"
    ) -> None:
        if not isinstance(key, str) or not key:
            raise InvalidInput(f"key must be a non-empty string, got {key!r}")
        self._key = key
        self._reduce = check_choice(reduce, "reduce", _REDUCE)
        self._keep = check_choice(keep, "keep", _KEEP)
        self._set_names(name)

    def __repr__(self) -> str:
        return (
            f"ParentAggregation(key={self._key!r}, reduce={self._reduce!r}, keep={self._keep!r}, name={self._name!r})"
        )

    def check_options(self, options: Mapping[str, Any]) -> None:
        """Validate this stage's per-call options (raises :class:`~graphfuse.InvalidInput`)."""
        self._settings(options)

    def _settings(self, options: Mapping[str, Any]) -> tuple[str, str]:
        check_options(self._name, options, _OPTIONS)
        prefix = f"stage {self._name!r} option"
        reduce = check_choice(options.get("reduce", self._reduce), f"{prefix} 'reduce'", _REDUCE)
        keep = check_choice(options.get("keep", self._keep), f"{prefix} 'keep'", _KEEP)
        return reduce, keep

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        reduce, keep = self._settings(query.options.get(self._name, {}))
        require_hydrated(self._name, candidates)
        parent_of: dict[str, str] = {}
        for c in candidates:
            parent = c.document.metadata.get(self._key)
            if parent is None:
                continue
            if not isinstance(parent, str) or not parent.strip():
                raise InvalidInput(
                    f"stage {self._name!r}: document {c.id!r} metadata {self._key!r} must be a non-empty string, "
                    f"got {parent!r}"
                )
            if parent != c.id:
                parent_of[c.id] = parent
        if not parent_of:
            return list(candidates)
        parents = set(parent_of.values())
        groups: dict[str, list[Candidate]] = {}
        slots: list[Candidate | str] = []  # a pass-through candidate, or the parent id of a group
        for c in candidates:
            group = parent_of.get(c.id, c.id if c.id in parents else None)
            if group is None:
                slots.append(c)
            elif group in groups:
                groups[group].append(c)
            else:
                groups[group] = [c]
                slots.append(group)
        combine = _REDUCERS[reduce]
        out: list[Candidate] = []
        for slot in slots:
            if isinstance(slot, Candidate):
                out.append(slot)
                continue
            members = groups[slot]
            values: dict[str, list[float]] = {}
            for m in members:
                for signal, value in m.signals.items():
                    values.setdefault(signal, []).append(value)
            signals = {signal: combine(vs) for signal, vs in values.items()}
            out.append(Candidate.trusted(self._representative(slot, members, keep), signals))
        return out

    @staticmethod
    def _representative(parent: str, members: list[Candidate], keep: str) -> Document:
        if keep == "parent":
            own = next((m for m in members if m.id == parent), None)
            return own.document if own is not None else Document(parent)
        best: Candidate | None = None
        best_total = -1.0
        for m in members:
            if m.id == parent:
                continue
            total = sum(m.signals.values())
            if total > best_total:
                best, best_total = m, total
        assert best is not None  # a group exists only because a chunk names its parent
        return best.document
