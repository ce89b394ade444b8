"""One score scale: normalising scorers keep the order and put every preset's score in [0, 1]."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphfuse import Candidate, Document, InvalidInput
from graphfuse.cli import app
from graphfuse.scoring import AdaptiveScorer, ReciprocalRankFusion, WeightedScorer
from graphfuse.stores import aopen_store

SIGNALS = [
    {"semantic": 0.9, "ppr": 0.2},
    {"semantic": 0.4, "ppr": 1.0, "bm25": 0.7},
    {"semantic": 0.1, "bridge": 0.6},
    {"bm25": 1.0},
]


def _candidates() -> list[Candidate]:
    return [Candidate(Document(f"d{i}"), dict(s)) for i, s in enumerate(SIGNALS)]


def _order(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        (
            WeightedScorer({"semantic": 1.0, "ppr": 3.0, "bridge": 0.5, "time": 1.0}),
            WeightedScorer({"semantic": 1.0, "ppr": 3.0, "bridge": 0.5, "time": 1.0}, normalize=True),
        ),
        (
            AdaptiveScorer({"semantic": 1.0, "ppr": 3.0, "bridge": 0.5}, strength=1.0),
            AdaptiveScorer({"semantic": 1.0, "ppr": 3.0, "bridge": 0.5}, strength=1.0, normalize=True),
        ),
        (
            ReciprocalRankFusion({"semantic": 1.0, "bm25": 1.0}),
            ReciprocalRankFusion({"semantic": 1.0, "bm25": 1.0}, normalize=True),
        ),
    ],
)
def test_normalising_keeps_the_order_and_the_shares(raw: object, normalized: object) -> None:
    candidates = _candidates()
    before = raw.score(candidates)  # type: ignore[attr-defined]
    after = normalized.score(candidates)  # type: ignore[attr-defined]
    assert _order(before) == _order(after)
    assert all(0.0 <= s <= 1.0 for s in after)
    assert max(before) > 1.0 or isinstance(raw, ReciprocalRankFusion)  # the raw scale was not [0, 1]
    factor = before[0] / after[0]
    assert all(b == pytest.approx(a * factor) for a, b in zip(after, before, strict=True))
    for score, parts in zip(after, normalized.explain(candidates), strict=True):  # type: ignore[attr-defined]
        assert sum(parts.values()) == pytest.approx(score)


def test_weighted_sum_is_divided_by_the_weight_of_the_signals_present() -> None:
    scorer = WeightedScorer({"semantic": 1.0, "ppr": 3.0, "time": 1.0}, normalize=True)
    best = Candidate(Document("a"), {"semantic": 1.0, "ppr": 1.0})
    other = Candidate(Document("b"), {"semantic": 0.5})
    # time is carried by no candidate: it does not count, so every present signal at 1 scores 1.
    assert scorer.score([best, other]) == [pytest.approx(1.0), pytest.approx(0.5 / 4.0)]
    assert scorer.explain([best, other])[0] == {"semantic": pytest.approx(0.25), "ppr": pytest.approx(0.75)}
    assert WeightedScorer({"semantic": 2.0}).score([best]) == [2.0]  # off by default
    assert scorer.score([]) == []


def test_rrf_first_in_every_ranking_scores_one() -> None:
    scorer = ReciprocalRankFusion(normalize=True)
    a = Candidate(Document("a"), {"semantic": 0.9, "bm25": 0.9})
    b = Candidate(Document("b"), {"semantic": 0.1, "bm25": 0.1})
    assert scorer.score([a, b])[0] == pytest.approx(1.0)


@pytest.mark.parametrize("scorer", [WeightedScorer, ReciprocalRankFusion])
def test_normalize_must_be_a_bool(scorer: type) -> None:
    with pytest.raises(InvalidInput, match="normalize must be True or False"):
        scorer(normalize="yes")
    with pytest.raises(InvalidInput, match="normalize must be True or False"):
        AdaptiveScorer({"semantic": 1.0}, normalize=1)  # type: ignore[arg-type]


CORPUS = [
    ("ada", "Ada Lovelace", "Ada Lovelace wrote the first program for the Analytical Engine of Charles Babbage."),
    ("babbage", "Charles Babbage", "Charles Babbage designed the Analytical Engine in London."),
    ("engine", "Analytical Engine", "The Analytical Engine was a mechanical computer designed by Charles Babbage."),
    ("london", "London", "London is the capital of England, where Ada Lovelace was born."),
    ("byron", "Lord Byron", "Lord Byron was a poet and the father of Ada Lovelace."),
]


async def _index(corpus: Path, store_dir: Path) -> None:
    args = ["index", str(corpus), "--store", str(store_dir), "--embedder", "hashing"]
    done = await asyncio.to_thread(CliRunner().invoke, app, args)  # (the command runs its own event loop)
    assert done.exit_code == 0, done.output


async def test_every_preset_scores_in_zero_one(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS))
    store_dir = tmp_path / "store"
    await _index(corpus, store_dir)
    async with await aopen_store(store_dir, mode="ro") as store:
        for preset in ("multihop", "bm25", "hybrid", "minimal", "standard", "no_rerank"):
            pipeline = await store.apipeline(preset)
            for question in ("Who was the father of Ada Lovelace?", "Who designed the Analytical Engine?"):
                results = await pipeline.aretrieve(question, top_k=5)
                assert results, preset
                assert all(0.0 <= r.score <= 1.0 + 1e-9 for r in results), (preset, [r.score for r in results])


async def test_multihop_raw_and_normalised_rank_alike(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS))
    store_dir = tmp_path / "store"
    await _index(corpus, store_dir)
    async with await aopen_store(store_dir, mode="ro") as store:
        normalised = await store.apipeline("multihop")
        raw = await store.apipeline("multihop", normalize=False)
        for question in ("Who was the father of Ada Lovelace?", "Where was the Analytical Engine designed?"):
            a = await normalised.aretrieve(question, top_k=5)
            b = await raw.aretrieve(question, top_k=5)
            assert [r.id for r in a] == [r.id for r in b]
            assert max(r.score for r in b) > 1.0
            assert all(0.0 <= r.score <= 1.0 for r in a)
