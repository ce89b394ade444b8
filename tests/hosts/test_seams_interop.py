"""The public interop surface for integrations: run_stage(s), trusted constructors, timestamps, filters, traits."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import pytest

from graphfuse import (
    Candidate,
    Document,
    InvalidInput,
    MetadataFilter,
    Query,
    RunContext,
    StageFailed,
    parse_timestamp,
    run_sync,
)
from graphfuse.hosts import StageTraits, run_stage, run_stages, stage_traits
from graphfuse.stages import AccessPopularity, GraphExpansion, PageRank, Rerank, TemporalDecay
from graphfuse.stores import InMemoryGraphStore, SQLiteGraphStore


class Twice:
    name = "twice"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> Sequence[Candidate]:
        return [*candidates, *candidates]


class Boom:
    name = "boom"

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> Sequence[Candidate]:
        raise RuntimeError("kaput")


async def test_run_stage_has_the_pipeline_semantics() -> None:
    docs = [Candidate(Document("a", "x", {"access_count": 5})), Candidate(Document("b", "y", {"access_count": 1}))]
    out = await run_stages([AccessPopularity()], Query("q"), docs)
    assert out[0].signals["access"] == 1.0
    with pytest.raises(StageFailed, match="stage 'twice' failed: InvalidInput: returned document 'a' twice"):
        await run_stage(Twice(), Query("q"), docs)
    with pytest.raises(StageFailed, match="stage 'boom' failed: RuntimeError: kaput") as info:
        await run_stage(Boom(), Query("q"), docs)
    assert isinstance(info.value.cause, RuntimeError)


def test_trusted_constructors_build_what_the_checked_ones_do() -> None:
    stamp = datetime(2026, 1, 1, tzinfo=timezone.utc)
    checked = Document("a", "text", {"k": 1}, stamp)
    trusted = Document.trusted("a", "text", {"k": 1}, stamp)
    assert trusted == checked
    with pytest.raises(TypeError):
        trusted.metadata["k"] = 2  # type: ignore[index]
    assert Candidate.trusted(trusted, {"semantic": 0.5}) == Candidate(checked, {"semantic": 0.5})


def test_parse_timestamp() -> None:
    utc = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert parse_timestamp("2026-01-01T00:00:00Z") == utc
    assert parse_timestamp(utc.timestamp()) == utc
    assert parse_timestamp(datetime(2026, 1, 1)) == utc
    assert parse_timestamp(None) is None
    with pytest.raises(InvalidInput, match="node 'n' created_at is not an ISO 8601 timestamp"):
        parse_timestamp("yesterday", "node 'n' created_at")
    with pytest.raises(InvalidInput, match="must be a datetime"):
        parse_timestamp(True)


def test_filters_combine_with_and() -> None:
    tenant = MetadataFilter.parse({"tenant": "acme"})
    lang = MetadataFilter.parse({"lang": "en"})
    assert tenant is not None
    assert lang is not None
    both = tenant & lang
    assert both.matches({"tenant": "acme", "lang": "en"})
    assert not both.matches({"tenant": "acme", "lang": "de"})
    assert (tenant & None) is tenant
    assert (None & tenant) is tenant


def test_stages_declare_their_traits() -> None:
    assert stage_traits(TemporalDecay()) == StageTraits(reads_query=False, needs_stores=False, in_memory_only=True)
    assert stage_traits(Twice()) == StageTraits()  # declares nothing: the cautious default
    assert stage_traits(Rerank.__new__(Rerank)).reads_query


def test_store_backed_stages_are_in_memory_only_over_a_store_that_never_suspends(tmp_path: Path) -> None:
    memory, sqlite = InMemoryGraphStore(), SQLiteGraphStore(str(tmp_path / "g.db"))
    try:
        for stage in (GraphExpansion, PageRank):
            assert stage_traits(stage(memory)) == StageTraits(reads_query=False, in_memory_only=True)
            assert stage_traits(stage(sqlite)) == StageTraits(reads_query=False)
    finally:
        run_sync(sqlite.close())
