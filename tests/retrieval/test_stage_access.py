"""AccessPopularity: capped counts normalised across the candidates, missing policies, bad values."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import corpus_documents

from graphfuse import Candidate, Document, InvalidInput, Query
from graphfuse.hosts import StageRunContext
from graphfuse.stages import AccessPopularity

_MISSING: Any = object()


def docs(*counts: Any) -> list[Candidate]:
    out = []
    for i, n in enumerate(counts):
        metadata = {} if n is _MISSING else {"access_count": n}
        # Trusted: Document(...) itself refuses NaN and infinity; a host's records may still carry them.
        out.append(Candidate(Document.trusted(f"d{i}", "text", metadata)))
    return out


async def access(stage: AccessPopularity, candidates: list[Candidate]) -> list[float]:
    return [c.signals["access"] for c in await stage.run(Query("q"), candidates, StageRunContext())]


async def test_normalised_by_the_largest_count() -> None:
    assert await access(AccessPopularity(), docs(0, 10, 20)) == [0.0, 0.5, 1.0]


async def test_counts_are_capped() -> None:
    got = await access(AccessPopularity(max_access_count=100), docs(10, 50, 5000))
    assert got == [0.1, 0.5, 1.0]
    assert await access(AccessPopularity(), docs(10, 2000)) == [0.01, 1.0]


async def test_all_zero_is_zero() -> None:
    assert await access(AccessPopularity(), docs(0, 0)) == [0.0, 0.0]
    assert await access(AccessPopularity(), []) == []


async def test_numeric_strings_and_floats_are_counts() -> None:
    assert await access(AccessPopularity(), docs("5", 10.0, " 20 ")) == [0.25, 0.5, 1.0]


async def test_missing_policies() -> None:
    assert await access(AccessPopularity(), docs(_MISSING, 4, 8)) == [0.5, 0.5, 1.0]
    assert await access(AccessPopularity(missing="zero"), docs(_MISSING, 4, 8)) == [0.0, 0.5, 1.0]
    assert await access(AccessPopularity(), docs(_MISSING, _MISSING)) == [0.5, 0.5]
    with pytest.raises(InvalidInput, match="'d0' has no 'access_count'"):
        await access(AccessPopularity(missing="error"), docs(_MISSING, 4))


async def test_custom_key() -> None:
    candidates = [Candidate(Document("h", "t", {"hits": 3})), Candidate(Document("l", "t", {"hits": 1}))]
    assert await access(AccessPopularity(key="hits"), candidates) == [1.0, pytest.approx(1 / 3)]


@pytest.mark.parametrize("bad", ["many", "", -1, float("nan"), float("inf"), True, None, [3], "-2"])
async def test_non_numeric_or_negative_count_names_document_and_value(bad: object) -> None:
    with pytest.raises(InvalidInput, match=r"document 'd1': 'access_count' must be a non-negative number, got"):
        await access(AccessPopularity(), docs(1, bad))


async def test_corpus_values() -> None:
    got = dict(
        zip(
            [d.id for d in corpus_documents()],
            await access(AccessPopularity(), [Candidate(d) for d in corpus_documents()]),
            strict=True,
        )
    )
    assert got == {"a": 0.5, "b": 1.0, "c": 0.0, "d": 0.5, "x": 0.25, "y": 0.35}


async def test_id_only_candidates_need_hydrate() -> None:
    with pytest.raises(InvalidInput, match="hydrate first"):
        await access(AccessPopularity(), [Candidate(Document("a"))])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"key": ""}, "key"),
        ({"key": 3}, "key"),
        ({"max_access_count": 0}, "max_access_count"),
        ({"max_access_count": float("inf")}, "max_access_count"),
        ({"missing": "ignore"}, "missing"),
    ],
)
def test_constructor_validation(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(InvalidInput, match=name):
        AccessPopularity(**kwargs)  # type: ignore[arg-type]
