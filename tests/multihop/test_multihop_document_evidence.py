"""Document evidence: passages that share a title are parts of one document, whose whole match counts for each."""

from __future__ import annotations

import pytest

from graphfuse import Candidate, Document, InvalidInput, MetadataFilter, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.evaluation import EvalQuery, aevaluate
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import EntityMatcher, Indexer, SourceRecord, TextEntityExtractor, TitleLinker
from graphfuse.multihop import DOCUMENT_WEIGHT, BM25Index, DocumentEvidence, aentity_matcher, multihop
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

# A chat log cut into chunks, titled by the conversation's time as a chat export names it: the
# topic (the game) is named in the first chunk, the answer is in the second.
CHATS = [
    ("c1-1", "20261001_20:00", "LiHua: Have you played Black Myth: Wukong yet? Black Myth: Wukong is everywhere."),
    ("c1-2", "20261001_20:00", "ThaneChambers: Yes! The part I like most is the fresh take on the classic tale."),
    ("c2", "20261003_09:00", "ThaneChambers: The part I like most about summer is the beach, I like it a lot."),
    ("c3-1", "20261005_18:00", "GiselleMoreau: Passing drills tonight, bring water."),
    ("c3-2", "20261005_18:00", "LiHua: Sure, see you at the field."),
    ("c4", "20261007_12:00", "AdamSmith: The rent is due on the first of the month."),
]
QUESTION = "What part of Black Myth: Wukong does ThaneChambers like the most?"


def _ctx() -> StageRunContext:
    return StageRunContext()


def _index(rows: list[tuple[str, str, str]] = CHATS) -> BM25Index:
    return BM25Index((i, f"{title} {text}", {"title": title}) for i, title, text in rows)


@pytest.mark.parametrize(("k1", "b"), [(1.2, 0.75), (2.0, 1.0), (0.9, 0.0), (0.0, 0.75)])
def test_merged_scores_a_group_as_the_text_of_its_documents(k1: float, b: float) -> None:
    texts = [("a", "black myth wukong wukong"), ("b", "thane likes the tale tale tale"), ("c", "rent is due")]
    index = BM25Index(texts, k1=k1, b=b)
    merged = index.merged({"conv": ["a", "b"], "other": ["c"], "gone": ["nowhere"]})
    whole = BM25Index(
        [("conv", "black myth wukong wukong thane likes the tale tale tale"), ("other", "rent is due")], k1=k1, b=b
    )
    assert list(merged.ids) == ["conv", "other"]  # a group of unknown ids is left out
    for query in ("wukong tale", "rent", "thane", "myth"):
        assert merged.scores(query) == pytest.approx(whole.scores(query))
    assert index.metadata == [{}, {}, {}]


async def test_chunks_of_the_best_documents_get_their_documents_score() -> None:
    stage = DocumentEvidence(_index())
    assert (len(stage), stage.shared) == (4, 2)  # c1 and c3 have two passages each
    found = [Candidate(Document(i), {"bm25": 0.5}) for i in ("c1-2", "c2", "c4")]
    out = {c.id: c.signals.get("document") for c in await stage.run(Query(QUESTION), found, _ctx())}
    # The answer chunk names neither the game nor the question's "most": its conversation does.
    assert out["c1-2"] == 1.0
    assert out["c2"] is not None
    assert 0 < out["c2"] < 1
    assert out["c4"] is None  # its conversation does not match
    only_best = await stage.run(Query(QUESTION, options={"document": {"top": 1}}), found, _ctx())
    assert {c.id for c in only_best if "document" in c.signals} == {"c1-2"}
    # No candidate is added; a metadata filter leaves the candidates as they are (a document's
    # other passages may lie outside it).
    assert len(out) == 3
    filtered = await stage.run(Query(QUESTION, filter=MetadataFilter.parse({"title": "x"})), found, _ctx())
    assert filtered == found


def test_document_evidence_validation() -> None:
    with pytest.raises(InvalidInput, match="BM25Index"):
        DocumentEvidence("index")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="top"):
        DocumentEvidence(_index(), top=0)
    unique = DocumentEvidence(BM25Index([("a", "x", {"title": "A"}), ("b", "y", {"title": "B"}), ("c", "z")]))
    assert (len(unique), unique.shared) == (2, 0)
    empty = BM25Index([("a", "x"), ("b", "y")]).merged({})
    assert (len(empty), list(empty.scores("x"))) == (0, [])


async def test_unknown_per_call_option_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown per-call option"):
        await DocumentEvidence(_index()).run(Query("q", options={"document": {"k": 1}}), [], _ctx())


async def _chat_store() -> tuple[InMemoryGraphStore, LocalVectorStore, HashingEmbedder, EntityMatcher]:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    records = [SourceRecord(i, text, title=title) for i, title, text in CHATS]
    await Indexer(graph, vectors, embedder, extractors=[TextEntityExtractor()], entity_graph=True).aindex(records)
    return graph, vectors, embedder, await aentity_matcher(graph)


async def test_multihop_adds_document_evidence_where_passages_share_a_title() -> None:
    graph, vectors, embedder, entities = await _chat_store()
    pipeline = multihop(graph, vectors, embedder, bm25=_index(), linker=TitleLinker(), entities=entities)
    names = [stage.name for stage in pipeline.stages]
    assert names.index("document") == names.index("bm25") + 1
    assert "'document': 1.0" in repr(pipeline.scorer)  # DOCUMENT_WEIGHT at strength 1
    found = await pipeline.aretrieve(QUESTION, top_k=3)
    assert found[0].document_id == "c1-2"
    assert found[0].signals["document"] == 1.0
    # Every passage its own document: the stage would repeat BM25, so it is left out.
    unique = [(i, f"{title}/{i}", text) for i, title, text in CHATS]
    plain = multihop(graph, vectors, embedder, bm25=_index(unique), linker=TitleLinker(), entities=entities)
    assert "document" not in [stage.name for stage in plain.stages]
    # Strength 0 (titles give the graph, no entity nodes): left out too.
    titled = TitleLinker({f"Chat {name}": [i] for (i, _, _), name in zip(CHATS, "ABCDEF", strict=True)})
    fixed = multihop(graph, vectors, embedder, bm25=_index(), linker=titled, entities=EntityMatcher({}))
    assert "document" not in [stage.name for stage in fixed.stages]
    # Fixed weights keep the preset as it was.
    same = multihop(graph, vectors, embedder, bm25=_index(), linker=TitleLinker(), entities=entities, adaptive=False)
    assert "document" not in [stage.name for stage in same.stages]
    # A weight given by the caller is kept.
    own = multihop(
        graph, vectors, embedder, bm25=_index(), linker=TitleLinker(), entities=entities, weights={"document": 0.5}
    )
    assert "'document': 0.5" in repr(own.scorer)
    assert DOCUMENT_WEIGHT == 1.0


async def test_evaluate_indexes_titles_so_that_multihop_weighs_documents() -> None:
    report = await aevaluate(
        [SourceRecord(i, text, title=title) for i, title, text in CHATS],
        [EvalQuery("q", QUESTION, ("c1-2",))],
        ["multihop"],
        graph_store=InMemoryGraphStore(),
        vector_store=LocalVectorStore(),
        embedder=HashingEmbedder(64),
    )
    fusion = report.pipelines["multihop"].fusion
    assert fusion is not None
    assert fusion.weights["document"].max == pytest.approx(DOCUMENT_WEIGHT)
