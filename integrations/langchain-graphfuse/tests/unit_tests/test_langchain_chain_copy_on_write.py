"""A chain of runnables never mutates documents from elsewhere; the documents a GraphFuse runnable returned
are GraphFuse's own, and the next GraphFuse runnable updates them in place (same results as copying them)."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_graphfuse import AccessPopularityRunnable, PageRankRunnable, TemporalDecayRunnable, WeightedFusion

from graphfuse import InvalidInput


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


def _shown(docs: list[Document]) -> list[tuple[Any, ...]]:
    return [(d.id, d.page_content, d.metadata) for d in docs]


@pytest.mark.parametrize("sync", [True, False])
async def test_the_input_is_untouched_and_later_steps_update_graphfuses_own_documents(
    backend: Any, clock: Any, now: datetime, sync: bool
) -> None:
    steps = [
        TemporalDecayRunnable(clock=clock),
        PageRankRunnable(backend.graph_store),
        AccessPopularityRunnable(),
        WeightedFusion({"retrieval": 0.5, "access": 0.5}),
    ]
    first = documents(now)
    untouched = copy.deepcopy(first)
    current = first
    for k, step in enumerate(steps):
        reference = copy.deepcopy(current)  # a plain list of documents from elsewhere: copied
        expected = step.invoke(reference) if sync else await step.ainvoke(reference)
        out = step.invoke(current) if sync else await step.ainvoke(current)
        assert _shown(out) == _shown(expected)
        if k == 0:
            assert not {id(d) for d in out} & {id(d) for d in current}
        else:  # GraphFuse's own documents: updated in place, the same objects come back
            assert {id(d) for d in out} == {id(d) for d in current}
        current = out
    assert _shown(first) == _shown(untouched)
    signals = {d.id: d.metadata["graphfuse"]["signals"] for d in current}
    # One half-life old, whatever the offset the timestamp was written with.
    assert [signals[i]["temporal"] for i in ("ada", "babbage", "engine")] == pytest.approx([0.5, 0.5, 0.5])
    assert signals["babbage"]["access"] == 0.0
    assert [d.id for d in current] == ["ada", "engine", "babbage"]


def test_mutating_a_returned_document_does_not_reach_the_input(clock: Any, now: datetime) -> None:
    first = documents(now)
    out = TemporalDecayRunnable(clock=clock).invoke(first)
    again = AccessPopularityRunnable().invoke(out)
    assert again[0] is out[0]  # GraphFuse's own document, updated in place: the earlier list sees the update
    again[0].metadata["graphfuse"]["signals"]["temporal"] = 0.0
    assert "graphfuse" not in first[0].metadata


def test_a_copy_of_a_returned_list_is_copied_not_updated(clock: Any, now: datetime) -> None:
    out = TemporalDecayRunnable(clock=clock).invoke(documents(now))
    before = copy.deepcopy(out)
    again = AccessPopularityRunnable().invoke(list(out))
    assert _shown(out) == _shown(before)
    assert all("access" in d.metadata["graphfuse"]["signals"] for d in again)


def test_an_edited_namespace_is_read_afresh(clock: Any, now: datetime) -> None:
    out = TemporalDecayRunnable(clock=clock).invoke({"query": "engines", "documents": documents(now)})
    signals = out[0].metadata["graphfuse"]["signals"]
    was = signals["retrieval"]
    signals["retrieval"] = 1.5  # invalid now
    with pytest.raises(Exception, match="retrieval"):
        AccessPopularityRunnable().invoke(out)
    signals["retrieval"] = was  # as the runnable wrote it
    out[1].metadata["graphfuse"]["query"] = "other"
    with pytest.raises(Exception, match="different queries"):
        AccessPopularityRunnable().invoke(out)


def test_an_unhashable_timestamp_set_between_two_runnables_is_refused_like_before(clock: Any, now: datetime) -> None:
    out = TemporalDecayRunnable(clock=clock).invoke(documents(now))
    out[0].metadata["created_at"] = ["not", "a", "time"]
    reference = copy.deepcopy(out)
    step = TemporalDecayRunnable(clock=clock)
    with pytest.raises(InvalidInput, match="created_at") as expected:
        step.invoke(reference)
    with pytest.raises(InvalidInput, match="created_at") as got:
        step.invoke(out)
    assert str(got.value) == str(expected.value)
