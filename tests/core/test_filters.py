"""Metadata filters: parsing, validation, and the reference evaluation semantics."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphfuse import Condition, InvalidInput, MetadataFilter

scalars = st.one_of(
    st.booleans(), st.integers(-5, 5), st.floats(-5, 5, allow_nan=False), st.sampled_from(["a", "b", "c"])
)
metadata = st.dictionaries(st.sampled_from(["k", "m", "n"]), scalars, max_size=3)


def f(spec: dict[str, Any]) -> MetadataFilter:
    parsed = MetadataFilter.parse(spec)
    assert parsed is not None
    return parsed


def test_parse_forms() -> None:
    assert MetadataFilter.parse(None) is None
    assert MetadataFilter.parse({}) is None
    flt = f({"tenant": "acme", "year": {"$gte": 2020, "$lt": 2024}})
    assert flt.conditions == (
        Condition("tenant", "$eq", "acme"),
        Condition("year", "$gte", 2020),
        Condition("year", "$lt", 2024),
    )
    assert MetadataFilter.parse(flt) is flt
    assert flt.to_dict() == {"tenant": {"$eq": "acme"}, "year": {"$gte": 2020, "$lt": 2024}}
    assert f({"lang": {"$in": ["en", "de"]}}).to_dict() == {"lang": {"$in": ["en", "de"]}}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tenant=acme", "must be a mapping"),
        ({"bad key": 1}, "filter key 'bad key' is not valid"),
        ({"1abc": 1}, "not valid"),
        ({"k": {}}, "empty condition"),
        ({"k": {"$regex": "a"}}, "unknown operator '\\$regex'"),
        ({"k": {"$in": []}}, "non-empty list"),
        ({"k": {"$in": "abc"}}, "non-empty list"),
        ({"k": {"$nin": [[1]]}}, "str, int, float or bool"),
        ({"k": {"$exists": 1}}, "true or false"),
        ({"k": {"$gt": True}}, "range needs a number or a string"),
        ({"k": float("nan")}, "finite"),
        ({"k": None}, "str, int, float or bool"),
        ({"k": {"$eq": [1, 2]}}, "str, int, float or bool"),
    ],
)
def test_invalid_filters(spec: Any, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        MetadataFilter.parse(spec)


@pytest.mark.parametrize(
    ("spec", "meta", "expected"),
    [
        ({"t": "acme"}, {"t": "acme"}, True),
        ({"t": "acme"}, {"t": "globex"}, False),
        ({"t": "acme"}, {}, False),
        ({"n": 1}, {"n": True}, False),  # a bool never equals an int
        ({"n": True}, {"n": 1}, False),
        ({"n": 1}, {"n": 1.0}, True),
        ({"n": {"$ne": 1}}, {}, True),  # a missing key passes $ne and $nin
        ({"n": {"$nin": [1, 2]}}, {}, True),
        ({"n": {"$nin": [1, 2]}}, {"n": 2}, False),
        ({"n": {"$in": [1, 2]}}, {}, False),
        ({"n": {"$gt": 1}}, {"n": "2"}, False),  # no comparison across str and number
        ({"n": {"$gt": "a"}}, {"n": "b"}, True),
        ({"n": {"$lte": 2}}, {"n": 2}, True),
        ({"n": {"$lt": 2}}, {"n": None}, False),
        ({"n": {"$gte": 0}}, {"n": False}, False),
        ({"n": {"$exists": True}}, {"n": None}, True),
        ({"n": {"$exists": False}}, {"n": None}, False),
        ({"n": {"$exists": False}}, {}, True),
        ({"a": 1, "b": 2}, {"a": 1, "b": 3}, False),
    ],
)
def test_matches(spec: dict[str, Any], meta: dict[str, Any], expected: bool) -> None:
    assert f(spec).matches(meta) is expected


@given(scalars, metadata)
def test_eq_and_ne_are_complements_when_present(value: Any, meta: dict[str, Any]) -> None:
    eq = f({"k": value}).matches(meta)
    ne = f({"k": {"$ne": value}}).matches(meta)
    if "k" in meta:
        assert eq != ne
    else:
        assert not eq
        assert ne


@given(st.lists(scalars, min_size=1, max_size=4), metadata)
def test_in_is_any_eq_and_nin_its_complement(values: list[Any], meta: dict[str, Any]) -> None:
    in_ = f({"k": {"$in": values}}).matches(meta)
    assert in_ == any(f({"k": v}).matches(meta) for v in values)
    assert f({"k": {"$nin": values}}).matches(meta) == (not in_)


@given(st.integers(-5, 5), metadata)
def test_ranges_partition_numbers(bound: int, meta: dict[str, Any]) -> None:
    lt = f({"k": {"$lt": bound}}).matches(meta)
    gte = f({"k": {"$gte": bound}}).matches(meta)
    actual = meta.get("k")
    if isinstance(actual, (int, float)) and not isinstance(actual, bool):
        assert lt != gte
    else:
        assert not lt
        assert not gte


@given(st.dictionaries(st.sampled_from(["k", "m"]), scalars, min_size=1), metadata)
def test_conjunction_and_round_trip(spec: dict[str, Any], meta: dict[str, Any]) -> None:
    flt = f(spec)
    assert flt.matches(meta) == all(f({k: v}).matches(meta) for k, v in spec.items())
    assert MetadataFilter.parse(flt.to_dict()) == flt
