"""The signal stages' values are exactly those of the per-document formula (bit for bit), and anything
outside the common case (a missing timestamp, a bool or NaN count, a score out of range) is refused or
defaulted as documented."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import InvalidInput, Query, StageFailed
from graphfuse.hosts import SignalInput, run_signal_stage
from graphfuse.stages import AccessPopularity, PageRank, TemporalDecay

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
QUERY = Query("q")


def _values(stage: Any, ids: Sequence[str], values: Sequence[Any]) -> list[float]:
    return asyncio.run(run_signal_stage(stage, QUERY, ids, values))


def _same(got: list[float], expected: list[float]) -> None:
    # Bit for bit: the passes must do the very same float operations as the formula.
    assert [float.hex(v) for v in got] == [float.hex(v) for v in expected]
    assert all(type(v) is float for v in got)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    hours=st.lists(st.one_of(st.integers(-50, 90000), st.none()), max_size=12),
    half_life_days=st.floats(0.5, 400),
    min_score=st.one_of(st.none(), st.floats(0, 1)),
)
def test_temporal_values_are_the_formula(
    hours: list[int | None], half_life_days: float, min_score: float | None
) -> None:
    stage = TemporalDecay(half_life=timedelta(days=half_life_days), min_score=min_score, clock=lambda: NOW)
    stamps = [None if h is None else NOW - timedelta(hours=h) for h in hours]
    half_life = timedelta(days=half_life_days).total_seconds()
    expected = []
    for stamp in stamps:
        if stamp is None:
            expected.append(0.5)  # missing="neutral"
            continue
        age = (NOW - stamp).total_seconds()
        value = 0.5 ** ((age if age > 0.0 else 0.0) / half_life)
        expected.append(value if min_score is None else max(value, min_score))
    _same(_values(stage, [f"d{i}" for i in range(len(stamps))], stamps), expected)


def test_temporal_missing_error_still_names_the_document() -> None:
    stage = TemporalDecay(missing="error", clock=lambda: NOW)
    with pytest.raises(StageFailed) as info:
        _values(stage, ["a", "b"], [NOW, None])
    assert isinstance(info.value.cause, InvalidInput)
    assert "'b'" in str(info.value.cause)


_COUNT = st.one_of(st.integers(0, 5000), st.floats(0, 5000), st.none())


@settings(max_examples=150, deadline=None)
@given(counts=st.lists(_COUNT, max_size=12), cap=st.floats(1, 3000))
def test_access_values_are_the_formula(counts: list[float | None], cap: float) -> None:
    stage = AccessPopularity(max_access_count=cap)
    metadata: list[Mapping[str, Any]] = [{} if c is None else {"access_count": c} for c in counts]
    capped = [None if c is None else min(float(c), cap) for c in counts]
    top = max((c for c in capped if c is not None), default=0.0)
    expected = [0.5 if c is None else (c / top if top > 0 else 0.0) for c in capped]
    _same(_values(stage, [f"d{i}" for i in range(len(counts))], metadata), expected)


@pytest.mark.parametrize("bad", [True, math.nan, -1, math.inf, "x", [1]])
def test_access_refuses_what_it_refused(bad: object) -> None:
    stage = AccessPopularity()
    with pytest.raises(StageFailed) as info:
        _values(stage, ["a", "b"], [{"access_count": 3}, {"access_count": bad}])
    assert isinstance(info.value.cause, InvalidInput)
    assert "'b'" in str(info.value.cause)


def test_access_reads_a_numeric_string_as_before() -> None:
    _same(_values(AccessPopularity(), ["a", "b"], [{"access_count": 10}, {"access_count": " 5 "}]), [1.0, 0.5])


class _Scores:
    """A graph store whose PageRank scores are given."""

    def __init__(self, scores: Mapping[str, object]) -> None:
        self.scores = scores

    async def pagerank(self, ids: Sequence[str] | None = None) -> dict[str, object]:
        return {i: self.scores[i] for i in ids or () if i in self.scores}


@settings(max_examples=100, deadline=None)
@given(scores=st.lists(st.one_of(st.floats(0, 1), st.integers(0, 1), st.none()), max_size=12))
def test_pagerank_values_are_the_store_scores_or_the_default(scores: list[float | int | None]) -> None:
    ids = [f"d{i}" for i in range(len(scores))]
    stage = PageRank(_Scores({i: s for i, s in zip(ids, scores, strict=True) if s is not None}), default=0.25)  # type: ignore[arg-type]
    _same(_values(stage, ids, ids), [0.25 if s is None else float(s) for s in scores])


@pytest.mark.parametrize("bad", [math.nan, 1.5, -0.1, True, "0.5"])
def test_pagerank_refuses_what_it_refused(bad: object) -> None:
    stage = PageRank(_Scores({"a": 0.5, "b": bad}))  # type: ignore[arg-type]
    with pytest.raises(StageFailed) as info:
        _values(stage, ["a", "b"], ["a", "b"])
    assert isinstance(info.value.cause, InvalidInput)


class _Fixed:
    """A signal stage returning given values."""

    name = "fixed"
    signal = "fixed"
    signal_input = SignalInput("id")

    def __init__(self, values: list[object]) -> None:
        self.values = values

    async def run(self, query: Query, candidates: Sequence[Any], context: Any) -> list[Any]:  # pragma: no cover
        return list(candidates)

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: Any = None
    ) -> list[object]:
        return self.values


def test_run_signal_stage_checks_every_value_as_before() -> None:
    _same(_values(_Fixed([0.0, 1.0, 0.25]), ["a", "b", "c"], ["a", "b", "c"]), [0.0, 1.0, 0.25])
    _same(_values(_Fixed([1, 0.5]), ["a", "b"], ["a", "b"]), [1.0, 0.5])  # an int signal is made a float
    for bad in (math.nan, 1.01, -0.5, "0.5"):
        with pytest.raises(StageFailed) as info:
            _values(_Fixed([0.5, bad]), ["a", "b"], ["a", "b"])
        assert isinstance(info.value.cause, InvalidInput)
