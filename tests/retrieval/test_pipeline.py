"""Pipeline: validation, stage failures, deadlines, concurrency, sync use inside an event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

import pytest
from _stage_fakes import WordOverlapReranker
from conftest import World, clock

from graphfuse import (
    Candidate,
    DeadlineExceeded,
    Document,
    EmptyPipeline,
    GraphFuseError,
    InvalidInput,
    NoCandidates,
    Pipeline,
    Query,
    Result,
    RunContext,
    StageFailed,
    deadline,
    presets,
)
from graphfuse.scoring import CallableScorer, ReciprocalRankFusion, WeightedScorer
from graphfuse.stages import Hydrate, SemanticSearch, TemporalDecay


class Emit:
    """Emits fixed candidates and records what it saw."""

    def __init__(self, items: dict[str, dict[str, float]], name: str = "emit") -> None:
        self.name = name
        self.items = items
        self.seen: list[Query] = []

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.seen.append(query)
        return [*candidates, *(Candidate(Document(i, f"text {i}"), s) for i, s in self.items.items())]


class Boom:
    name = "boom"

    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        raise self.error


class Slow:
    name = "slow"

    def __init__(self) -> None:
        self.remaining: list[float | None] = []

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        self.remaining.append(context.remaining())
        await asyncio.sleep(30)
        return list(candidates)


def pipeline_of(items: dict[str, dict[str, float]], **kwargs: object) -> Pipeline:
    return Pipeline([Emit(items)], **kwargs)  # type: ignore[arg-type]


ITEMS = {"a": {"semantic": 0.9}, "b": {"semantic": 0.5, "graph": 1.0}, "c": {"semantic": 0.2}}


async def test_results_ranked_with_contributions() -> None:
    results = await pipeline_of(ITEMS).aretrieve("q")
    assert [r.id for r in results] == ["b", "a", "c"]
    assert results[0].score == pytest.approx(0.3 * 0.5 + 0.25)
    assert dict(results[0].contributions) == {"semantic": pytest.approx(0.15), "graph": 0.25}


async def test_top_k_min_score_and_ties_by_id() -> None:
    p = pipeline_of({"z": {"semantic": 0.5}, "y": {"semantic": 0.5}, "x": {"semantic": 0.1}})
    assert [r.id for r in await p.aretrieve("q", top_k=2)] == ["y", "z"]
    assert [r.id for r in await p.aretrieve("q", min_score=0.1)] == ["y", "z"]


@pytest.mark.parametrize("text", ["", "   ", "\n\t", None, 3])
async def test_empty_or_whitespace_query(text: object) -> None:
    with pytest.raises(InvalidInput, match="query text"):
        await pipeline_of(ITEMS).aretrieve(text)  # type: ignore[arg-type]


@pytest.mark.parametrize("top_k", [0, -1, True, 2.5, "3"])
async def test_bad_top_k(top_k: object) -> None:
    with pytest.raises(InvalidInput, match="top_k"):
        await pipeline_of(ITEMS).aretrieve("q", top_k=top_k)  # type: ignore[arg-type]


@pytest.mark.parametrize("min_score", [float("nan"), float("inf"), "0.5", True])
async def test_bad_min_score(min_score: object) -> None:
    with pytest.raises(InvalidInput, match="min_score"):
        await pipeline_of(ITEMS).aretrieve("q", min_score=min_score)  # type: ignore[arg-type]


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), "1"])
async def test_bad_timeout(timeout: object) -> None:
    with pytest.raises(InvalidInput, match="timeout"):
        await pipeline_of(ITEMS).aretrieve("q", timeout=timeout)  # type: ignore[arg-type]


async def test_options_for_unknown_stage() -> None:
    with pytest.raises(InvalidInput, match="not in this pipeline"):
        await pipeline_of(ITEMS).aretrieve("q", options={"graph": {"depth": 1}})


def test_construction_errors() -> None:
    with pytest.raises(EmptyPipeline):
        Pipeline([])
    with pytest.raises(InvalidInput, match="unique"):
        Pipeline([Emit({}), Emit({})])
    with pytest.raises(InvalidInput, match="not a Stage"):
        Pipeline([object()])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="neither a Scorer nor a callable"):
        Pipeline([Emit({})], scorer=3)  # type: ignore[arg-type]


async def test_stage_failure_names_the_stage_and_chains_the_cause() -> None:
    cause = RuntimeError("disk on fire")
    p = Pipeline([Emit(ITEMS), Boom(cause)])
    with pytest.raises(StageFailed, match="stage 'boom' failed: RuntimeError: disk on fire") as info:
        await p.aretrieve("q")
    assert info.value.stage == "boom"
    assert info.value.__cause__ is cause


async def test_stage_returning_duplicates_or_garbage_fails() -> None:
    class Dup:
        name = "dup"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[object]:
            return [Candidate(Document("a")), Candidate(Document("a"))]

    with pytest.raises(StageFailed, match="twice"):
        await Pipeline([Dup()]).aretrieve("q")  # type: ignore[list-item]


async def test_deadline_exceeded_from_a_stage_is_not_wrapped() -> None:
    with pytest.raises(DeadlineExceeded, match="slow provider"):
        await Pipeline([Boom(DeadlineExceeded("slow provider"))]).aretrieve("q")
    with pytest.raises(StageFailed):
        await Pipeline([Boom(TimeoutError("socket"))]).aretrieve("q")


async def test_timeout_raises_deadline_exceeded() -> None:
    slow = Slow()
    with pytest.raises(DeadlineExceeded, match=r"within 0\.5 s"):
        await Pipeline([slow]).aretrieve("q", timeout=0.5)
    # The stage saw the deadline (how much was left depends on the machine's load).
    assert len(slow.remaining) == 1
    assert slow.remaining[0] is not None
    assert slow.remaining[0] <= 0.5


async def test_outer_deadline_wins() -> None:
    slow = Slow()
    with deadline(0.5), pytest.raises(DeadlineExceeded):
        await Pipeline([slow]).aretrieve("q", timeout=60)
    assert slow.remaining[0] is not None
    assert slow.remaining[0] <= 0.5


def test_sync_timeout() -> None:
    with pytest.raises(DeadlineExceeded):
        Pipeline([Slow()]).retrieve("q", timeout=0.2)


async def test_cancelling_a_run_cancels_the_stage() -> None:
    task = asyncio.ensure_future(Pipeline([Slow()]).aretrieve("q"))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_require_results() -> None:
    with pytest.raises(NoCandidates):
        await Pipeline([Emit({})], require_results=True).aretrieve("q")
    assert await Pipeline([Emit({})]).aretrieve("q") == []


async def test_scorer_must_return_one_score_per_candidate() -> None:
    class Short:
        def score(self, candidates: Sequence[Candidate]) -> list[float]:
            return []

        def explain(self, candidates: Sequence[Candidate]) -> list[dict[str, float]]:
            return []

    with pytest.raises(GraphFuseError, match="returned 0 scores for 3 candidates"):
        await pipeline_of(ITEMS, scorer=Short()).aretrieve("q")


async def test_callable_scorer_and_with_scorer() -> None:
    p = pipeline_of(ITEMS, scorer=lambda s: s.get("semantic", 0.0))
    assert isinstance(p.scorer, CallableScorer)
    assert [r.id for r in await p.aretrieve("q")] == ["a", "b", "c"]
    rrf = p.with_scorer(ReciprocalRankFusion({"graph": 1.0}))
    assert (await rrf.aretrieve("q"))[0].id == "b"
    assert "emit" in repr(rrf)


async def test_per_call_filter_is_anded_with_the_query_filter() -> None:
    emit = Emit(ITEMS)
    await Pipeline([emit]).aretrieve(Query.of("q", filter={"tenant": "acme"}), filter={"lang": "en"})
    assert emit.seen[0].filter is not None
    assert emit.seen[0].filter.to_dict() == {"tenant": {"$eq": "acme"}, "lang": {"$eq": "en"}}


async def test_filter_reaches_every_store_stage(world: World) -> None:
    p = presets.standard(
        world.graph,
        world.vectors,
        world.embedder,
        WordOverlapReranker(),
        semantic={"min_score": 0.5},
        temporal={"clock": clock},
    )
    unfiltered = {r.id for r in await p.aretrieve("apple orchard harvest", top_k=10)}
    assert "x" in unfiltered
    results = await p.aretrieve("apple orchard harvest", top_k=10, filter={"tenant": "acme"})
    assert results
    assert {r.document.metadata["tenant"] for r in results} == {"acme"}
    # Semantic finds only a; y is two hops from a, but only through globex's x.
    assert {r.id for r in results} == {"a", "b", "c"}


def _answer(results: Sequence[Result]) -> list[tuple[str, float]]:
    return [(r.id, round(r.score, 12)) for r in results]


async def test_concurrent_tasks_and_threads_get_the_same_answers(world: World) -> None:
    p = presets.standard(world.graph, world.vectors, world.embedder, WordOverlapReranker(), temporal={"clock": clock})
    queries = ["apple harvest", "banana coast", "cherry blossom spring", "date palm desert"]
    expected = {q: _answer(await p.aretrieve(q, top_k=4)) for q in queries}
    assert all(expected.values())

    thread_answers: dict[int, list[tuple[str, float]]] = {}
    errors: list[BaseException] = []

    def in_thread(i: int) -> None:
        try:
            thread_answers[i] = _answer(p.retrieve(queries[i % 4], top_k=4))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=in_thread, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    task_answers = await asyncio.gather(*(p.aretrieve(queries[i % 4], top_k=4) for i in range(20)))
    for t in threads:
        await asyncio.to_thread(t.join)
    assert errors == []
    assert [_answer(a) for a in task_answers] == [expected[queries[i % 4]] for i in range(20)]
    assert thread_answers == {i: expected[queries[i % 4]] for i in range(8)}


async def test_retrieve_inside_a_running_event_loop(world: World) -> None:
    p = Pipeline([SemanticSearch(world.vectors, world.embedder), Hydrate(world.graph), TemporalDecay(clock=clock)])
    asynchronous = await p.aretrieve("apple harvest")
    synchronous = p.retrieve("apple harvest")  # called from a coroutine on a running loop
    assert _answer(synchronous) == _answer(asynchronous)
    assert synchronous[0].document.content == "apple orchard harvest in autumn"


def test_retrieve_without_a_loop(world: World) -> None:
    p = Pipeline([SemanticSearch(world.vectors, world.embedder)], WeightedScorer({"semantic": 1.0}))
    assert p.retrieve("apple harvest", top_k=1)[0].id == "a"


async def test_stages_share_the_run_context_but_not_across_runs() -> None:
    class Counter:
        name = "counter"

        async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
            context.values["n"] = context.values.get("n", 0) + 1
            return [Candidate(Document("a"), {"semantic": context.values["n"] / 10})]

    class Reader(Counter):
        name = "reader"

    p = Pipeline([Counter(), Reader()])
    for _ in range(2):
        assert (await p.aretrieve("q"))[0].signals["semantic"] == 0.2
