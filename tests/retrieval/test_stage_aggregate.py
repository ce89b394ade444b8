"""ParentAggregation: chunks folded into their document, reduce and keep modes, validation, multihop no-op."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker, TokenChunker
from graphfuse.multihop import (
    MULTIHOP_WEIGHTS,
    BM25Index,
    BM25Search,
    BridgeSearch,
    EntitySeeds,
    PersonalizedPageRank,
    multihop,
)
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import Hydrate, ParentAggregation, SemanticSearch
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore


def chunk(doc: str, n: int, **signals: float) -> Candidate:
    return Candidate(Document(f"{doc}#{n}", f"{doc} part {n}", {"parent_id": doc, "chunk_index": n}), signals)


def doc(doc_id: str, **signals: float) -> Candidate:
    return Candidate(Document(doc_id, f"{doc_id} text", {"title": doc_id}), signals)


async def run(stage: ParentAggregation, candidates: Sequence[Candidate], **options: Any) -> list[Candidate]:
    query = Query("q", options={stage.name: options} if options else {})
    return await stage.run(query, candidates, StageRunContext())


def summary(candidates: Sequence[Candidate]) -> list[tuple[str, dict[str, float]]]:
    return [(c.id, dict(c.signals)) for c in candidates]


async def test_chunks_and_their_parent_become_one_candidate_in_place() -> None:
    cands = [
        doc("x", semantic=0.3),
        chunk("a", 1, semantic=0.8),
        doc("y", bm25=0.5),
        chunk("a", 0, semantic=0.6, bm25=0.2),
        doc("a", entity=1.0),
        chunk("b", 0, semantic=0.4),
    ]
    out = await run(ParentAggregation(), cands)
    assert summary(out) == [
        ("x", {"semantic": 0.3}),
        ("a", {"semantic": 0.8, "bm25": 0.2, "entity": 1.0}),
        ("y", {"bm25": 0.5}),
        ("b", {"semantic": 0.4}),
    ]
    assert out[0] is cands[0]
    assert out[2] is cands[2]
    assert out[1].document is cands[4].document  # the parent's own (hydrated) document
    assert out[3].document == Document("b")  # parent not among the candidates: id only
    assert not out[3].document.is_hydrated


@pytest.mark.parametrize(
    ("reduce", "expected"),
    [
        ("max", {"semantic": 0.7, "entity": 1.0, "bm25": 0.4}),
        ("sum", {"semantic": 1.0, "entity": 1.0, "bm25": 0.6}),  # 0.7 + 0.5 capped at 1.0
        ("mean", {"semantic": 0.6, "entity": 1.0, "bm25": 0.3}),  # over the members carrying it
    ],
)
async def test_reduce_modes(reduce: str, expected: Mapping[str, float]) -> None:
    cands = [chunk("a", 0, semantic=0.7, bm25=0.2), chunk("a", 1, semantic=0.5, bm25=0.4), doc("a", entity=1.0)]
    (got,) = await run(ParentAggregation(reduce=reduce), cands)
    assert got.id == "a"
    assert got.signals == pytest.approx(expected)
    (again,) = await run(ParentAggregation(), cands, reduce=reduce)  # the same as a per-call option
    assert again.signals == pytest.approx(expected)


async def test_keep_best_chunk_takes_the_chunk_with_the_largest_own_signal_sum() -> None:
    cands = [
        chunk("a", 0, semantic=0.9),
        chunk("a", 1, semantic=0.6, bm25=0.5),  # 1.1: the best chunk
        chunk("a", 2, semantic=0.5, bm25=0.6),  # 1.1 too, but later
        doc("a", entity=1.0),
        doc("z"),
    ]
    out = await run(ParentAggregation(keep="best_chunk"), cands)
    assert summary(out) == [("a#1", {"semantic": 0.9, "bm25": 0.6, "entity": 1.0}), ("z", {})]
    assert out[0].document is cands[1].document
    per_call = await run(ParentAggregation(), cands, keep="best_chunk")
    assert summary(per_call) == summary(out)


async def test_ids_stay_unique_and_unkeyed_input_is_returned_as_is() -> None:
    cands = [chunk("a", 0, semantic=0.2), doc("b", semantic=0.1), chunk("c", 0), chunk("a", 1), doc("a"), doc("c")]
    for keep in ("parent", "best_chunk"):
        out = await run(ParentAggregation(keep=keep), cands)
        ids = [c.id for c in out]
        assert len(ids) == len(set(ids)) == 3
    plain = [doc("p", semantic=0.5), doc("q", bm25=0.5)]
    assert await run(ParentAggregation(), plain) == plain
    assert await run(ParentAggregation(), []) == []


async def test_another_key_and_a_self_referencing_parent() -> None:
    cands = [
        Candidate(Document("s1", "t", {"section_of": "page"}), {"semantic": 0.4}),
        Candidate(Document("page", "t", {"section_of": "page"}), {"entity": 1.0}),  # names itself: the parent
        chunk("a", 0, semantic=0.9),  # parent_id is not the key here
    ]
    out = await run(ParentAggregation(key="section_of"), cands)
    assert summary(out) == [("page", {"semantic": 0.4, "entity": 1.0}), ("a#0", {"semantic": 0.9})]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"key": ""}, "key"),
        ({"key": 3}, "key"),
        ({"reduce": "min"}, "reduce"),
        ({"reduce": None}, "reduce"),
        ({"keep": "chunk"}, "keep"),
        ({"name": "bad name"}, "name"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        ParentAggregation(**kwargs)


async def test_bad_options_and_inputs() -> None:
    stage = ParentAggregation()
    cands = [chunk("a", 0, semantic=0.5)]
    with pytest.raises(InvalidInput, match=r"stage 'aggregate': unknown per-call option\(s\) \['limit'\]"):
        stage.check_options({"limit": 3})
    with pytest.raises(InvalidInput, match="stage 'aggregate' option 'reduce'"):
        await run(stage, cands, reduce="median")
    with pytest.raises(InvalidInput, match="stage 'aggregate' option 'keep'"):
        await run(stage, cands, keep=1)
    with pytest.raises(InvalidInput, match="hydrate first"):
        await run(stage, [Candidate(Document("a#0"), {"semantic": 0.5})])
    bad = Candidate(Document("a#0", "t", {"parent_id": 7}))
    with pytest.raises(InvalidInput, match=r"document 'a#0' metadata 'parent_id' must be a non-empty string"):
        await run(stage, [bad])
    pipeline = Pipeline([ParentAggregation(name="fold")], WeightedScorer({"semantic": 1.0}))
    with pytest.raises(InvalidInput, match="stage 'fold' option 'keep'"):
        await pipeline.aretrieve("q", options={"fold": {"keep": "all"}})


LONG = (
    "Alpha Centauri Station is an orbital habitat. Its docking ring holds forty ships and its "
    "greenhouses grow wheat, rice and beans for nine thousand residents. The station was "
    "founded by the Meridian consortium and is governed by an elected council of twelve."
)


async def chunked_world() -> tuple[InMemoryGraphStore, LocalVectorStore, HashingEmbedder, TitleLinker]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(256)
    linker = TitleLinker()
    records = [
        SourceRecord("station", LONG, title="Alpha Centauri Station"),
        SourceRecord("council", "The council of twelve is elected by the station residents.", title="Council"),
        SourceRecord("wheat", "Wheat is a grass grown for its seed, a cereal grain.", title="Wheat"),
    ]
    indexer = Indexer(graph, vectors, embedder, chunker=TokenChunker(max_tokens=16, overlap=2), extractors=[linker])
    await indexer.aindex(records)
    return graph, vectors, embedder, linker


async def test_aggregation_lets_entity_and_chunk_semantic_signals_add_up() -> None:
    graph, vectors, embedder, linker = await chunked_world()
    assert (await graph.get_documents(["station#0"]))["station#0"].metadata["parent_id"] == "station"

    def pipeline(*extra: Any) -> Pipeline:
        stages = [SemanticSearch(vectors, embedder), EntitySeeds(graph, linker), Hydrate(graph), *extra]
        return Pipeline(stages, WeightedScorer({"semantic": 1.0, "entity": 1.0}))

    question = "Who elects the Council of twelve of Alpha Centauri Station?"
    split = await pipeline().aretrieve(question, top_k=10)
    by_id = {r.id: r for r in split}
    assert "entity" in by_id["station"].signals
    assert "semantic" not in by_id["station"].signals
    assert split[0].id == "council"  # semantic + a one-word entity hit beat the station's halves alone
    best_chunk = max(r.score for r in split if r.id.startswith("station#"))
    assert by_id["station"].score < by_id["council"].score
    assert best_chunk < by_id["council"].score
    folded = await pipeline(ParentAggregation(), Hydrate(graph, name="load_parents")).aretrieve(question, top_k=10)
    ids = [r.id for r in folded]
    assert ids[0] == "station"
    assert not any("#" in i for i in ids)  # one result per document
    top = folded[0]
    assert top.document.is_hydrated
    assert set(top.signals) == {"semantic", "entity"}
    assert top.score > by_id["council"].score


QUESTIONS = [
    "Which instrument did the composer of the Moonlit Sonata play?",
    "When was Clara Vossberg born?",
    "Where is the Harbour Opera House?",
    "piano sonata 1821",
    "Who built the Harbour Opera House organ?",
]


async def test_multihop_aggregation_is_a_no_op_on_an_unchunked_corpus() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    texts = {
        "sonata": ("Moonlit Sonata", "The Moonlit Sonata is a piano sonata of 1821 by Clara Vossberg."),
        "vossberg": ("Clara Vossberg", "Clara Vossberg (born 1790) was a composer who played the organ."),
        "opera": ("Harbour Opera House", "The Harbour Opera House has an organ built by Jon Tell."),
        "tell": ("Jon Tell", "Jon Tell was an organ builder from the harbour town."),
        "noise": ("Tides", "Tides rise and fall twice a day in the harbour."),
    }
    records = [SourceRecord(i, text, title=title) for i, (title, text) in texts.items()]
    linker = TitleLinker()
    await Indexer(graph, vectors, embedder, extractors=[linker]).aindex(records)
    bm25 = BM25Index((r.id, f"{r.title} {r.text}") for r in records)
    with_stage = multihop(graph, vectors, embedder, bm25=bm25, linker=linker)
    assert "aggregate" in [s.name for s in with_stage.stages]
    without = Pipeline(
        [
            SemanticSearch(vectors, embedder),
            BM25Search(bm25),
            EntitySeeds(graph, linker),
            Hydrate(graph, name="hydrate_seeds"),
            BridgeSearch(bm25, hop_signal="next_hop"),
            PersonalizedPageRank(graph),
            Hydrate(graph),
        ],
        WeightedScorer(MULTIHOP_WEIGHTS, normalize=True),
    )
    for question in QUESTIONS:
        got = await with_stage.aretrieve(question, top_k=10)
        expected = await without.aretrieve(question, top_k=10)
        assert [(r.id, r.score, dict(r.signals)) for r in got] == [(r.id, r.score, dict(r.signals)) for r in expected]
        assert got  # the comparison is not vacuous
