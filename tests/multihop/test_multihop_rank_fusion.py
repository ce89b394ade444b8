"""``multihop`` on a store of split pages: the first-stage rank fusion (as ``hybrid``'s) orders the results."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphfuse import Candidate, Document, InvalidInput, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.multihop import (
    FUSED_WEIGHT,
    MULTIHOP_WEIGHTS,
    RankFusion,
    acorpus_indexes,
    adaptive_strength,
    multihop,
    split_share,
)
from graphfuse.scoring import ReciprocalRankFusion
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore, SQLiteGraphStore

_FILLER = " ".join(f"filler{i}" for i in range(40))


def _chunk(page: str, n: int, text: str) -> Document:
    return Document(
        f"{page}#{n}", text, {"title": page, "graphfuse_kind": "chunk", "parent_id": page, "chunk_index": n}
    )


async def _graph(tmp_path: Path, chunks: int) -> SQLiteGraphStore:
    # "guide" is split into ``chunks`` passages, "strict" and "other" stay whole.
    sections = [f"Section {i} of the guide. " + _FILLER for i in range(chunks)]
    graph = SQLiteGraphStore(tmp_path / "graph.sqlite")
    await graph.store_documents(
        [
            Document("guide", " ".join(sections), {"title": "Guide", "graphfuse_kind": "document"}),
            *(_chunk("guide", i, s) for i, s in enumerate(sections)),
            Document("strict", "Strict mode refuses coercion.", {"title": "Strict"}),
            Document("other", "Nothing about it.", {"title": "Other"}),
        ]
    )
    return graph


async def test_rank_fusion_orders_as_reciprocal_rank_fusion() -> None:
    candidates = [
        Candidate(Document("a"), {"semantic": 0.9, "bm25": 0.2}),
        Candidate(Document("b"), {"semantic": 0.5, "bm25": 1.0}),
        Candidate(Document("c"), {"semantic": 0.7}),
        Candidate(Document("d"), {"ppr": 1.0}),  # in no first-stage ranking: no signal
    ]
    out = await RankFusion().run(Query("q"), candidates, StageRunContext())
    fused = {c.id: c.signals.get("fused") for c in out}
    # a: 1st by semantic, 2nd by BM25; b: 3rd and 1st; c: 2nd by semantic only.
    best = 2 / 61
    assert fused["d"] is None
    del fused["d"]
    assert fused == pytest.approx({"a": (1 / 61 + 1 / 62) / best, "b": (1 / 63 + 1 / 61) / best, "c": (1 / 62) / best})
    # The same order as the hybrid preset's scorer gives.
    rrf = ReciprocalRankFusion({"semantic": 1.0, "bm25": 1.0}).score(candidates[:3])
    by_rrf = [c.id for _, c in sorted(zip(rrf, candidates[:3], strict=True), key=lambda p: -p[0])]
    assert sorted("abc", key=lambda i: -fused[i]) == by_rrf
    assert await RankFusion().run(Query("q"), [], StageRunContext()) == []
    with pytest.raises(InvalidInput, match="signals must be"):
        RankFusion("semantic")
    with pytest.raises(InvalidInput, match="k must be"):
        RankFusion(k=0)
    with pytest.raises(InvalidInput, match="unknown per-call option"):
        RankFusion().check_options({"k": 3})


async def test_multihop_fuses_first_stage_ranks_on_a_store_of_split_pages(tmp_path: Path) -> None:
    graph = await _graph(tmp_path, chunks=4)
    try:
        bm25, linker = await acorpus_indexes(graph)
        assert split_share(bm25) == pytest.approx(1 - 3 / 6)  # 3 pages, 6 passages
        pipeline = multihop(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16), bm25=bm25, linker=linker)
        names = [s.name for s in pipeline.stages]
        assert names.index("bm25") < names.index("fused") < names.index("aggregate_seeds") < names.index("ppr")
        strength = adaptive_strength(bm25, linker)
        assert pipeline.scorer.base["fused"] == pytest.approx(FUSED_WEIGHT * (1 + 2 * strength))  # type: ignore[attr-defined]
        # Without titles the corpus leaves more to the first stage, and so to its fusion.
        bare = multihop(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16), bm25=bm25)
        assert bare.scorer.base["fused"] == pytest.approx(FUSED_WEIGHT * (1 + 2 * adaptive_strength(bm25, None)))  # type: ignore[attr-defined]
        # Weights given with their own "fused" keep it.
        own = multihop(
            InMemoryGraphStore(),
            LocalVectorStore(),
            HashingEmbedder(16),
            bm25=bm25,
            weights={**MULTIHOP_WEIGHTS, "fused": 2.0},
        )
        assert own.scorer.base["fused"] == 2.0  # type: ignore[attr-defined]
    finally:
        await graph.close()


async def test_a_corpus_with_few_split_pages_is_left_as_it_was(tmp_path: Path) -> None:
    graph = await _graph(tmp_path, chunks=2)  # 3 pages, 4 passages: a quarter added by the split
    try:
        bm25, linker = await acorpus_indexes(graph)
        assert split_share(bm25) == pytest.approx(0.25)
        pipeline = multihop(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16), bm25=bm25, linker=linker)
        assert "fused" not in [s.name for s in pipeline.stages]
        assert "fused" not in pipeline.scorer.base  # type: ignore[attr-defined]
        assert split_share(bm25.with_passages(None)) == 0.0
    finally:
        await graph.close()


async def test_a_page_ranks_by_its_best_passage_in_both_rankings(tmp_path: Path) -> None:
    """Fused by passage, then folded: a page whose one section both searches put second beats a
    page whose vector hit and BM25 hit are two different sections (what the page-level fusion
    ranked first)."""
    graph = await _graph(tmp_path, chunks=4)
    try:
        bm25, linker = await acorpus_indexes(graph)
        pipeline = multihop(InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(16), bm25=bm25, linker=linker)
        stages = {s.name: s for s in pipeline.stages}
        order = [s.name for s in pipeline.stages if s.name in ("fused", "aggregate_seeds")]

        def chunk(page: str, n: int, semantic: float, lexical: float) -> Candidate:
            meta = {"graphfuse_kind": "chunk", "parent_id": page, "chunk_index": n}
            return Candidate(Document(f"{page}#{n}", "text", meta), {"semantic": semantic, "bm25": lexical})

        fillers = [chunk(f"filler{i}", 0, 0.5 - i / 100, 0.5 - i / 100) for i in range(8)]
        candidates = [
            chunk("split", 0, 0.95, 0.01),  # first by vector, last by BM25
            chunk("split", 1, 0.01, 0.95),  # first by BM25, last by vector
            chunk("focused", 0, 0.9, 0.9),  # second in both
            *fillers,
        ]
        out = candidates
        for name in order:
            out = await stages[name].run(Query("q"), out, StageRunContext())
        fused = {c.document.metadata.get("parent_id", c.id): c.signals["fused"] for c in out}
        top = 2 / 61  # (first in both rankings)
        assert fused["focused"] == pytest.approx((2 / 62) / top)
        assert fused["split"] == pytest.approx((1 / 61 + 1 / 71) / top)
        assert fused["focused"] > fused["split"]
    finally:
        await graph.close()
