"""The argument checks hosts share with the core: vectors from a host's model or store, half-lives,
filters given as mappings, and the query a host runs stages with."""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphfuse import InvalidInput, MetadataFilter, VectorRecord
from graphfuse.hosts import NO_QUERY, host_query
from graphfuse.validation import (
    check_half_life,
    check_keywords,
    check_vector,
    check_vector_records,
    check_vectors,
    combine_filters,
)


class Float32(float):
    """A real number that is not a Python float (numpy's float32 is registered as numbers.Real)."""


def test_vectors_are_checked_and_returned_as_floats() -> None:
    assert check_vector((1, 2.5), 2, "Model") == [1.0, 2.5]
    assert type(check_vector([Float32(0.5)], None, "Model")[0]) is float
    for bad, message in [
        ("ab", "Model returned str, not a vector"),
        ([1.0], "Model returned a vector of dimension 1, expected 2"),
        ([1.0, float("nan")], "Model returned a vector holding nan"),
        ([1.0, True], "Model returned a vector holding True"),
        ([1.0, "2"], "Model returned a vector holding '2'"),
    ]:
        with pytest.raises(InvalidInput, match=message):
            check_vector(bad, 2, "Model")
    with pytest.raises(InvalidInput, match="Model returned an empty vector"):
        check_vector([], None, "Model")
    assert check_vectors([[1.0], [2.0]], 2, 1, "Model") == [[1.0], [2.0]]
    with pytest.raises(InvalidInput, match="Model returned 1 vectors for 2 texts"):
        check_vectors([[1.0]], 2, 1, "Model")
    with pytest.raises(InvalidInput, match="Model returned dict, not a list of vectors"):
        check_vectors({}, 0, 1, "Model")


def test_a_batch_of_vector_records_is_checked_before_any_write() -> None:
    assert check_vector_records([VectorRecord("a", [1, 0]), VectorRecord("b", [0.5, 0.5])], 2) == [
        [1.0, 0.0],
        [0.5, 0.5],
    ]
    with pytest.raises(InvalidInput, match="the same vector id twice"):
        check_vector_records([VectorRecord("a", [1.0]), VectorRecord("a", [2.0])], None)
    with pytest.raises(InvalidInput, match="vector 'b' has dimension 1, expected 2"):
        check_vector_records([VectorRecord("a", [1.0, 0.0]), VectorRecord("b", [1.0])], 2)
    for bad in ([], [float("inf")], "x"):
        with pytest.raises(InvalidInput, match="vector 'a' must be a non-empty list of finite numbers"):
            check_vector_records([VectorRecord("a", bad)], None)  # type: ignore[arg-type]


def test_half_life_as_a_timedelta_or_days_never_a_bare_number() -> None:
    assert check_half_life(None) == timedelta(days=90)
    assert check_half_life(None, 2.5) == timedelta(days=2.5)
    assert check_half_life(timedelta(hours=1)) == timedelta(hours=1)
    with pytest.raises(InvalidInput, match="a bare number has no unit, use half_life_days=30 for days"):
        check_half_life(30)
    with pytest.raises(InvalidInput, match="half_life must be a timedelta"):
        check_half_life("P30D")
    with pytest.raises(InvalidInput, match="not both"):
        check_half_life(timedelta(days=1), 1)
    with pytest.raises(InvalidInput, match="half_life_days must be a number of days, got '3'"):
        check_half_life(None, "3")


def test_filters_combine_from_mappings_and_filters() -> None:
    combined = combine_filters({"team": "a"}, None, MetadataFilter.parse({"year": {"$gte": 2020}}))
    assert combined is not None
    assert combined.to_dict() == {"team": {"$eq": "a"}, "year": {"$gte": 2020}}
    assert combine_filters(None, {}) is None
    with pytest.raises(InvalidInput, match="filter must be a mapping"):
        combine_filters(["team"])  # type: ignore[arg-type]


def test_the_query_a_host_runs_stages_with() -> None:
    query = host_query("who?", needs_query=True, filter={"team": "a"}, options={"graph": {"depth": 1}})
    assert (query.text, query.options) == ("who?", {"graph": {"depth": 1}})
    assert query.filter == MetadataFilter.parse({"team": "a"})
    assert host_query(None, needs_query=False).text == NO_QUERY
    assert host_query("  ", needs_query=False).text == NO_QUERY
    with pytest.raises(InvalidInput, match=r"^MyRunnable needs the query text, but none came: pass one$"):
        host_query(None, needs_query=True, what="MyRunnable", missing="none came: pass one")


def test_unknown_keyword_arguments_are_named_with_the_closest_known_one() -> None:
    check_keywords({"k": 1, "verbose": True}, ("k", "filter"), "MyRetriever", hidden=("verbose",))
    with pytest.raises(InvalidInput) as caught:
        check_keywords({"halflife": 1, "zzz": 2, "verbose": 3}, ("half_life", "missing"), "MyStage")
    assert str(caught.value) == (
        "MyStage got unknown keyword argument(s) 'halflife' (did you mean 'half_life'?), 'verbose', 'zzz'; "
        "it takes: half_life, missing"
    )
