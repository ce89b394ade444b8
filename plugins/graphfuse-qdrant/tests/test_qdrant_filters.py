"""to_qdrant_filter: the exact Qdrant conditions, and agreement with MetadataFilter.matches."""

from __future__ import annotations

import json
from typing import Any

import pytest
from graphfuse_qdrant import to_qdrant_filter
from graphfuse_qdrant._store import _payload
from qdrant_client import QdrantClient, models

from graphfuse import InvalidInput, MetadataFilter, VectorRecord

F = models.FieldCondition


def test_none_and_empty() -> None:
    assert to_qdrant_filter(None) is None
    assert to_qdrant_filter({}) is None


def test_equality_by_type() -> None:
    assert to_qdrant_filter({"tenant": "t1", "draft": True, "year": 2024, "ratio": 0.5}) == models.Filter(
        must=[
            F(key="tenant", match=models.MatchValue(value="t1")),
            F(key="draft", match=models.MatchValue(value=True)),
            F(key="year", range=models.Range(gte=2024, lte=2024)),
            F(key="ratio", range=models.Range(gte=0.5, lte=0.5)),
        ]
    )


def test_negations_go_to_must_not() -> None:
    assert to_qdrant_filter({"lang": {"$ne": "en"}, "tag": {"$nin": ["a", "b"]}}) == models.Filter(
        must_not=[
            F(key="lang", match=models.MatchValue(value="en")),
            F(key="tag", match=models.MatchAny(any=["a", "b"])),
        ]
    )


def test_membership() -> None:
    assert to_qdrant_filter({"lang": {"$in": ["en", "de"]}}) == models.Filter(
        must=[F(key="lang", match=models.MatchAny(any=["en", "de"]))]
    )
    assert to_qdrant_filter({"n": {"$in": [1, True]}}) == models.Filter(
        must=[
            models.Filter(
                should=[F(key="n", range=models.Range(gte=1, lte=1)), F(key="n", match=models.MatchValue(value=True))]
            )
        ]
    )


def test_ranges_and_exists() -> None:
    got = to_qdrant_filter({"year": {"$gt": 1, "$lte": 5}, "src": {"$exists": True}, "x": {"$exists": False}})
    assert got == models.Filter(
        must=[
            F(key="year", range=models.Range(gt=1)),
            F(key="year", range=models.Range(lte=5)),
            F(key="_graphfuse_keys", match=models.MatchValue(value="src")),
        ],
        must_not=[F(key="_graphfuse_keys", match=models.MatchValue(value="x"))],
    )


def test_accepts_a_parsed_filter_and_rejects_bad_ones() -> None:
    parsed = MetadataFilter.parse({"a": 1})
    assert to_qdrant_filter(parsed) == to_qdrant_filter({"a": 1})
    with pytest.raises(InvalidInput):
        to_qdrant_filter({"a": {"$regex": "x"}})
    with pytest.raises(InvalidInput, match="numbers only"):
        to_qdrant_filter({"a": {"$lt": "m"}})


_PAYLOADS: list[dict[str, Any]] = [
    {"tenant": "t1", "year": 2020, "ratio": 0.5, "draft": True, "lang": "en"},
    {"tenant": "t2", "year": 2021, "ratio": 1.5, "draft": False},
    {"tenant": "t1", "year": 2022.0, "flag": 1, "lang": "de"},
    {"tenant": "t3", "year": True, "flag": True},
    {"lang": "fr", "ratio": 2},
    {},
]

_FILTERS: list[dict[str, Any]] = [
    {"tenant": "t1"},
    {"tenant": {"$ne": "t1"}},
    {"tenant": {"$in": ["t1", "t3"]}},
    {"tenant": {"$nin": ["t1", "t3"]}},
    {"year": 2022},
    {"year": {"$ne": 2020}},
    {"year": {"$gte": 2021}},
    {"year": {"$lt": 2021.5}},
    {"year": {"$gt": 2019, "$lte": 2021}},
    {"year": {"$in": [2020, 2022]}},
    {"ratio": {"$in": [0.5, 2]}},
    {"draft": True},
    {"draft": False},
    {"draft": {"$ne": True}},
    {"flag": 1},
    {"flag": True},
    {"flag": {"$in": [True]}},
    {"lang": {"$exists": True}},
    {"lang": {"$exists": False}},
    {"tenant": "t1", "lang": {"$ne": "en"}},
    {"missing": {"$ne": "x"}},
    {"missing": {"$nin": [1, 2]}},
]


@pytest.fixture(scope="module")
def client() -> Any:
    c = QdrantClient(location=":memory:")
    c.create_collection("f", vectors_config=models.VectorParams(size=2, distance=models.Distance.COSINE))
    points = [
        models.PointStruct(id=i, vector=[1.0, 0.1 * i], payload=_payload(VectorRecord(str(i), [1.0, 0.1 * i], p)))
        for i, p in enumerate(_PAYLOADS)
    ]  # the payload layout QdrantVectorStore writes
    c.upsert("f", points=points)
    yield c
    c.close()


@pytest.mark.parametrize("spec", _FILTERS, ids=[str(f) for f in _FILTERS])
def test_agrees_with_the_reference_semantics(client: QdrantClient, spec: dict[str, Any]) -> None:
    reference = MetadataFilter.parse(spec)
    assert reference is not None
    expected = {i for i, p in enumerate(_PAYLOADS) if reference.matches(p)}
    points = client.query_points("f", query=[1.0, 0.0], query_filter=to_qdrant_filter(spec), limit=100).points
    assert {int(p.id) for p in points} == expected


def test_what_qdrant_cannot_compare_exactly_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"beyond \+-2\*\*53"):
        to_qdrant_filter({"n": {"$gte": 2**53 + 1}})
    with pytest.raises(InvalidInput, match="reserved by graphfuse-qdrant"):
        to_qdrant_filter({"_graphfuse_keys": "x"})
    with pytest.raises(InvalidInput, match=r"'big' = 9007199254740993 is beyond"):
        _payload(VectorRecord("a", [1.0], {"big": 2**53 + 1}))
    with pytest.raises(InvalidInput, match="reserved by graphfuse-qdrant"):
        _payload(VectorRecord("a", [1.0], {"_graphfuse_id": "b"}))


def test_list_and_null_values_follow_the_reference() -> None:
    # A list value is not stored as a scalar to compare against: a multi-tagged document must not
    # match the tenant "t1" filter.
    payload = _payload(VectorRecord("a", [1.0], {"tenant": ["t1", "t2"], "note": None, "n": 1}))
    assert "tenant" not in payload
    assert "note" not in payload
    assert payload["n"] == 1
    assert payload["_graphfuse_keys"] == ["n", "note", "tenant"]
    assert json.loads(payload["_graphfuse_metadata"]) == {"tenant": ["t1", "t2"], "note": None, "n": 1}
