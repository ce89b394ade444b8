"""Spans, metrics and logs of pipeline runs, read back through the OpenTelemetry SDK."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from graphfuse import Candidate, Document, GraphFuseError, Pipeline, Query, RunContext, StageFailed

_EXPORTER = InMemorySpanExporter()
_READER = InMemoryMetricReader()


@pytest.fixture(scope="module", autouse=True)
def _providers() -> None:
    # The global providers can be set once per process; GraphFuse's proxies pick them up.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[_READER]))


@pytest.fixture
def spans() -> InMemorySpanExporter:
    _EXPORTER.clear()
    return _EXPORTER


class Seed:
    name = "seed"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return [Candidate(Document(f"d{i}", f"text {i}"), {"semantic": i / 10}) for i in range(5)]


class Keep:
    name = "keep"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return list(candidates[:3])


class Broken:
    name = "broken"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise RuntimeError("backend went away")


def _histogram_points(name: str) -> list[tuple[dict[str, object], int]]:
    data = _READER.get_metrics_data()
    out = []
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == name:
                    out.extend((dict(p.attributes or {}), p.count) for p in metric.data.data_points)
    return out


async def test_one_span_per_run_and_per_stage(spans: InMemorySpanExporter) -> None:
    await Pipeline([Seed(), Keep()]).aretrieve("q", top_k=2)
    finished = {s.name: s for s in spans.get_finished_spans()}
    assert set(finished) == {
        "graphfuse.pipeline",
        "graphfuse.stage.seed",
        "graphfuse.stage.keep",
        "graphfuse.scoring",
    }
    run = finished["graphfuse.pipeline"]
    for stage in ("seed", "keep"):
        span = finished[f"graphfuse.stage.{stage}"]
        assert span.parent is not None
        assert span.parent.span_id == run.context.span_id
    assert finished["graphfuse.stage.keep"].attributes["graphfuse.candidates_in"] == 5
    assert finished["graphfuse.stage.keep"].attributes["graphfuse.candidates_out"] == 3
    assert run.attributes["graphfuse.results"] == 2


async def test_one_scoring_span_per_run_after_the_stages(spans: InMemorySpanExporter) -> None:
    await Pipeline([Seed(), Keep()]).aretrieve("q", top_k=2)
    finished = spans.get_finished_spans()
    scoring = [s for s in finished if s.name == "graphfuse.scoring"]
    assert len(scoring) == 1
    run = next(s for s in finished if s.name == "graphfuse.pipeline")
    assert scoring[0].parent is not None
    assert scoring[0].parent.span_id == run.context.span_id
    assert scoring[0].attributes["graphfuse.scorer"] == "WeightedScorer"
    assert scoring[0].attributes["graphfuse.candidates"] == 3
    keep = next(s for s in finished if s.name == "graphfuse.stage.keep")
    assert keep.end_time is not None
    assert scoring[0].start_time is not None
    assert scoring[0].start_time >= keep.end_time
    assert scoring[0].status.status_code is not StatusCode.ERROR


async def test_a_failing_scorer_marks_the_scoring_span(spans: InMemorySpanExporter) -> None:
    class Short:
        def score(self, candidates: Sequence[Candidate]) -> list[float]:
            return [0.5]

    with pytest.raises(GraphFuseError, match="returned 1 scores for 3 candidates"):
        await Pipeline([Seed(), Keep()], scorer=Short()).aretrieve("q")  # type: ignore[arg-type]
    scoring = next(s for s in spans.get_finished_spans() if s.name == "graphfuse.scoring")
    assert scoring.attributes["graphfuse.scorer"] == "Short"
    assert scoring.status.status_code is StatusCode.ERROR
    assert any(e.name == "exception" for e in scoring.events)


async def test_failed_stage_span_has_error_status(spans: InMemorySpanExporter) -> None:
    with pytest.raises(StageFailed):
        await Pipeline([Seed(), Broken()]).aretrieve("q")
    broken = next(s for s in spans.get_finished_spans() if s.name == "graphfuse.stage.broken")
    assert broken.status.status_code is StatusCode.ERROR
    assert any(e.name == "exception" for e in broken.events)


async def test_the_four_metrics_are_recorded() -> None:
    await Pipeline([Seed(), Keep()]).aretrieve("q", top_k=2)
    stage_durations = _histogram_points("graphfuse_stage_duration_seconds")
    assert {"stage": "seed"} in [attrs for attrs, _ in stage_durations]
    assert {"stage": "keep"} in [attrs for attrs, _ in _histogram_points("graphfuse_stage_candidates")]
    assert sum(count for _, count in _histogram_points("graphfuse_pipeline_duration_seconds")) >= 1
    assert sum(count for _, count in _histogram_points("graphfuse_pipeline_results")) >= 1


async def test_each_stage_logs_start_and_end_with_counts(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="graphfuse"):
        await Pipeline([Seed(), Keep()]).aretrieve("q")
    messages = [r.getMessage() for r in caplog.records if r.name == "graphfuse"]
    assert "stage keep start: 5 candidates" in messages
    assert any(m.startswith("stage keep end: 3 candidates in ") for m in messages)


async def test_a_signal_stage_run_has_the_same_span_metrics_and_logs(
    spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    from graphfuse import InvalidInput
    from graphfuse.hosts import run_signal_stage
    from graphfuse.stages import AccessPopularity

    with caplog.at_level(logging.DEBUG, logger="graphfuse"):
        values = await run_signal_stage(
            AccessPopularity(), Query("q"), ["a", "b"], [{"access_count": 1}, {"access_count": 2}]
        )
    assert values == [0.5, 1.0]
    span = next(s for s in spans.get_finished_spans() if s.name == "graphfuse.stage.access")
    assert span.attributes["graphfuse.stage"] == "access"
    assert span.attributes["graphfuse.candidates_in"] == 2
    assert span.attributes["graphfuse.candidates_out"] == 2
    assert {"stage": "access"} in [attrs for attrs, _ in _histogram_points("graphfuse_stage_duration_seconds")]
    assert {"stage": "access"} in [attrs for attrs, _ in _histogram_points("graphfuse_stage_candidates")]
    messages = [r.getMessage() for r in caplog.records if r.name == "graphfuse"]
    assert "stage access start: 2 candidates" in messages
    assert any(m.startswith("stage access end: 2 candidates in ") for m in messages)
    spans.clear()
    with pytest.raises(StageFailed) as info:
        await run_signal_stage(AccessPopularity(missing="error"), Query("q"), ["a"], [{}])
    assert isinstance(info.value.cause, InvalidInput)
    failed = next(s for s in spans.get_finished_spans() if s.name == "graphfuse.stage.access")
    assert failed.status.status_code is StatusCode.ERROR


def _counter_values(name: str) -> dict[tuple[tuple[str, object], ...], int]:
    data = _READER.get_metrics_data()
    out: dict[tuple[tuple[str, object], ...], int] = {}
    for rm in data.resource_metrics if data else []:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                if metric.name == name:
                    for p in metric.data.data_points:
                        out[tuple(sorted((p.attributes or {}).items()))] = int(p.value)
    return out


async def test_result_cache_hits_and_misses_are_counted(spans: InMemorySpanExporter) -> None:
    from graphfuse import ResultCache
    from graphfuse.stores import InMemoryCacheStore, InMemoryGraphStore

    def total(name: str, **attributes: object) -> int:
        return _counter_values(name).get(tuple(sorted(attributes.items())), 0)

    hits, absent = total("graphfuse_result_cache_hits"), total("graphfuse_result_cache_misses", reason="absent")
    pipeline = Pipeline([Seed(), Keep()]).with_result_cache(ResultCache(InMemoryCacheStore(), [InMemoryGraphStore()]))
    for _ in range(3):
        await pipeline.aretrieve("counted", top_k=2)
    await pipeline.aretrieve("counted", top_k=2, cache=False)  # neither a hit nor a miss
    assert total("graphfuse_result_cache_hits") - hits == 2
    assert total("graphfuse_result_cache_misses", reason="absent") - absent == 1
    cache_spans = [s for s in spans.get_finished_spans() if s.name == "graphfuse.result_cache"]
    assert [s.attributes["graphfuse.result_cache.hit"] for s in cache_spans] == [False, True, True]
