"""records_from_loaded: documents another library loaded, as source records."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import PurePosixPath
from typing import Any

import pytest

from graphfuse import InvalidInput
from graphfuse.indexing import records_from_loaded


def test_title_date_and_links_come_out_of_the_metadata() -> None:
    records = records_from_loaded(
        [
            (
                "a",
                "Alpha text.",
                {
                    "title": " Alpha ",
                    "created_at": "2024-05-01T12:00:00+02:00",
                    "links": ["b"],
                    "path": PurePosixPath("/data/a.txt"),
                    "day": date(2024, 5, 2),
                    "tags": ("x", "y"),
                    "nested": {"seen": datetime(2024, 1, 1, tzinfo=timezone.utc)},
                },
            ),
            ("b", "Beta text.", {"created_at": 1_700_000_000}),
        ]
    )
    a, b = records
    assert (a.id, a.title, a.links) == ("a", "Alpha", ("b",))
    assert a.created_at == datetime(2024, 5, 1, 10, tzinfo=timezone.utc)
    assert dict(a.metadata) == {
        "path": "/data/a.txt",
        "day": "2024-05-02",
        "tags": ["x", "y"],
        "nested": {"seen": "2024-01-01T00:00:00+00:00"},
    }
    assert b.created_at == datetime.fromtimestamp(1_700_000_000, tz=timezone.utc)
    assert (b.title, b.links) == (None, ())


def test_keys_can_be_renamed_or_turned_off() -> None:
    (rec,) = records_from_loaded(
        [("a", "text", {"title": "kept as metadata", "name": "Alpha", "last_modified_date": "2024-03-01"})],
        title_key="name",
        created_at_key="last_modified_date",
        links_key=None,
    )
    assert rec.title == "Alpha"
    assert rec.created_at == datetime(2024, 3, 1, tzinfo=timezone.utc)
    assert dict(rec.metadata) == {"title": "kept as metadata"}


def test_blank_documents_are_skipped_and_reported() -> None:
    skipped: list[tuple[str, str]] = []
    records = records_from_loaded(
        [("p1", "Page one.", {}), ("p2", "  \n", {}), ("p3", "Page three.", {})],
        on_skip=lambda doc_id, why: skipped.append((doc_id, why)),
    )
    assert [r.id for r in records] == ["p1", "p3"]
    assert skipped == [("p2", "no text")]


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ((None, "text", {}), r"document 0: no id"),
        (("", "text", {}), r"document 0: no id"),
        (("a", b"bytes", {}), r"document 0 \('a'\): text must be a string, got bytes"),
        (("a", "text", ["not", "a", "mapping"]), r"metadata must be a mapping, got list"),
        (("a", "text", {"title": 3}), r"metadata 'title' \(the title\) must be text, got 3"),
        (("a", "text", {"created_at": "last week"}), r"document 0 \('a'\): metadata 'created_at' is not an ISO 8601"),
        (("a", "text", {"links": "b"}), r"metadata 'links' \(the links\) must be a list of document ids"),
        (("a", "text", {"links": [3]}), r"document 0 \('a'\): metadata 'links' \(the links\) must be a list"),
        # (Unstructured's elements keep their hyperlinks under 'links': the message says what to do.)
        (("a", "text", {"links": [{"text": "x", "url": "https://e.com"}]}), r"pass links_key=None"),
        (("a", "text", {"obj": object()}), r"document 0 \('a'\): record 'a'"),
        (("a", "text", {"parent_id": "x"}), r"metadata key 'parent_id' is reserved"),
        (("a", "text", {"score": float("nan")}), r"JSON has no NaN"),
    ],
)
def test_bad_documents_are_named(doc: tuple[Any, Any, Any], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        records_from_loaded([doc])


def test_repeated_ids_are_all_listed() -> None:
    docs = [("a", "one", {}), ("b", "two", {}), ("a", "three", {}), ("b", "four", {}), ("c", "five", {})]
    with pytest.raises(InvalidInput, match=r"2 document id\(s\) given twice: 'a', 'b'"):
        records_from_loaded(docs)


def test_id_key_reads_the_id_from_the_metadata() -> None:
    records = records_from_loaded(
        [("ignored", "First.", {"path": "a.txt"}), (None, "Second.", {"path": "b.txt", "team": "x"})], id_key="path"
    )
    assert [(r.id, r.metadata["path"]) for r in records] == [("a.txt", "a.txt"), ("b.txt", "b.txt")]
    with pytest.raises(InvalidInput, match="document 1: no id"):
        records_from_loaded([("a", "First.", {"path": "a.txt"}), ("b", "Second.", {"path": 7})], id_key="path")
