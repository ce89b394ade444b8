"""A complete GraphFuse integration for a made-up host framework, on the public API only.

The host ("Hostlib") passes hits as plain dicts ``{"id", "text", "meta", "score"}``. The
integration offers the two things every integration does:

- ``GraphFusePostprocessor``: run one GraphFuse stage over the host's hits (re-signal, reorder);
- ``graphfuse_retriever``: answer the host's queries with a preset from the catalogue.

Run: ``python examples/minimal_integration.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from graphfuse import Candidate, Document, Query, Stage, parse_timestamp, presets
from graphfuse.embedders import HashingEmbedder
from graphfuse.hosts import run_stage, stage_traits
from graphfuse.indexing import Indexer, SourceRecord
from graphfuse.stages import TemporalDecay
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore
from graphfuse.validation import check_id, check_signal

Hit = dict[str, Any]
NO_QUERY = "(no query)"  # for stages that declare they never read the query


def to_candidate(hit: Hit) -> Candidate:
    """One host hit as a candidate, validated once (then the trusted constructors)."""
    meta = dict(hit.get("meta", {}))
    doc_id = check_id(hit["id"], "hit id")
    created = parse_timestamp(meta.get("created_at"), f"hit {doc_id!r} created_at")
    document = Document.trusted(doc_id, str(hit["text"]), meta, created)
    return Candidate.trusted(document, {"semantic": check_signal("semantic", float(hit["score"]))})


def to_hit(candidate: Candidate, original: Mapping[str, Any] | None) -> Hit:
    """Back to the host's shape, the signals kept where the host can see them."""
    base = dict(original or {"id": candidate.id, "text": candidate.document.content or "", "meta": {}})
    return {**base, "signals": dict(candidate.signals)}


class GraphFusePostprocessor:
    """Run a GraphFuse stage over host hits, with the pipeline's tracing, metrics and errors."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    async def aprocess(self, hits: Sequence[Hit], query: str | None = None) -> list[Hit]:
        if query is None and stage_traits(self.stage).reads_query:
            raise ValueError(f"stage {self.stage.name!r} reads the query: pass one")
        originals = {hit["id"]: hit for hit in hits}
        out = await run_stage(self.stage, Query(query or NO_QUERY), [to_candidate(h) for h in hits])
        return [to_hit(c, originals.get(c.id)) for c in out]


async def graphfuse_retriever(preset: str, records: Sequence[SourceRecord]) -> Any:
    """A host retriever answering with a catalogue preset over an in-memory store."""
    graph, vectors, embedder = InMemoryGraphStore(), LocalVectorStore(None), HashingEmbedder(64)
    await Indexer(graph, vectors, embedder).aindex(records)
    pipeline = await presets.abuild(preset, graph_store=graph, vector_store=vectors, embedder=embedder)

    async def retrieve(text: str) -> list[Hit]:
        return [
            {"id": r.id, "text": r.document.content, "meta": dict(r.document.metadata), "score": r.score}
            for r in await pipeline.aretrieve(text, top_k=3)
        ]

    return retrieve


async def main() -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def hit(doc_id: str, age_days: int, score: float) -> Hit:
        created = (now - timedelta(days=age_days)).isoformat()
        return {"id": doc_id, "text": f"a note {age_days} days old", "meta": {"created_at": created}, "score": score}

    hits = [hit("old", 365, 0.9), hit("new", 1, 0.8)]
    recency = GraphFusePostprocessor(TemporalDecay(clock=lambda: now))
    for hit in await recency.aprocess(hits):
        print(f"{hit['id']:>4} temporal={hit['signals']['temporal']:.3f}")
    retrieve = await graphfuse_retriever(
        "no_rerank",
        [SourceRecord("apples", "Apples grow in orchards."), SourceRecord("pears", "Pears ripen in late summer.")],
    )
    best = (await retrieve("apples in orchards"))[0]
    print("retrieved:", best["id"])


if __name__ == "__main__":
    asyncio.run(main())
