"""Time-aware retrieval: time expressions -> UTC windows, the `time` stage, the timeline, multihop on a dated store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from graphfuse import Candidate, Document, InvalidInput, Query
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import StageRunContext
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.multihop import BM25Index, multihop
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore
from graphfuse.timeaware import TimeAware, Timeline, TimeWindow, parse_time

REF = datetime(2026, 5, 20, 12, 30, tzinfo=timezone.utc)  # a Wednesday


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def spans(text: str, reference: datetime | None = REF) -> list[tuple[datetime | None, datetime | None]]:
    return [(w.start, w.end) for w in parse_time(text, reference).windows]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what happened on 2026-04-30?", [(utc(2026, 4, 30), utc(2026, 5, 1))]),
        ("the talk of 2026/4/3", [(utc(2026, 4, 3), utc(2026, 4, 4))]),
        ("the song on 20260405", [(utc(2026, 4, 5), utc(2026, 4, 6))]),
        ("discussion on 20260901_13:00", [(utc(2026, 9, 1), utc(2026, 9, 2))]),
        ("on April 30, 2025", [(utc(2025, 4, 30), utc(2025, 5, 1))]),
        ("the 30th of April 2026", [(utc(2026, 4, 30), utc(2026, 5, 1))]),
        ("what did we do in March?", [(utc(2026, 3, 1), utc(2026, 4, 1))]),
        ("plans for in June", [(utc(2025, 6, 1), utc(2025, 7, 1))]),  # June 2026 is still ahead
        ("March 2024 sales", [(utc(2024, 3, 1), utc(2024, 4, 1))]),
        ("reports in 2025", [(utc(2025, 1, 1), utc(2026, 1, 1))]),
        ("lunch on the 8th", [(utc(2026, 5, 8), utc(2026, 5, 9))]),
        ("lunch on the 28th", [(utc(2026, 4, 28), utc(2026, 4, 29))]),  # not yet this month
        ("what did I say yesterday", [(utc(2026, 5, 19), utc(2026, 5, 20))]),
        ("three days ago", [(utc(2026, 5, 17), utc(2026, 5, 18))]),
        ("last week", [(utc(2026, 5, 11), utc(2026, 5, 18))]),
        ("next month", [(utc(2026, 6, 1), utc(2026, 7, 1))]),
        ("this weekend", [(utc(2026, 5, 23), utc(2026, 5, 25))]),
        ("on Friday", [(utc(2026, 5, 15), utc(2026, 5, 16))]),
        ("next Friday", [(utc(2026, 5, 22), utc(2026, 5, 23))]),
        ("before May 5", [(None, utc(2026, 5, 5))]),
        ("after 2026-05-05", [(utc(2026, 5, 6), None)]),
        ("since March 2026", [(utc(2026, 3, 1), None)]),
        ("between April 2 and April 9", [(utc(2026, 4, 2), utc(2026, 4, 10))]),
        ("what may happen, and can we march on?", []),  # lower-case month words are words
        ("how tall is Mount Everest?", []),
    ],
)
def test_expressions(text: str, expected: list[tuple[datetime | None, datetime | None]]) -> None:
    assert spans(text) == expected


def test_without_reference_only_expressions_with_a_year_count() -> None:
    assert spans("lunch on the 8th, yesterday, in March", None) == []
    assert spans("on 2026-04-30 and in March 2024", None) == [
        (utc(2026, 4, 30), utc(2026, 5, 1)),
        (utc(2024, 3, 1), utc(2024, 4, 1)),
    ]


def test_reference_is_utc_and_confidence_ranks_readings() -> None:
    local = datetime(2026, 5, 21, 1, 0, tzinfo=timezone(timedelta(hours=9)))  # 2026-05-20 16:00 UTC
    assert spans("yesterday", local) == [(utc(2026, 5, 19), utc(2026, 5, 20))]
    naive = datetime(2026, 5, 20, 23, 0)
    assert spans("today", naive) == [(utc(2026, 5, 20), utc(2026, 5, 21))]
    date, month, day = (parse_time(t, REF).windows[0].confidence for t in ("on 2026-04-30", "in March", "the 8th"))
    assert date > month > day
    window = TimeWindow(utc(2026, 1, 1), utc(2026, 1, 2), 1.0, "x")
    assert window.contains(utc(2026, 1, 1))
    assert not window.contains(utc(2026, 1, 2))  # half-open


def test_ordering_questions_name_both_events() -> None:
    q = parse_time("Did Li Hua thank Jennifer for the schedule before he asked to move the Thursday class?")
    assert q.order == "before"
    assert q.events == ("Did Li Hua thank Jennifer for the schedule", "he asked to move the Thursday class")
    assert parse_time("Did the band play after the dinner with Wolfgang?").order == "after"
    assert parse_time("What happened before May 5?", REF).order is None  # a window, not two events


def test_bad_input() -> None:
    with pytest.raises(InvalidInput, match="text must be a string"):
        parse_time(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="reference must be a datetime"):
        parse_time("today", "2026-01-01")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="mode must be one of"):
        TimeAware(mode="strict")
    with pytest.raises(InvalidInput, match="timeline must be a Timeline"):
        TimeAware([("a", REF)])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="timeline has document 'a' twice"):
        Timeline([("a", REF), ("a", REF)])
    with pytest.raises(InvalidInput, match="created_at of 'a' must be a datetime"):
        Timeline([("a", "2026-01-01")])  # type: ignore[list-item]


DOCS = [
    Document("apr30", "dinner invitation", created_at=utc(2026, 4, 30, 18)),
    Document("apr29", "promotion news", created_at=utc(2026, 4, 29, 9)),
    Document("mar", "rent transfer", created_at=utc(2026, 3, 2, 10)),
    Document("undated", "a note without a date"),
]
TIMELINE = Timeline([(d.id, d.created_at) for d in DOCS])


async def run(stage: TimeAware, text: str, candidates: list[Candidate], **options: object) -> list[Candidate]:
    query = Query(text, options={"time": options} if options else {})
    return list(await stage.run(query, candidates, StageRunContext()))


async def test_boost_keeps_everything_and_signals_the_window() -> None:
    candidates = [Candidate(d, {"semantic": 0.5}) for d in DOCS]
    out = {c.id: c.signals.get("time") for c in await run(TimeAware(), "what happened on 2026-04-30?", candidates)}
    assert out == {"apr30": 1.0, "apr29": 0.0, "mar": 0.0, "undated": None}


async def test_filter_mode_drops_what_is_outside_and_keeps_undated_unless_asked() -> None:
    candidates = [Candidate(d, {"semantic": 0.5}) for d in DOCS]
    stage = TimeAware(mode="filter")
    assert [c.id for c in await run(stage, "in April 2026", candidates)] == ["apr30", "apr29", "undated"]
    got = await run(stage, "in April 2026", candidates, keep_undated=False)
    assert [c.id for c in got] == ["apr30", "apr29"]
    got = await run(TimeAware(), "in April 2026", candidates, mode="filter")
    assert [c.id for c in got] == ["apr30", "apr29", "undated"]


async def test_relative_expressions_use_the_reference_given_with_the_query() -> None:
    candidates = [Candidate(Document(d.id), {"semantic": 0.5}) for d in DOCS]  # not hydrated: timeline look-up
    stage = TimeAware(TIMELINE, window_limit=0)
    got = {c.id: c.signals.get("time") for c in await run(stage, "what was said yesterday?", candidates)}
    assert got["apr30"] is None  # no reference: no window
    got = await run(stage, "what was said yesterday?", candidates, reference="2026-05-01T08:00:00Z")
    assert {c.id: c.signals.get("time") for c in got}["apr30"] == 0.9
    with pytest.raises(InvalidInput, match="'reference' 'soon' is not an ISO 8601 time"):
        await run(stage, "yesterday", candidates, reference="soon")
    with pytest.raises(InvalidInput, match="unknown per-call option"):
        await run(stage, "yesterday", candidates, when="now")


async def test_a_narrow_window_adds_its_documents_a_wide_one_does_not() -> None:
    stage = TimeAware(TIMELINE, window_limit=1)
    assert [c.id for c in await run(stage, "what happened on 2026-04-30?", [])] == ["apr30"]
    assert await run(stage, "what happened in 2026?", []) == []  # three documents: too wide
    filtered = Query("what happened on 2026-04-30?", filter={"lang": "en"})
    assert await stage.run(filtered, [], StageRunContext()) == []  # the timeline cannot check a filter


async def test_ordering_question_retrieves_both_events() -> None:
    bm25 = BM25Index((d.id, d.content or "") for d in DOCS)
    stage = TimeAware(TIMELINE, bm25=bm25, event_limit=1)
    got = await run(stage, "Did the promotion news come before the dinner invitation?", [])
    assert sorted(c.id for c in got) == ["apr29", "apr30"]
    assert all(c.signals["event"] == 1.0 for c in got)


async def test_multihop_uses_the_time_stage_only_on_a_dated_store() -> None:
    records = [
        SourceRecord("a", "Band practice: we chose a new song.", created_at=utc(2026, 4, 5, 10)),
        SourceRecord("b", "Band practice: we chose a new song.", created_at=utc(2026, 4, 12, 10)),
    ]
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    await Indexer(graph, vectors, embedder).aindex(records)
    bm25 = BM25Index((r.id, r.text) for r in records)
    dated = multihop(graph, vectors, embedder, bm25=bm25, timeline=Timeline((r.id, r.created_at) for r in records))
    assert "time" in [s.name for s in dated.stages]
    for day, expected in (("20260405", "a"), ("2026-04-12", "b")):
        results = await dated.aretrieve(f"Which song did the band choose on {day}?", top_k=1)
        assert results[0].id == expected
    undated = multihop(graph, vectors, embedder, bm25=bm25, timeline=Timeline((r.id, None) for r in records))
    assert "time" not in [s.name for s in undated.stages]


async def test_timeline_from_a_store() -> None:
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(), HashingEmbedder(64)
    records = [SourceRecord("a", "dated", created_at=utc(2026, 4, 5, 10)), SourceRecord("b", "undated")]
    await Indexer(graph, vectors, embedder).aindex(records)
    timeline = await Timeline.afrom_store(graph)
    assert (len(timeline), timeline.undated) == (1, 1)
    assert timeline.created_at("a") == utc(2026, 4, 5, 10)
    assert list(timeline.between(utc(2026, 4, 5), utc(2026, 4, 6))) == ["a"]
    with pytest.raises(InvalidInput, match="cannot list its documents"):
        await Timeline.afrom_store(object())  # type: ignore[arg-type]


def test_registry_builds_the_time_stage_with_a_timeline_from_a_corpus(tmp_path: Path) -> None:
    from graphfuse.plugins import Components, get_registry

    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"id": "a", "text": "x", "created_at": "2026-04-05T10:00:00Z"}\n', encoding="utf-8")
    stage = get_registry().build_stage("time", Components(), corpus=str(corpus), mode="filter")
    assert isinstance(stage, TimeAware)
    assert "mode='filter'" in repr(stage)
    assert "1 dated" in repr(stage)
