"""Signal stages and scorers on plain values: the same signals, scores, errors and telemetry as on candidates."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import Candidate, Document, InvalidInput, Query, Relation, RunContext, StageFailed
from graphfuse.hosts import SignalInput, SignalScorer, SignalStage, as_signal_stage, run_signal_stage, run_stage
from graphfuse.scoring import ReciprocalRankFusion, WeightedScorer
from graphfuse.stages import AccessPopularity, Hydrate, PageRank, TemporalDecay
from graphfuse.stores import InMemoryGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def clock() -> datetime:
    return NOW


@st.composite
def candidate_lists(draw: st.DrawFn) -> list[Candidate]:
    out = []
    for i in range(draw(st.integers(0, 8))):
        metadata: dict[str, Any] = {}
        if draw(st.booleans()):
            metadata["access_count"] = draw(st.one_of(st.integers(0, 5000), st.floats(0, 5000), st.just("12")))
        created = NOW - timedelta(hours=draw(st.integers(-10, 9000))) if draw(st.booleans()) else None
        updated = NOW - timedelta(hours=draw(st.integers(-10, 9000))) if draw(st.booleans()) else None
        signals = draw(st.dictionaries(st.sampled_from(["semantic", "graph", "temporal"]), st.floats(0, 1)))
        doc = Document(f"d{i}", "text", metadata, created, updated)
        out.append(Candidate(doc, signals))
    return out


async def _graph() -> InMemoryGraphStore:
    store = InMemoryGraphStore()
    await store.store_documents([Document(f"d{i}", "t") for i in range(8)])
    await store.create_relations([Relation("d0", "d1"), Relation("d1", "d2"), Relation("d3", "d1")])
    await store.pagerank()
    return store


def _stages(graph: InMemoryGraphStore) -> list[SignalStage]:
    stages: list[Any] = [
        TemporalDecay(clock=clock),
        TemporalDecay(clock=clock, timestamp="updated_at", missing="zero", min_score=0.1),
        AccessPopularity(),
        AccessPopularity(missing="zero", max_access_count=10),
        PageRank(graph, default=0.25),
    ]
    for stage in stages:
        assert isinstance(stage, SignalStage)
        assert as_signal_stage(stage) is stage
    return stages


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(candidates=candidate_lists(), which=st.integers(0, 4), half_life=st.sampled_from([None, timedelta(days=3)]))
async def test_signal_values_equal_what_run_sets(candidates: list[Candidate], which: int, half_life: Any) -> None:
    stage = _stages(await _graph())[which]
    options = {stage.name: {"half_life": half_life}} if half_life is not None and which < 2 else {}
    query = Query("q", options=options)
    ran = await run_stage(stage, query, candidates)  # type: ignore[arg-type]
    ids = [c.id for c in candidates]
    values = await run_signal_stage(stage, query, ids, [stage.signal_input.read(c.document) for c in candidates])
    assert [c.id for c in ran] == ids
    assert [c.signals[stage.signal] for c in ran] == values
    assert all(type(v) is float for v in values)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(candidates=candidate_lists(), top=st.booleans())
def test_scorers_score_signals_like_candidates(candidates: list[Candidate], top: bool) -> None:
    scorers: list[SignalScorer] = [WeightedScorer(), ReciprocalRankFusion(k=3), ReciprocalRankFusion({"graph": 2.0})]
    ids = [c.id for c in candidates]
    signals = [c.signals for c in candidates]
    for scorer in scorers:
        assert isinstance(scorer, SignalScorer)
        assert scorer.score_signals(ids, signals) == scorer.score(candidates)  # type: ignore[attr-defined]
        assert scorer.explain_signals(ids, signals) == scorer.explain(candidates)  # type: ignore[attr-defined]


def test_signal_input_reads_one_part_of_a_document() -> None:
    doc = Document("d", "t", {"n": 3}, NOW, NOW - timedelta(days=1))
    assert SignalInput("id").read(doc) == "d"
    assert SignalInput("created_at").read(doc) == NOW
    assert SignalInput("updated_at").read(doc) == NOW - timedelta(days=1)
    assert SignalInput("metadata", "n").read(doc)["n"] == 3
    with pytest.raises(InvalidInput, match="field must be one of"):
        SignalInput("content")
    with pytest.raises(InvalidInput, match="key must be a non-empty string"):
        SignalInput("metadata")
    with pytest.raises(InvalidInput, match="key must be a non-empty string"):
        SignalInput("id", "n")


def test_stage_declarations() -> None:
    assert TemporalDecay(timestamp="updated_at").signal_input == SignalInput("updated_at")
    assert AccessPopularity(key="hits").signal_input == SignalInput("metadata", "hits")
    assert PageRank(InMemoryGraphStore(), signal="pr").signal == "pr"
    assert as_signal_stage(Hydrate(InMemoryGraphStore())) is None


class _Bad:
    name = "bad"
    signal = "bad"
    signal_input = SignalInput("id")

    def __init__(self, result: object) -> None:
        self.result = result

    async def signal_values(
        self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext
    ) -> list[float]:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result  # type: ignore[return-value]

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return list(candidates)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        ([0.5], "returned 1 values, expected a list of 2"),
        ((0.5, 0.5), "returned tuple"),
        ([0.5, 1.5], "must be in \\[0, 1\\]"),
        ([0.5, "x"], "must be a float"),
        (RuntimeError("boom"), "boom"),
    ],
)
async def test_run_signal_stage_wraps_failures_like_run_stage(
    result: object, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    stage = _Bad(result)
    assert isinstance(stage, SignalStage)
    with caplog.at_level(logging.WARNING, "graphfuse"), pytest.raises(StageFailed, match=message) as info:
        await run_signal_stage(stage, Query("q"), ["a", "b"], ["a", "b"])
    assert info.value.stage == "bad"
    assert "stage bad failed" in caplog.text


async def test_run_signal_stage_checks_lengths_and_keeps_graphfuse_errors_as_causes() -> None:
    with pytest.raises(InvalidInput, match="2 ids and 1 values"):
        await run_signal_stage(_Bad([0.1, 0.2]), Query("q"), ["a", "b"], ["a"])
    with pytest.raises(StageFailed) as info:
        await run_signal_stage(AccessPopularity(missing="error"), Query("q"), ["a"], [{}])
    assert isinstance(info.value.cause, InvalidInput)
    assert await run_signal_stage(_Bad([1, 0]), Query("q"), ["a", "b"], ["a", "b"]) == [1.0, 0.0]
    with pytest.raises(InvalidInput, match="unknown"):
        await TemporalDecay().signal_values(Query("q", options={"temporal": {"halflife": 1}}), [], [], None)


def test_as_signal_stage_honours_an_override_of_either_method() -> None:
    class OwnRun(TemporalDecay):
        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            return []

    class OwnValues(AccessPopularity):
        async def signal_values(
            self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext | None = None
        ) -> list[float]:
            return [1.0 for _ in ids]

    class Both(TemporalDecay):
        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            return []

        async def signal_values(
            self, query: Query, ids: Sequence[str], values: Sequence[Any], context: RunContext | None = None
        ) -> list[float]:
            return []

    class Plain(TemporalDecay):
        pass

    assert as_signal_stage(OwnRun()) is None
    assert as_signal_stage(OwnValues()) is None
    assert as_signal_stage(Both()) is not None
    assert as_signal_stage(Plain()) is not None
    assert as_signal_stage(object()) is None
