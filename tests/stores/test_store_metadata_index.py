"""The vectorised filter evaluator agrees with MetadataFilter.matches, the reference semantics."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphfuse import MetadataFilter
from graphfuse.stores._metadata_index import MetadataIndex

KEYS = ["a", "b", "c"]
scalars = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, -1.0, 2**60, 2**60 + 1]),
    st.sampled_from(["", "x", "y", "xy", "é", "Z"]),
)
values = st.one_of(scalars, st.none(), st.lists(st.integers(0, 2), max_size=2), st.just(float("nan")))
metadata = st.dictionaries(st.sampled_from(KEYS), values, max_size=3)


@st.composite
def filters(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique=True)):
        op = draw(st.sampled_from(["$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte", "$exists"]))
        if op == "$exists":
            spec[key] = {op: draw(st.booleans())}
        elif op in ("$in", "$nin"):
            spec[key] = {op: draw(st.lists(scalars, min_size=1, max_size=3))}
        elif op in ("$gt", "$gte", "$lt", "$lte"):
            spec[key] = {op: draw(st.one_of(st.integers(-3, 3), st.sampled_from([0.5, 2**60, "x", "y", ""])))}
        else:
            spec[key] = {op: draw(scalars)}
    return spec


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(metadata, max_size=12), filters())
def test_mask_equals_reference(rows: list[dict[str, Any]], spec: dict[str, Any]) -> None:
    flt = MetadataFilter.parse(spec)
    assert flt is not None
    expected = [flt.matches(m) for m in rows]
    assert MetadataIndex(rows).mask(flt).tolist() == expected


def test_columns_are_reused_across_filters() -> None:
    rows = [{"tenant": f"t{i % 3}", "year": 2000 + i} for i in range(30)]
    index = MetadataIndex(rows)
    first = index.mask(MetadataFilter.parse({"tenant": "t1"}))  # type: ignore[arg-type]
    assert int(first.sum()) == 10
    both = index.mask(MetadataFilter.parse({"tenant": "t1", "year": {"$gte": 2015}}))  # type: ignore[arg-type]
    assert np.flatnonzero(both).tolist() == [16, 19, 22, 25, 28]
    assert set(index._columns) == {"tenant", "year"}


def test_a_stored_value_no_filter_can_compare_never_raises() -> None:
    class Odd:
        def __eq__(self, other: object) -> bool:
            raise TypeError("no")

        __hash__ = object.__hash__

    rows: list[dict[str, Any]] = [
        {"year": 10**400},
        {"year": -(10**400)},
        {"year": 2020},
        {"year": 2**60 + 1},
        {"year": math.nan},
        {"year": Odd()},
        {},
    ]
    index = MetadataIndex(rows)
    for spec in (
        {"year": 2020},
        {"year": {"$gte": 2000}},
        {"year": {"$lt": 0}},
        {"year": {"$ne": 2020}},
        {"year": {"$in": [2020, 7]}},
        {"year": {"$nin": [2020]}},
        {"year": {"$exists": True}},
        {"year": {"$gt": 1e300}},
    ):
        flt = MetadataFilter.parse(spec)
        assert flt is not None
        expected = [flt.matches(r) for r in rows]  # the reference semantics, which must not raise either
        assert index.mask(flt).tolist() == expected, spec
    gte = MetadataFilter.parse({"year": {"$gte": 2000}})
    assert gte is not None
    assert index.mask(gte).tolist() == [True, False, True, True, False, False, False]
