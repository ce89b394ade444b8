"""graphfuse.records: grouping, duplicates, signal and timestamp rules, stages and fusion over host records."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from graphfuse import Document, InvalidInput, NotFound, Query, Relation, StageFailed, parse_timestamp, run_sync
from graphfuse.hosts import SignalInput
from graphfuse.records import (
    Batch,
    Hit,
    Record,
    RecordReader,
    SourceFusion,
    StageChain,
    check_known,
    fuse,
    merge_hits,
    run_stages,
    score_as_signal,
)
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import AccessPopularity, GraphExpansion, NamedStage, TemporalDecay
from graphfuse.stores import InMemoryGraphStore

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def reader(**options: Any) -> RecordReader[dict[str, Any]]:
    return RecordReader(
        id=lambda h: h["id"],
        content=lambda h: h.get("text", ""),
        metadata=lambda h: h.get("meta", {}),
        signals=lambda h: h.get("signals"),
        score=lambda h: h.get("score"),
        **options,
    )


def test_an_empty_batch_gives_nothing_everywhere() -> None:
    batch = reader().read([])
    assert len(batch) == 0
    assert not batch
    assert batch.ids == []
    assert run_sync(run_stages([AccessPopularity()], Query("q"), batch)) == []
    assert fuse(batch.hits(), WeightedScorer()) == []


def test_duplicate_ids_with_conflicting_signals_merge_by_largest_value() -> None:
    batch = reader().read(
        [
            {"id": "a", "text": "first", "meta": {"k": 1}, "signals": {"temporal": 0.2, "graph": 0.9}},
            {"id": "b", "text": "other", "score": 0.3},
            {"id": "a", "text": "second", "meta": {"k": 2}, "signals": {"temporal": 0.8, "graph": 0.1}},
            {"id": "a", "text": "third", "score": 0.5},  # no signals yet: its score as semantic
        ]
    )
    assert batch.ids == ["a", "b"]
    a = batch.get("a")
    assert a is not None
    assert dict(a.signals) == {"temporal": 0.8, "graph": 0.9, "semantic": 0.5}
    assert a.document.content == "first"
    assert dict(a.document.metadata) == {"k": 1}
    assert [h["text"] for h in a.items] == ["first", "second", "third"]


@pytest.mark.parametrize("score", [1.5, float("nan"), float("inf"), "0.5", True])
def test_a_host_score_that_cannot_be_a_signal_is_refused(score: object) -> None:
    with pytest.raises(InvalidInput, match="record 'a' has score"):
        reader().read([{"id": "a", "score": score}])


def test_a_negative_host_score_is_zero_and_a_missing_one_no_signal() -> None:
    batch = reader().read([{"id": "a", "score": -0.2}, {"id": "b", "score": None}])
    assert [dict(r.signals) for r in batch.records] == [{"semantic": 0.0}, {}]
    assert score_as_signal(0.0, "semantic", "x") == 0.0  # a 0.0 stays 0.0
    assert dict(reader(score_signal=None).read([{"id": "a", "score": 7.0}]).records[0].signals) == {}


@pytest.mark.parametrize(
    "signals", [{"temporal": 1.2}, {"temporal": -0.1}, {"temporal": float("nan")}, {"bad name": 0.5}]
)
def test_a_stored_signal_outside_the_rules_is_refused(signals: dict[str, float]) -> None:
    with pytest.raises(InvalidInput, match="signal"):
        reader().read([{"id": "a", "signals": signals}])


def test_stored_signals_must_be_a_mapping() -> None:
    with pytest.raises(InvalidInput, match="record 'a': signals must be a mapping"):
        reader().read([{"id": "a", "signals": [0.5]}])


@pytest.mark.parametrize("bad", ["", "  ", None, 7, "x" * 513])
def test_a_bad_id_is_refused(bad: object) -> None:
    with pytest.raises(InvalidInput, match="id"):
        reader().read([{"id": bad}])


def test_an_object_without_text_is_refused_and_empty_text_is_text() -> None:
    with pytest.raises(InvalidInput, match="record 'a' has no text"):
        reader().read([{"id": "a", "text": None}])
    assert reader().read([{"id": "a", "text": ""}]).records[0].document.content == ""


def test_metadata_values_that_are_not_json_pass_through_and_a_stage_checks_what_it_reads() -> None:
    marker = object()
    hits = [{"id": "a", "meta": {"tags": {"x", "y"}, "obj": marker, "access_count": 3}}]
    out = run_sync(run_stages([AccessPopularity()], Query("q"), reader().read(hits)))
    assert out[0].document.metadata["obj"] is marker
    assert out[0].items[0] is hits[0]
    with pytest.raises(StageFailed, match="access"):
        run_sync(
            run_stages([AccessPopularity()], Query("q"), reader().read([{"id": "a", "meta": {"access_count": {1}}}]))
        )
    with pytest.raises(InvalidInput, match="metadata must be a mapping"):
        RecordReader(id=lambda h: "a", content=lambda h: "", metadata=lambda h: [1]).read([{}])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-01-01T00:00:00Z", NOW),
        ("2026-01-01T00:00:00z", NOW),
        ("2026-01-01T01:00:00+01:00", NOW),
        ("2026-01-01", NOW),  # no offset: UTC
        (datetime(2026, 1, 1), NOW),  # naive: UTC
        (datetime(2026, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))), NOW),
        (NOW.timestamp(), NOW),
        (0, datetime(1970, 1, 1, tzinfo=timezone.utc)),
        (None, None),
    ],
)
def test_timestamps_accepted(value: object, expected: datetime | None) -> None:
    assert parse_timestamp(value) == expected
    meta = {} if value is None else {"created_at": value}
    assert reader().read([{"id": "a", "meta": meta}]).records[0].document.created_at == expected


@pytest.mark.parametrize(
    "value", [1e20, -1, -0.5, float("nan"), float("inf"), 1.7e15, True, "yesterday", "2026-01-01Zz", [2026]]
)
def test_timestamps_refused_with_the_record_named(value: object) -> None:
    with pytest.raises(InvalidInput, match="created_at"):
        parse_timestamp(value, "created_at")
    with pytest.raises(InvalidInput, match="record 'a' metadata 'created_at'"):
        reader().read([{"id": "a", "meta": {"created_at": value}}])


def test_rank_signal_for_objects_without_signals() -> None:
    hits = [{"id": "a"}, {"id": "b", "signals": {"graph": 0.5}}, {"id": "c"}, {"id": "a"}]
    batch = reader(rank_signal="retrieval").read(hits)
    assert [dict(r.signals) for r in batch.records] == [{"retrieval": 1.0}, {"graph": 0.5}, {"retrieval": 0.5}]
    sources = RecordReader(id=lambda h: h["id"], content=lambda h: "", metadata=lambda h: {}, rank_signal="bm25")
    assert [dict(r.signals) for r in sources.read(hits).records] == [{"bm25": 1.0}, {"bm25": 2 / 3}, {"bm25": 1 / 3}]


async def test_stages_run_as_a_pipeline_runs_them_and_hits_name_their_objects() -> None:
    store = InMemoryGraphStore()
    await store.store_documents([Document("a", "alpha"), Document("b", "beta"), Document("graphfuse:entity:x", "x")])
    await store.create_relations([Relation("a", "graphfuse:entity:x"), Relation("graphfuse:entity:x", "b")])
    hits = [{"id": "a", "text": "alpha", "score": 0.8, "meta": {"created_at": NOW.isoformat()}}]
    batch = reader().read(hits)
    out = await run_stages([GraphExpansion(store), TemporalDecay(clock=lambda: NOW)], Query("q"), batch)
    assert [h.id for h in out] == ["a", "b"]  # the entity node is walked through, not returned
    assert out[0].items == (hits[0],)
    assert out[1].items == ()
    assert dict(out[0].signals) == {"semantic": 0.8, "graph": 0.8, "temporal": 1.0}
    assert out[1].signals["graph"] == pytest.approx(0.8 * 0.25)
    ranked = fuse(out, WeightedScorer({"graph": 1.0}), top_n=1)
    assert [(h.id, h.score) for h in ranked] == [("a", 0.8)]
    with pytest.raises(NotFound, match="'zz'"):
        await check_known(store, ["a", "zz"], "test")
    await check_known(store, [], "test")


def _signature(hits: list[Hit[Any]]) -> list[tuple[str, dict[str, float], tuple[Any, ...]]]:
    return [(h.id, dict(h.signals), h.items) for h in hits]


async def test_a_stage_chain_gives_what_the_stages_give_one_after_another() -> None:
    store = InMemoryGraphStore()
    await store.store_documents([Document("a", "alpha"), Document("b", "beta"), Document("c", "gamma")])
    await store.create_relations([Relation("a", "b"), Relation("b", "c")])
    items = [
        {"id": "a", "text": "alpha", "score": 0.8, "meta": {"created_at": NOW.isoformat(), "n": 4}},
        {"id": "b", "text": "beta", "meta": {"n": 1}},
    ]
    steps = [
        (TemporalDecay(clock=lambda: NOW), Query("q")),
        (AccessPopularity(key="n"), Query("q")),
        (GraphExpansion(store), Query("other")),
        (_ValuesOnly(), Query("third")),  # own query: with the expansion in one call, its run would be needed
    ]
    expected = reader().read(items).hits()
    stepwise = []
    for stage, query in steps:  # each stage on the records the one before gave
        expected = await run_stages([stage], query, Batch(Record(h.document, h.signals, h.items) for h in expected))
        stepwise.append(expected)
    chain = StageChain(reader().read(items))
    for stage, query in steps[:2]:
        chain.add(stage, query)
    assert _signature(await chain.hits()) == _signature(stepwise[1])
    for stage, query in steps[2:]:
        chain.add(stage, query)
    got = await chain.hits()
    assert _signature(got) == _signature(stepwise[3])
    assert [h.id for h in got] == ["a", "b", "c"]
    assert got[2].items == ()  # c: added by the expansion
    assert _signature(await chain.hits()) == _signature(got)  # nothing queued: the same hits
    assert _signature(await StageChain(reader().read(items)).hits()) == _signature(reader().read(items).hits())


async def test_a_stage_chain_runs_consecutive_stages_with_one_query_as_one_call() -> None:
    items = [{"id": "a", "meta": {"n": 3}}]
    apart = StageChain(reader().read(items))
    apart.add(_ValuesOnly(), Query("q"))
    apart.add(GraphExpansion(InMemoryGraphStore()), Query("other"))
    assert [dict(h.signals) for h in await apart.hits()] == [{"fixed": 0.3, "graph": 1.0}]  # a seed keeps its strength
    together = StageChain(reader().read(items))
    together.add(_ValuesOnly(), Query("q"))
    together.add(GraphExpansion(InMemoryGraphStore()), Query("q"))
    with pytest.raises(StageFailed, match="run called"):  # one run_stages call: every stage's own run
        await together.hits()
    with pytest.raises(InvalidInput, match="StageChain runs over a Batch"):
        StageChain(items)  # type: ignore[arg-type]


def test_fuse_orders_like_a_pipeline_ties_by_id_and_honours_min_score() -> None:
    batch = reader().read([{"id": "b", "score": 0.5}, {"id": "a", "score": 0.5}, {"id": "c", "score": 0.1}])
    ranked = fuse(batch.hits(), WeightedScorer({"semantic": 1.0}), min_score=0.2)
    assert [(h.id, h.score, dict(h.contributions)) for h in ranked] == [
        ("a", 0.5, {"semantic": 0.5}),
        ("b", 0.5, {"semantic": 0.5}),
    ]
    with pytest.raises(InvalidInput, match="top_n"):
        fuse(batch.hits(), WeightedScorer(), top_n=0)


class _ValuesOnly(NamedStage):
    """A signal stage whose ``run`` must not be needed: the records layer computes its values from the records."""

    signal = "fixed"
    signal_input = SignalInput("metadata", "n")

    def __init__(self) -> None:
        self._set_names("fixed", "fixed")

    async def signal_values(self, query: Query, ids: Any, values: Any, context: Any = None) -> list[float]:
        return [float(v.get("n", 0)) / 10 for v in values]

    async def run(self, query: Query, candidates: Any, context: Any) -> list[Any]:
        raise AssertionError("run called: the records layer built candidates for a signal stage")


async def test_signal_stages_run_on_the_records_without_candidates() -> None:
    items = [{"id": "b", "score": 0.5, "meta": {"n": 3}}, {"id": "a", "meta": {"n": 7}}, {"id": "b", "score": 0.9}]
    batch = reader().read(items)
    out = await run_stages([_ValuesOnly(), AccessPopularity(key="n")], Query("q"), batch)
    assert [h.id for h in out] == ["b", "a"]
    assert out[0].items == (items[0], items[2])
    assert dict(out[0].signals) == {"semantic": 0.9, "fixed": 0.3, "access": 3 / 7}
    assert dict(out[1].signals) == {"fixed": 0.7, "access": 1.0}
    # A signal stage among others: every stage's own run, as a pipeline runs it.
    with pytest.raises(StageFailed, match="run called"):
        await run_stages([_ValuesOnly(), GraphExpansion(InMemoryGraphStore())], Query("q"), batch)


class _SignalsOnly(WeightedScorer):
    def score(self, candidates: Any) -> list[float]:
        raise AssertionError("score called: fuse built candidates for a signal scorer")

    def explain(self, candidates: Any) -> list[dict[str, float]]:
        raise AssertionError("explain called")

    def score_signals(self, ids: Any, signals: Any) -> list[float]:
        return super().score_signals(ids, signals)

    def explain_signals(self, ids: Any, signals: Any) -> list[dict[str, float]]:
        return super().explain_signals(ids, signals)


class _OwnScore(WeightedScorer):
    def score(self, candidates: Any) -> list[float]:
        return [1.0 - s for s in super().score(candidates)]


def test_fuse_scores_signals_without_candidates_and_honours_an_overridden_score() -> None:
    batch = reader().read([{"id": "a", "score": 0.2}, {"id": "b", "score": 0.6}])
    ranked = fuse(batch.hits(), _SignalsOnly({"semantic": 1.0}))
    assert [(h.id, h.score, dict(h.contributions)) for h in ranked] == [
        ("b", 0.6, {"semantic": 0.6}),
        ("a", 0.2, {"semantic": 0.2}),
    ]
    assert [h.id for h in fuse(batch.hits(), _OwnScore({"semantic": 1.0}))] == ["a", "b"]
    # Hits a host built itself are checked as candidates would be, on either path.
    for scorer in (WeightedScorer(), _OwnScore()):
        with pytest.raises(InvalidInput, match="'semantic'"):
            fuse([Hit(Document("a", "x"), {"semantic": 1.5})], scorer)
        with pytest.raises(InvalidInput, match="signal name"):
            fuse([Hit(Document("a", "x"), {"bad name": 0.5})], scorer)


def test_a_batch_holds_each_id_once_and_hits_build_candidates() -> None:
    record = Record(Document("a", "x"), {"semantic": 0.5}, ())
    with pytest.raises(InvalidInput, match="each id once"):
        Batch([record, record])
    assert Hit(Document("a", "x"), {"semantic": 0.5}).candidate().signals == {"semantic": 0.5}
    assert Batch([record]).candidates()[0].id == "a"


def test_the_public_names_are_complete_and_sorted() -> None:
    import inspect

    import graphfuse.records as records

    defined = {
        name
        for name, value in vars(records).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == records.__name__
    }
    assert set(records.__all__) == defined
    assert list(records.__all__) == sorted(records.__all__)


def test_source_fusion_rrf_honours_the_weights_and_normalises() -> None:
    fusion = SourceFusion(["bm25", "vector"], {"bm25": 1.0, "vector": 3.0}, k=1)
    found = {"bm25": [("a", None), ("b", None)], "vector": [("b", None), ("a", None), ("b", None)]}
    fused = fusion.fuse(found)
    # b: 1/(1+2) + 3/(1+1) = 1.8333; a: 1/2 + 3/3 = 1.5; the largest possible value: 4/2 = 2.
    assert [key for key, _ in fused] == ["b", "a"]
    assert fused[0][1] == pytest.approx(1.8333333 / 2)
    assert fused[1][1] == pytest.approx(0.75)
    assert SourceFusion(["x", "y"]).fuse({"x": [("a", None)], "y": [("a", None)]}) == [("a", 1.0)]
    unnormalised = SourceFusion(["x"], normalize=False, k=1).fuse({"x": [("a", None), ("a", None), ("b", None)]})
    assert unnormalised == [("a", 0.5), ("b", pytest.approx(1 / 3))]  # "a" listed twice counts once
    zero = SourceFusion(["x", "y"], [1.0, 0.0], k=1).fuse({"x": [("a", None)], "y": [("b", None)]})
    assert zero == [("a", 1.0)]  # a zero-weight source takes no part
    assert [key for key, _ in SourceFusion(["x"]).fuse({"x": [("b", 1), ("a", 1), ("c", 1)]}, top_n=2)] == ["b", "a"]


def test_source_fusion_weighted_reads_scores_as_signals() -> None:
    fusion = SourceFusion(["x", "y"], mode="weighted")
    fused = fusion.fuse({"x": [("a", 0.8), ("b", -0.2), ("a", 0.4)], "y": [("b", 0.6)]})
    assert fused == [("a", pytest.approx(0.4)), ("b", pytest.approx(0.3))]  # best score per source; below 0 is 0
    with pytest.raises(InvalidInput, match=r"node 'n2' has score 1.5 > 1, which cannot be the 'y score' signal"):
        fusion.fuse({"x": [("a", 0.5)], "y": [("a", 0.5), ("b", 1.5)]}, label=lambda s, i: f"node 'n{i + 1}'")
    with pytest.raises(InvalidInput, match=r"source 'x' hit 0 has score None"):
        fusion.fuse({"x": [("a", None)]})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: SourceFusion(["a"], {"b": 1.0}, what="retriever"), r"weights name unknown retrievers \['b'\]"),
        (lambda: SourceFusion(["a", "b"], [1.0]), "got 1 weights for 2 sources"),
        (lambda: SourceFusion(["a"], [-1.0]), "weight for source 'a' must be a finite number >= 0"),
        (lambda: SourceFusion(["a"], [float("nan")]), "must be a finite number"),
        (lambda: SourceFusion(["a"], [True]), "must be a finite number"),
        (lambda: SourceFusion(["a", "b"], [0, 0]), "at least one source weight must be greater than zero"),
        (lambda: SourceFusion(["a"], "ab"), "weights must be a mapping, a sequence or None"),
        (lambda: SourceFusion(["a"], mode="max"), "mode must be one of 'rrf', 'weighted'"),
        (lambda: SourceFusion(["a"], k=0), "k must be an integer >= 1"),
        (lambda: SourceFusion(["a"], normalize=1), "normalize must be True or False"),  # type: ignore[arg-type]
        (lambda: SourceFusion(["a"]).fuse({}, top_n=0), "top_n must be an integer >= 1"),
    ],
)
def test_source_fusion_bad_settings_are_named(make: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        make()


def test_merge_hits_keeps_one_hit_per_id_across_sources() -> None:
    bm25 = RecordReader(id=lambda h: h["id"], content=lambda h: h["text"], metadata=lambda h: {}, rank_signal="bm25")
    graph = RecordReader(id=lambda h: h["id"], content=lambda h: h["text"], metadata=lambda h: {}, rank_signal="graph")
    first = {"id": "a", "text": "from bm25"}
    again = {"id": "a", "text": "from the graph"}
    merged = merge_hits([bm25.read([first, {"id": "b", "text": "b"}]), graph.read([{"id": "c", "text": "c"}, again])])
    assert [h.id for h in merged] == ["a", "b", "c"]
    assert merged[0].document.content == "from bm25"
    assert merged[0].items == (first,)  # the first source's host object
    assert merged[0].signals == {"bm25": 1.0, "graph": 0.5}
    assert merge_hits([]) == []
