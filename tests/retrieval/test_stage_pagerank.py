"""PageRank: store scores as the signal, ``default`` for ids without one, store output validated."""

from __future__ import annotations

import pytest
from _stage_fakes import FakeGraphStore, FixedPageRank
from conftest import World

from graphfuse import Candidate, Document, InvalidInput, Query
from graphfuse.hosts import StageRunContext
from graphfuse.stages import PageRank


def bare(*ids: str) -> list[Candidate]:
    return [Candidate(Document(i)) for i in ids]


async def pagerank(stage: PageRank, candidates: list[Candidate]) -> dict[str, float]:
    return {c.id: c.signals["pagerank"] for c in await stage.run(Query("q"), candidates, StageRunContext())}


async def test_scores_and_default() -> None:
    store = FixedPageRank({"a": 1.0, "b": 0.25})
    assert await pagerank(PageRank(store), bare("a", "b", "lonely")) == {"a": 1.0, "b": 0.25, "lonely": 0.5}
    assert (await pagerank(PageRank(store, default=0.0), bare("lonely")))["lonely"] == 0.0


async def test_real_store_scores_are_normalised(world: World) -> None:
    got = await pagerank(PageRank(world.graph), bare("a", "b", "c", "d", "x", "y"))
    assert all(0.0 <= v <= 1.0 for v in got.values())
    # The store normalises its PageRank so that the most central document gets 1.0.
    assert max(got.values()) == pytest.approx(1.0)
    assert len(set(got.values())) > 1


@pytest.mark.parametrize("bad", [1.5, -0.1, float("nan"), True, "0.3"])
async def test_store_score_outside_unit_interval_is_invalid_input(bad: object) -> None:
    store = FixedPageRank({"a": bad})
    with pytest.raises(InvalidInput, match="PageRank"):
        await pagerank(PageRank(store), bare("a"))


async def test_no_candidates_no_call() -> None:
    store = FixedPageRank({})
    assert await pagerank(PageRank(store), []) == {}
    assert store.calls == 0


@pytest.mark.parametrize("default", [-0.1, 1.01, float("nan"), None, True])
def test_default_outside_unit_interval_is_invalid_input(default: object) -> None:
    with pytest.raises(InvalidInput, match="default"):
        PageRank(FakeGraphStore(), default=default)  # type: ignore[arg-type]


def test_store_must_have_pagerank() -> None:
    with pytest.raises(InvalidInput, match="graph_store"):
        PageRank(object())  # type: ignore[arg-type]
