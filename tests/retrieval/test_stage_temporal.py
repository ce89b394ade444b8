"""TemporalDecay: 0.5 ** (age / half_life), floor, future and missing timestamps, injectable clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from conftest import DAY, NOW, World, clock, corpus_documents

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query
from graphfuse.hosts import StageRunContext
from graphfuse.stages import Hydrate, SemanticSearch, TemporalDecay


def corpus() -> list[Candidate]:
    return [Candidate(d, {"semantic": 0.0}) for d in corpus_documents()]


async def temporal(stage: TemporalDecay, candidates: list[Candidate], query: Query | None = None) -> dict[str, float]:
    out = await stage.run(query or Query("q"), candidates, StageRunContext())
    return {c.id: c.signals["temporal"] for c in out}


async def test_exact_decay_values() -> None:
    got = await temporal(TemporalDecay(clock=clock), corpus())
    assert got["a"] == pytest.approx(0.5)  # one half-life (90 days)
    assert got["b"] == pytest.approx(0.25)  # two half-lives
    assert got["x"] == 1.0  # age 0
    assert got["c"] == 1.0  # created in the future: age 0
    assert got["y"] == pytest.approx(0.5 ** (1 / 90))
    assert got["d"] == 0.5  # no timestamp: neutral


async def test_half_life_and_per_call_half_life() -> None:
    assert (await temporal(TemporalDecay(half_life=180 * DAY, clock=clock), corpus()))["b"] == pytest.approx(0.5)
    q = Query("q", options={"temporal": {"half_life": timedelta(days=45)}})
    assert (await temporal(TemporalDecay(clock=clock), corpus(), q))["a"] == pytest.approx(0.25)


async def test_floor_lifts_the_decay_only() -> None:
    got = await temporal(TemporalDecay(clock=clock, min_score=0.3, missing="zero"), corpus())
    assert got["a"] == pytest.approx(0.5)
    assert got["b"] == pytest.approx(0.3)
    assert got["d"] == 0.0  # the "zero" policy is not lifted by the floor
    out = await TemporalDecay(clock=clock, min_score=0.3).run(Query("q"), corpus(), StageRunContext())
    assert all(c.signals["semantic"] == 0.0 for c in out)  # a 0.0 elsewhere stays 0.0


async def test_missing_timestamp_policies() -> None:
    assert (await temporal(TemporalDecay(clock=clock, missing="zero"), corpus()))["d"] == 0.0
    with pytest.raises(InvalidInput, match="'d' has no created_at"):
        await temporal(TemporalDecay(clock=clock, missing="error"), corpus())


async def test_updated_at_timestamp_without_fallback() -> None:
    docs = [
        Candidate(Document("u", "t", created_at=NOW - 900 * DAY, updated_at=NOW - 90 * DAY)),
        Candidate(Document("n", "t", created_at=NOW)),
    ]
    got = await temporal(TemporalDecay(clock=clock, timestamp="updated_at"), docs)
    assert got == {"u": pytest.approx(0.5), "n": 0.5}


async def test_naive_clock_is_utc_and_default_clock_is_now() -> None:
    naive = await temporal(TemporalDecay(clock=lambda: NOW.replace(tzinfo=None)), corpus())
    assert naive["a"] == pytest.approx(0.5)
    fresh = Candidate(Document("f", "t", created_at=datetime.now(timezone.utc)))
    assert (await temporal(TemporalDecay(), [fresh]))["f"] > 0.999


async def test_clock_returning_garbage_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="clock"):
        await temporal(TemporalDecay(clock=lambda: "now"), corpus())  # type: ignore[arg-type, return-value]


async def test_id_only_candidates_need_hydrate() -> None:
    with pytest.raises(InvalidInput, match="hydrate first"):
        await temporal(TemporalDecay(clock=clock), [Candidate(Document("a"))])


async def test_in_a_pipeline_with_real_backends(world: World) -> None:
    pipeline = Pipeline(
        [SemanticSearch(world.vectors, world.embedder), Hydrate(world.graph), TemporalDecay(clock=clock)]
    )
    results = await pipeline.aretrieve("apple harvest", top_k=10)
    by_id = {r.id: r for r in results}
    assert by_id["a"].signals["temporal"] == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"half_life": timedelta(0)}, "half_life"),
        ({"half_life": -DAY}, "half_life"),
        ({"half_life": 90}, "half_life"),
        ({"min_score": 1.1}, "min_score"),
        ({"min_score": -0.1}, "min_score"),
        ({"clock": "now"}, "clock"),
        ({"timestamp": "published_at"}, "timestamp"),
        ({"missing": "skip"}, "missing"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        TemporalDecay(**kwargs)  # type: ignore[arg-type]


async def test_per_call_half_life_validated_before_the_run() -> None:
    stage = TemporalDecay(clock=clock)
    with pytest.raises(InvalidInput, match="'temporal' option 'half_life'"):
        stage.check_options({"half_life": timedelta(0)})
