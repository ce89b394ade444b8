"""A chain of runnables is copy-on-write: no step mutates what the previous one returned."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_graphfuse import AccessPopularityRunnable, PageRankRunnable, TemporalDecayRunnable, WeightedFusion


def documents(now: datetime) -> list[Document]:
    old = now - timedelta(days=90)
    stamps = {
        "ada": old.isoformat(),
        "babbage": old.astimezone(timezone(timedelta(hours=5))).isoformat(),  # same instant, another offset
        "engine": old.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return [
        Document(id=i, page_content=f"text of {i}", metadata={"created_at": s, "access_count": n})
        for (i, s), n in zip(stamps.items(), (10, 0, 5), strict=True)
    ]


@pytest.mark.parametrize("sync", [True, False])
async def test_every_step_leaves_its_input_untouched(backend: Any, clock: Any, now: datetime, sync: bool) -> None:
    steps = [
        TemporalDecayRunnable(clock=clock),
        PageRankRunnable(backend.graph_store),
        AccessPopularityRunnable(),
        WeightedFusion({"retrieval": 0.5, "access": 0.5}),
    ]
    current = documents(now)
    for step in steps:
        before = copy.deepcopy(current)
        out = step.invoke(current) if sync else await step.ainvoke(current)
        assert [d.metadata for d in current] == [d.metadata for d in before]
        assert not {id(d) for d in out} & {id(d) for d in current}
        current = out
    signals = {d.id: d.metadata["graphfuse"]["signals"] for d in current}
    # One half-life old, whatever the offset the timestamp was written with.
    assert [signals[i]["temporal"] for i in ("ada", "babbage", "engine")] == pytest.approx([0.5, 0.5, 0.5])
    assert signals["babbage"]["access"] == 0.0
    assert [d.id for d in current] == ["ada", "engine", "babbage"]


def test_mutating_a_returned_document_does_not_reach_the_input(clock: Any, now: datetime) -> None:
    first = documents(now)
    out = TemporalDecayRunnable(clock=clock).invoke(first)
    again = AccessPopularityRunnable().invoke(out)
    again[0].metadata["graphfuse"]["signals"]["temporal"] = 0.0
    assert out[0].metadata["graphfuse"]["signals"]["temporal"] == pytest.approx(0.5)
    assert "graphfuse" not in first[0].metadata
