"""The data model: validation, immutability, UTC timestamps, query options."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest

from graphfuse import Candidate, Document, InvalidInput, MetadataFilter, Query, Relation, VectorRecord


def test_document_defaults_and_immutability() -> None:
    d = Document("a")
    assert d.content is None
    assert not d.is_hydrated
    assert Document("a", "").is_hydrated
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.content = "x"  # type: ignore[misc]
    meta = {"k": 1}
    d = Document("a", "t", meta)
    meta["k"] = 2
    assert d.metadata["k"] == 1  # copied
    with pytest.raises(TypeError):
        d.metadata["k"] = 3  # type: ignore[index]


@pytest.mark.parametrize("bad_id", ["", "   ", None, 3, "x" * 513])
def test_document_id_validation(bad_id: object) -> None:
    with pytest.raises(InvalidInput, match="document id"):
        Document(bad_id)  # type: ignore[arg-type]


def test_document_field_validation() -> None:
    with pytest.raises(InvalidInput, match="content"):
        Document("a", 3)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="metadata"):
        Document("a", "t", [1])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="created_at must be a datetime"):
        Document("a", created_at="2024-01-01")  # type: ignore[arg-type]


def test_timestamps_are_utc() -> None:
    naive = datetime(2024, 1, 1, 12, 0)
    d = Document("a", created_at=naive)
    assert d.created_at == datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc)
    paris = timezone(timedelta(hours=2))
    d = Document("a", updated_at=datetime(2024, 1, 1, 14, 0, tzinfo=paris))
    assert d.updated_at == datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc)
    assert d.updated_at is not None
    assert d.updated_at.tzinfo == timezone.utc


def test_candidate_signals() -> None:
    c = Candidate(Document("a"), {"semantic": 1})
    assert c.signals["semantic"] == 1.0
    c2 = c.with_signal("graph", 0.5)
    assert dict(c.signals) == {"semantic": 1.0}
    assert dict(c2.signals) == {"semantic": 1.0, "graph": 0.5}
    c3 = c2.with_signals({"semantic": 0.2, "x.y": 0.1})
    assert dict(c3.signals) == {"semantic": 0.2, "graph": 0.5, "x.y": 0.1}
    assert c3.id == "a"
    hydrated = c3.with_document(Document("a", "text"))
    assert hydrated.document.content == "text"
    assert hydrated.signals == c3.signals
    with pytest.raises(InvalidInput, match="cannot replace document 'a' with 'b'"):
        c.with_document(Document("b"))


@pytest.mark.parametrize(
    ("signals", "message"),
    [
        ({"semantic": 1.5}, r"in \[0, 1\]"),
        ({"semantic": -0.1}, r"in \[0, 1\]"),
        ({"semantic": float("nan")}, r"in \[0, 1\]"),
        ({"semantic": True}, "must be a float"),
        ({"semantic": "0.5"}, "must be a float"),
        ({"bad name": 0.5}, "signal name"),
        ({"": 0.5}, "signal name"),
    ],
)
def test_candidate_signal_validation(signals: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Candidate(Document("a"), signals)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=message):
        Candidate(Document("a")).with_signals(signals)  # type: ignore[arg-type]


def test_candidate_needs_a_document() -> None:
    with pytest.raises(InvalidInput, match="must be a Document"):
        Candidate("a")  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["", " ", "\t\n", None, b"q"])
def test_query_text(text: object) -> None:
    with pytest.raises(InvalidInput, match="query text must be a non-empty string"):
        Query(text)  # type: ignore[arg-type]


def test_query_filter_and_options() -> None:
    q = Query.of("q", filter={"tenant": "acme"}, options={"semantic": {"limit": 3}})
    assert isinstance(q.filter, MetadataFilter)
    assert q.option("semantic", "limit", 50) == 3
    assert q.option("semantic", "min_score", None) is None
    assert q.option("graph", "depth", 2) == 2
    with pytest.raises(TypeError):
        q.options["semantic"]["limit"] = 4  # type: ignore[index]
    with pytest.raises(InvalidInput, match="options must be a mapping"):
        Query("q", options=[1])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="options for stage 'graph'"):
        Query("q", options={"graph": 2})  # type: ignore[dict-item]
    with pytest.raises(InvalidInput, match="filter"):
        Query("q", filter="tenant=acme")  # type: ignore[arg-type]


def test_query_of_refines_and_filters_are_anded() -> None:
    base = Query.of("q", filter={"tenant": "acme"}, options={"semantic": {"limit": 3}, "graph": {"depth": 1}})
    assert Query.of(base) is base
    refined = Query.of(base, filter={"lang": "en"}, options={"semantic": {"limit": 5}})
    assert refined.text == "q"
    assert refined.filter is not None
    assert refined.filter.matches({"tenant": "acme", "lang": "en"})
    assert not refined.filter.matches({"tenant": "globex", "lang": "en"})  # the tenant survives
    assert refined.option("semantic", "limit", None) == 5
    assert refined.option("graph", "depth", None) == 1
    assert Query.of(Query("q"), filter={"lang": "en"}).filter == MetadataFilter.parse({"lang": "en"})
    assert Query.of("text", filter={"a": 1}).filter == MetadataFilter.parse({"a": 1})


def test_relation_validation() -> None:
    r = Relation("a", "b")
    assert (r.type, r.weight) == ("RELATED", 1.0)
    for kwargs, message in [
        ({"type": "has space"}, "relation type"),
        ({"type": "1X"}, "relation type"),
        ({"weight": 0}, "weight"),
        ({"weight": float("inf")}, "weight"),
        ({"weight": True}, "weight"),
    ]:
        with pytest.raises(InvalidInput, match=message):
            Relation("a", "b", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="relation source"):
        Relation("", "b")


def test_vector_record_id() -> None:
    assert VectorRecord("a", [0.1]).id == "a"
    with pytest.raises(InvalidInput, match="vector id"):
        VectorRecord("", [0.1])
