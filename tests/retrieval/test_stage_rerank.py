"""Rerank: top_k by the current score, one reranker call, output validated, reordered, signals kept."""

from __future__ import annotations

import pytest
from _stage_fakes import FixedReranker, WordOverlapReranker

from graphfuse import Candidate, Document, InvalidInput, Pipeline, Query, StageFailed
from graphfuse.hosts import StageRunContext
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import Rerank

TEXTS = {
    "p": "nothing relevant",
    "q": "apple pie recipe",
    "r": "apple",
    "s": "pie",
}


def candidates() -> list[Candidate]:
    semantic = {"p": 0.9, "q": 0.8, "r": 0.7, "s": 0.1}
    return [Candidate(Document(i, TEXTS[i]), {"semantic": semantic[i], "temporal": 0.5}) for i in TEXTS]


async def rerank(stage: Rerank, cands: list[Candidate], text: str = "apple pie") -> list[Candidate]:
    return list(await stage.run(Query(text), cands, StageRunContext()))


async def test_reranks_the_top_k_and_puts_them_first() -> None:
    reranker = WordOverlapReranker()
    out = await rerank(Rerank(reranker, top_k=3), candidates())
    assert [c.id for c in out] == ["q", "r", "p", "s"]
    assert [c.signals.get("rerank") for c in out] == [1.0, 0.5, 0.0, None]
    assert len(reranker.calls) == 1
    assert reranker.calls[0] == ("apple pie", ["nothing relevant", "apple pie recipe", "apple"])
    assert all(c.signals["temporal"] == 0.5 for c in out)  # other signals survive


async def test_top_k_by_the_given_scorer_and_per_call() -> None:
    reranker = WordOverlapReranker()
    by_low_semantic = Rerank(reranker, top_k=1, scorer=lambda s: 1 - s["semantic"])
    out = await rerank(by_low_semantic, candidates())
    assert out[0].id == "s"
    assert reranker.calls[-1][1] == ["pie"]
    out = await rerank(Rerank(reranker), candidates(), text="apple pie")
    assert len(reranker.calls[-1][1]) == 4  # top_k (20) larger than the candidate set
    stage = Rerank(reranker, scorer=WeightedScorer({"semantic": 1.0}))
    await stage.run(Query("apple", options={"rerank": {"top_k": 2}}), candidates(), StageRunContext())
    assert reranker.calls[-1][1] == ["nothing relevant", "apple pie recipe"]


async def test_reranker_must_not_erase_other_signals_in_the_final_score() -> None:
    stage = Rerank(FixedReranker([0.0, 0.0, 0.0, 0.0]))
    pipeline = Pipeline([_Source(candidates()), stage], WeightedScorer({"semantic": 0.5, "rerank": 0.5}))
    results = await pipeline.aretrieve("apple pie")
    assert [r.id for r in results] == ["p", "q", "r", "s"]
    assert results[0].score == pytest.approx(0.45)


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([0.5, 0.5, 0.5], "returned 3 scores for 4 documents"),
        ([0.5] * 5, "returned 5 scores for 4 documents"),
        ([0.5, 0.5, 0.5, 1.5], "returned 1.5"),
        ([0.5, 0.5, 0.5, float("nan")], "returned nan"),
        ([0.5, 0.5, 0.5, -0.1], "returned -0.1"),
        ([0.5, 0.5, 0.5, True], "returned True"),
        ({"a": 1}, "returned dict"),
    ],
)
async def test_bad_reranker_output_names_the_reranker(scores: object, message: str) -> None:
    with pytest.raises(InvalidInput, match=f"reranker FixedReranker {message}"):
        await rerank(Rerank(FixedReranker(scores)), candidates())


async def test_bad_reranker_in_a_pipeline_is_stage_failed() -> None:
    pipeline = Pipeline([_Source(candidates()), Rerank(FixedReranker([1.0]))])
    with pytest.raises(StageFailed) as info:
        await pipeline.aretrieve("q")
    assert info.value.stage == "rerank"
    assert isinstance(info.value.__cause__, InvalidInput)


async def test_needs_content() -> None:
    bare = [Candidate(Document("a"), {"semantic": 1.0})]
    with pytest.raises(InvalidInput, match="hydrate first"):
        await rerank(Rerank(WordOverlapReranker()), bare)


async def test_only_the_reranked_need_content() -> None:
    mixed = [Candidate(Document("a", "apple"), {"semantic": 1.0}), Candidate(Document("z"), {"semantic": 0.0})]
    out = await rerank(Rerank(WordOverlapReranker(), top_k=1), mixed)
    assert [c.id for c in out] == ["a", "z"]


async def test_no_candidates_no_call() -> None:
    reranker = WordOverlapReranker()
    assert await rerank(Rerank(reranker), []) == []
    assert reranker.calls == []


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [({"top_k": 0}, "top_k"), ({"top_k": -3}, "top_k"), ({"scorer": 42}, "42"), ({"name": "a b"}, "name")],
)
def test_constructor_validation(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        Rerank(WordOverlapReranker(), **kwargs)  # type: ignore[arg-type]


def test_reranker_must_have_rerank() -> None:
    with pytest.raises(InvalidInput, match="reranker"):
        Rerank(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("top_k", [0, "5", 1.5])
async def test_bad_per_call_top_k(top_k: object) -> None:
    pipeline = Pipeline([_Source(candidates()), Rerank(WordOverlapReranker())])
    with pytest.raises(InvalidInput, match="'rerank' option 'top_k'"):
        await pipeline.aretrieve("q", options={"rerank": {"top_k": top_k}})


class _Source:
    """A stage that emits fixed candidates."""

    name = "source"

    def __init__(self, items: list[Candidate]) -> None:
        self._items = items

    async def run(self, query: Query, candidates: object, context: object) -> list[Candidate]:
        return list(self._items)


class _ByGrade:
    """A reranker that scores whole documents (RanksDocuments): by their metadata ``grade``."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    async def rerank(self, query: str, documents: list[str]) -> list[float]:
        raise AssertionError("the stage must call rerank_documents when the reranker has it")

    async def rerank_documents(self, query: str, documents: list[Document]) -> list[float]:
        self.calls.append([d.id for d in documents])
        return [d.metadata.get("grade", 0.0) for d in documents]


async def test_a_reranker_that_ranks_documents_gets_the_documents() -> None:
    reranker = _ByGrade()
    cands = [
        Candidate(Document("a", "x", {"grade": 0.2}), {"semantic": 0.9}),
        Candidate(Document("b", "y", {"grade": 0.8}), {"semantic": 0.5}),
        Candidate(Document("c", "z", {"grade": 0.9}), {"semantic": 0.1}),
    ]
    out = await rerank(Rerank(reranker, top_k=2), cands)
    assert reranker.calls == [["a", "b"]]
    assert [c.id for c in out] == ["b", "a", "c"]
    assert [c.signals.get("rerank") for c in out] == [0.8, 0.2, None]
    # Its scores are checked as the texts' are.
    bad = [Candidate(Document("a", "x", {"grade": 1.5}), {"semantic": 0.9})]
    with pytest.raises(InvalidInput, match=r"_ByGrade returned 1\.5"):
        await rerank(Rerank(_ByGrade()), bad)
