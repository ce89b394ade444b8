"""Model-based test of indexing as one unit of work (hypothesis stateful testing).

Random sequences of index / re-index / delete calls, some of which fail at a random store
call (an exception there leaves the stores exactly as a kill -9 at that point would: the
indexer runs no clean-up code), each failure followed by a re-run (of the same records, or
of the previous versions: a "revert"). Checked after every step:

- against a plain-Python reference model (which documents exist with which text, title and
  metadata; every unit has its vector; nothing pending; no vector without its document;
  ``LINKS_TO`` only between live documents);
- against a shadow system that ran only the calls that succeeded, without any failure:
  documents, metadata, relations with weights, vectors and PageRank must be identical.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from graphfuse.embedders import HashingEmbedder
from graphfuse.indexing import Indexer, SourceRecord, TitleLinker, TokenChunker
from graphfuse.stores import InMemoryGraphStore, LocalVectorStore

DIM = 16
IDS = [f"d{i}" for i in range(6)]
TITLES = {f"d{i}": name for i, name in enumerate(["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot"])}
KINDS = ("LINKS_TO", "MENTIONS", "CO_MENTION", "PART_OF")
WRITES = ("store_documents", "delete_relations", "delete_documents", "create_relations", "upsert", "delete")


def _record(doc_id: str, variant: int) -> SourceRecord:
    i = IDS.index(doc_id)
    others = [IDS[(i + k) % len(IDS)] for k in (1, 2 + variant % 3)]
    text = f"{TITLES[doc_id]} version {variant}. " + " ".join(f"It mentions {TITLES[o]}." for o in others)
    if variant == 2:
        text += " Long appendix words" * 12  # chunked
    return SourceRecord(
        doc_id,
        text,
        title=TITLES[doc_id],
        metadata={"variant": variant, "tags": ["x"] * (variant % 2)},
        links=(others[variant % 2],),
    )


class _Failing:
    """Wraps a store: the ``n``-th call of ``method`` raises before doing anything."""

    def __init__(self, inner: Any, method: str, n: int) -> None:
        self._inner, self._method, self._left = inner, method, n

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name != self._method:
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            self._left -= 1
            if self._left == 0:
                raise OSError("injected failure")
            return await attr(*args, **kwargs)

        return call


class _System:
    def __init__(self) -> None:
        self.graph, self.vectors = InMemoryGraphStore(), LocalVectorStore()
        self.linker = TitleLinker()

    def indexer(self, graph: Any = None, vectors: Any = None) -> Indexer:
        return Indexer(
            graph or self.graph,
            vectors or self.vectors,
            HashingEmbedder(DIM),
            chunker=TokenChunker(max_tokens=24, overlap=4),
            extractors=[self.linker],
            batch_size=2,
        )

    async def state(self) -> dict[str, Any]:
        docs = {d.id: (d.content, dict(d.metadata)) async for d in self.graph.iter_documents()}
        relations: dict[tuple[str, str, str], float] = {}
        for kind in KINDS:
            ids, matrix = await self.graph.adjacency([kind])
            coo = matrix.tocoo()
            for i, j, w in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist(), strict=True):
                relations[(ids[i], ids[j], kind)] = round(w, 9)
        hits = await self.vectors.search([1.0] * DIM, limit=10_000)
        ranks = {k: round(v, 6) for k, v in (await self.graph.pagerank()).items()}
        return {"docs": docs, "relations": relations, "vectors": sorted(h.id for h in hits), "pagerank": ranks}


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


batches = st.lists(st.tuples(st.sampled_from(IDS), st.integers(0, 3)), min_size=1, max_size=4, unique_by=lambda t: t[0])


class IndexingMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.system = _System()
        self.shadow = _System()  # only the calls that succeeded, never a failure
        self.model: dict[str, int] = {}  # id -> variant indexed

    def _index(self, target: _System, records: list[SourceRecord], graph: Any = None, vectors: Any = None) -> None:
        _run(target.indexer(graph, vectors).aindex(records))

    @rule(batch=batches)
    def index(self, batch: list[tuple[str, int]]) -> None:
        records = [_record(i, v) for i, v in batch]
        self._index(self.system, records)
        self._index(self.shadow, records)
        self.model.update(batch)

    @rule(
        batch=batches,
        method=st.sampled_from(WRITES),
        n=st.integers(1, 4),
        revert=st.booleans(),
    )
    def index_fails_then_reruns(self, batch: list[tuple[str, int]], method: str, n: int, revert: bool) -> None:
        graph: Any = self.system.graph
        vectors: Any = self.system.vectors
        if method in ("upsert", "delete"):
            vectors = _Failing(vectors, method, n)
        else:
            graph = _Failing(graph, method, n)
        try:
            self._index(self.system, [_record(i, v) for i, v in batch], graph, vectors)
            failed = False
        except OSError:
            failed = True
        if failed and revert:
            # Re-run with what was there before (documents new in the batch stay out).
            rerun = [(i, self.model[i]) for i, _ in batch if i in self.model]
            stranded = [i for i, _ in batch if i not in self.model]
            if stranded:  # a failed first index of a document: deleting it is the clean-up
                _run(self.system.indexer().adelete(stranded))
                _run(self.shadow.indexer().adelete(stranded))
            if rerun:
                records = [_record(i, v) for i, v in rerun]
                self._index(self.system, records)
                self._index(self.shadow, records)
            return
        records = [_record(i, v) for i, v in batch]
        if failed:
            self._index(self.system, records)
        self._index(self.shadow, records)
        self.model.update(batch)

    @rule(ids=st.lists(st.sampled_from(IDS), min_size=1, max_size=3, unique=True), fail=st.integers(0, 3))
    def delete(self, ids: list[str], fail: int) -> None:
        if fail:
            method = ("store_documents", "delete", "delete_documents")[fail - 1]
            graph: Any = self.system.graph
            vectors: Any = self.system.vectors
            if method == "delete":
                vectors = _Failing(vectors, method, 1)
            else:
                graph = _Failing(graph, method, 1)
            with contextlib.suppress(OSError):
                _run(self.system.indexer(graph, vectors).adelete(ids))
        _run(self.system.indexer().adelete(ids))
        _run(self.shadow.indexer().adelete(ids))
        for i in ids:
            self.model.pop(i, None)

    @invariant()
    def matches_the_model_and_the_uninterrupted_run(self) -> None:
        state = _run(self.system.state())
        docs = {i: meta for i, (_, meta) in state["docs"].items() if meta.get("graphfuse_kind") == "document"}
        assert set(docs) == set(self.model)
        for doc_id, variant in self.model.items():
            expected = _record(doc_id, variant)
            content, meta = state["docs"][doc_id]
            assert content == expected.text
            assert meta["variant"] == variant
            assert meta["title"] == expected.title
        assert all(meta.get("graphfuse_state") == "indexed" for _, meta in state["docs"].values())
        units = {
            i
            for i, (_, meta) in state["docs"].items()
            if meta.get("graphfuse_kind") == "chunk" or meta.get("graphfuse_chunks", 1) <= 1
        }
        assert set(state["vectors"]) == units
        for s, t, kind in state["relations"]:
            assert s in state["docs"]
            assert t in state["docs"]
            if kind == "LINKS_TO":
                assert t in _record(s, self.model[s]).links
        assert state == _run(self.shadow.state())


IndexingMachine.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    report_multiple_bugs=False,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
TestIndexing = pytest.mark.slow(IndexingMachine.TestCase)
