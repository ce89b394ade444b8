"""The small corpus the LlamaIndex integration tests share (documents with links, timestamps, tenants)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from graphfuse import Document, Relation

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)

DOCS = [
    Document(
        "a",
        "Alpha reactors power the northern grid.",
        {"tenant": "acme", "access_count": 10},
        created_at=NOW - timedelta(days=1),
    ),
    Document(
        "b",
        "The northern grid links to the harbour substation.",
        {"tenant": "acme", "access_count": 100},
        created_at=NOW - timedelta(days=90),
    ),
    Document(
        "c",
        "The harbour substation was rebuilt after the flood.",
        {"tenant": "acme", "access_count": 0},
        created_at=NOW - timedelta(days=400),
    ),
    Document(
        "d", "Flood defences were funded by the city council.", {"tenant": "acme"}, created_at=NOW - timedelta(days=30)
    ),
    Document(
        "x",
        "Secret plans of another tenant about the harbour.",
        {"tenant": "other", "access_count": 5},
        created_at=NOW - timedelta(days=2),
    ),
    Document("e", "Unrelated notes about gardening tomatoes.", {"tenant": "acme", "access_count": 1}),
]
RELATIONS = [Relation("a", "b"), Relation("b", "c"), Relation("c", "d"), Relation("b", "x")]


def clock() -> datetime:
    return NOW
