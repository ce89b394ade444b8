"""One million passages on the embedded default (SQLite graph + LocalVectorStore).

Generates ``--n`` passages (Zipf vocabulary, tenant ``t0``..``t9``, each passage linking to
three earlier ones chosen with a power-law bias towards old ones), embeds them with the
HashingEmbedder (384 d, two worker processes), and reports as JSON:

- embedding rate (separately: it is the embedder, not the store);
- ingest rate (documents + relations + vectors built and written, batches of 10,000, after
  all embedding is done) overall and per tenth of the run, with the process RSS;
- approximate-index build time, then vector search p50/p99 and recall@10 against the store's
  exact scan (``exact=True``), without and with a 10 % tenant filter;
- the non-model stages (hydrate -> graph expansion -> temporal -> PageRank -> access -> scorer)
  from 50 seeds (the approximate top 50 of each query), p50/p99;
- PageRank after a 1 % update (new passages linking into the graph): the full store refresh
  (adjacency rebuild + PageRank + persisting the scores), and the power iteration alone, cold
  vs warm-started from the scores before the update;
- side by side at ``--peer-n`` vectors (the same vectors and queries): LlamaIndex's
  ``SimpleVectorStore`` (a pure-Python scan: it cannot answer a million in reasonable time),
  qdrant-edge-py (Qdrant's Rust engine, HNSW after ``optimize``) and LocalVectorStore.

    python benchmarks/scale_1m.py [--n 1000000] [--peer-n 100000] [--queries 200] [--dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, latency_ms, machine

from graphfuse import Candidate, Document, Pipeline, Query, RunContext, Stage, VectorRecord
from graphfuse.embedders import HashingEmbedder
from graphfuse.scoring import WeightedScorer
from graphfuse.stages import AccessPopularity, GraphExpansion, Hydrate, PageRank, TemporalDecay
from graphfuse.stores import LocalVectorStore, SQLiteGraphStore, pagerank_scores

DIMENSION = 384
BATCH = 10_000
LINKS = 3
WORDS = 16
VOCABULARY = 50_000
TENANTS = 10
SEEDS = 50
SIMPLE_QUERIES = 10  # SimpleVectorStore scans in Python: seconds per query at 100,000
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
_SYLLABLES = ("ka", "to", "ri", "men", "sa", "lo", "vu", "ne", "pi", "dar", "shi", "ex", "qu", "ba", "mo", "tel")


def _vocabulary() -> list[str]:
    rng = np.random.default_rng(12345)
    lengths = rng.integers(2, 5, VOCABULARY)
    picks = rng.integers(0, len(_SYLLABLES), (VOCABULARY, 4))
    return ["".join(_SYLLABLES[j] for j in picks[i, : lengths[i]]) + str(i % 7) for i in range(VOCABULARY)]


_VOCAB: list[str] | None = None


def texts(start: int, size: int, seed: int) -> list[str]:
    """Passages ``start``..``start+size`` (deterministic per ``seed`` and ``start``)."""
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = _vocabulary()
    vocab = _VOCAB
    rng = np.random.default_rng([seed, start])
    ranks = (rng.zipf(1.3, (size, WORDS)) - 1) % VOCABULARY
    return [" ".join(vocab[j] for j in row) for row in ranks.tolist()]


_WORD_VECTORS: np.ndarray | None = None


def word_vectors() -> np.ndarray:
    """The HashingEmbedder's vector of every vocabulary word (hashed word + character trigrams)."""
    global _WORD_VECTORS
    if _WORD_VECTORS is None:
        embedder = HashingEmbedder(DIMENSION)
        _WORD_VECTORS = np.asarray([embedder.embed(w) for w in _vocabulary()], dtype=np.float32)
    return _WORD_VECTORS


def embed_chunk(job: tuple[int, int, int]) -> tuple[int, list[str], np.ndarray, float]:
    """Passages and their vectors: the sum of their words' hashing vectors, L2-normalised.

    The same features as ``HashingEmbedder.embed`` of the passage except word bigrams, as one
    sparse product per batch: ``embed`` itself runs about 450 passages/s per process on this
    busy machine, which would take most of a million-passage run.
    """
    start, size, seed = job
    rng = np.random.default_rng([seed, start])
    ranks = (rng.zipf(1.3, (size, WORDS)) - 1) % VOCABULARY
    global _VOCAB
    if _VOCAB is None:
        _VOCAB = _vocabulary()
    vocab = _VOCAB
    chunk = [" ".join(vocab[j] for j in row) for row in ranks.tolist()]
    t = time.perf_counter()
    rows = np.repeat(np.arange(size), WORDS)
    counts = sp.csr_matrix((np.ones(rows.size, dtype=np.float32), (rows, ranks.ravel())), shape=(size, VOCABULARY))
    block = np.asarray(counts @ word_vectors(), dtype=np.float32)
    block /= np.linalg.norm(block, axis=1, keepdims=True)
    return start, chunk, block, time.perf_counter() - t


def links(start: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each passage i >= 1 links to LINKS earlier ones, biased (power law) towards old ones."""
    rng = np.random.default_rng([7, start])
    sources = np.repeat(np.arange(start, start + size), LINKS)
    sources = sources[sources > 0]
    targets = (sources * rng.random(sources.size) ** 3).astype(np.int64)
    return sources, targets


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def doc_id(i: int) -> str:
    return f"p{i:07d}"


def documents(start: int, chunk: Sequence[str]) -> list[Document]:
    return [
        Document(
            doc_id(start + k),
            text,
            {"tenant": f"t{(start + k) % TENANTS}", "access_count": (start + k) % 97},
            created_at=NOW - timedelta(days=(start + k) % 1000),
        )
        for k, text in enumerate(chunk)
    ]


def relations(start: int, size: int) -> list[Any]:
    from graphfuse import Relation

    s, t = links(start, size)
    return [Relation(doc_id(a), doc_id(b), "LINKS") for a, b in zip(s.tolist(), t.tolist(), strict=True)]


class Seeds:
    """Stands in for the semantic stage: hands over fixed candidates (ids + semantic signal)."""

    name = "seeds"

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []

    async def run(self, query: Query, candidates: Sequence[Candidate], context: RunContext) -> list[Candidate]:
        return list(self.candidates)


def embed_all(n: int, matrix: np.ndarray) -> tuple[list[str], dict[str, Any]]:
    """Phase 1: generate and embed every passage, before any write."""
    jobs = [(start, min(BATCH, n - start), 0) for start in range(0, n, BATCH)]
    corpus: list[str] = [""] * n
    embed_seconds = 0.0
    wall = time.perf_counter()
    word_vectors()
    for start, chunk, block, spent in map(embed_chunk, jobs):
        embed_seconds += spent
        matrix[start : start + len(chunk)] = block
        corpus[start : start + len(chunk)] = chunk
    return corpus, {
        "method": "sum of HashingEmbedder word vectors (sparse product), L2-normalised",
        "vectors_per_s": round(n / embed_seconds),
        "wall_s_with_text_generation": round(time.perf_counter() - wall, 1),
    }


async def ingest(
    graph: SQLiteGraphStore, vectors: LocalVectorStore, corpus: list[str], matrix: np.ndarray
) -> dict[str, Any]:
    """Phase 2: write documents, relations and vectors in batches; nothing else runs meanwhile."""
    n = len(corpus)
    store_seconds = 0.0
    tenth: list[dict[str, Any]] = []
    batches = list(range(0, n, BATCH))
    mark = max(1, len(batches) // 10)
    window_start_docs, window_seconds = 0, 0.0
    for done, start in enumerate(batches, 1):
        chunk = corpus[start : start + BATCH]
        block = matrix[start : start + len(chunk)]
        t = time.perf_counter()
        docs = documents(start, chunk)
        rels = relations(start, len(chunk))
        records = [VectorRecord(d.id, block[k], {"tenant": d.metadata["tenant"]}) for k, d in enumerate(docs)]
        await graph.store_documents(docs)
        await graph.create_relations(rels)
        await vectors.upsert(records)
        spent_store = time.perf_counter() - t
        store_seconds += spent_store
        window_seconds += spent_store
        if done % mark == 0 or done == len(batches):
            docs_now = start + len(chunk)
            tenth.append(
                {
                    "passages": docs_now,
                    "passages_per_s": round((docs_now - window_start_docs) / window_seconds),
                    "rss_mb": round(rss_mb()),
                }
            )
            print(f"  ingested {docs_now:,} ({tenth[-1]['passages_per_s']:,}/s, RSS {tenth[-1]['rss_mb']} MB)")
            window_start_docs, window_seconds = docs_now, 0.0
    return {
        "passages": n,
        "relations": await graph.count_relations(),
        "ingest_passages_per_s": round(n / store_seconds),
        "ingest_seconds": round(store_seconds, 1),
        "per_tenth": tenth,
        "rss_mb_after": round(rss_mb()),
        "peak_rss_mb": round(peak_rss_mb()),
    }


async def search_rows(
    vectors: LocalVectorStore, queries: np.ndarray, label: str
) -> tuple[list[dict[str, Any]], list[list[str]]]:
    rows = []
    tops: list[list[str]] = []
    for name, flt in (("no filter", None), ("tenant filter (10 %)", {"tenant": "t3"})):
        exact_t, approx_t, found = [], [], 0
        for q in queries:
            t = time.perf_counter()
            exact = await vectors.search(q, limit=10, filter=flt, exact=True)
            exact_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            approx = await vectors.search(q, limit=10, filter=flt)
            approx_t.append(time.perf_counter() - t)
            found += len({h.id for h in exact} & {h.id for h in approx})
        rows.append({"engine": label, "search": f"exact, {name}", **latency_ms(exact_t), "recall_at_10": 1.0})
        rows.append(
            {
                "engine": label,
                "search": f"{vectors.index_kind}, {name}",
                **latency_ms(approx_t),
                "recall_at_10": round(found / (10 * len(queries)), 4),
            }
        )
    for q in queries:
        tops.append([h.id for h in await vectors.search(q, limit=SEEDS)])
    return rows, tops


async def stage_rows(graph: SQLiteGraphStore, n: int, runs: int) -> dict[str, Any]:
    seeds = Seeds()
    stages: list[Stage] = [
        seeds,
        Hydrate(graph),
        GraphExpansion(graph, depth=2, max_expansion=100),
        TemporalDecay(clock=lambda: NOW),
        PageRank(graph),
        AccessPopularity(),
    ]
    pipeline = Pipeline(stages, scorer=WeightedScorer())
    timings = []
    rng = np.random.default_rng(5)
    for _ in range(runs):
        # 50 seeds as the semantic stage would hand them over (ids + a semantic signal).
        picks = rng.choice(n, SEEDS, replace=False)
        scores = np.sort(rng.random(SEEDS))[::-1]
        seeds.candidates = [
            Candidate(Document(doc_id(int(i))), {"semantic": float(s)})
            for i, s in zip(picks.tolist(), scores.tolist(), strict=True)
        ]
        t = time.perf_counter()
        await pipeline.aretrieve("q", top_k=10)
        timings.append(time.perf_counter() - t)
    return {"stages": "hydrate, graph (depth 2, cap 100), temporal, pagerank, access, scorer", **latency_ms(timings)}


async def pagerank_update(graph: SQLiteGraphStore, n: int, matrix_dim: int) -> dict[str, Any]:
    t = time.perf_counter()
    await graph.refresh_pagerank()
    first = time.perf_counter() - t
    ids_before, adj_before = await graph.adjacency()
    coo = adj_before.tocoo()
    before = pagerank_scores(len(ids_before), coo.row, coo.col, coo.data)
    extra = max(1, n // 100)
    embedder = HashingEmbedder(matrix_dim)
    new_docs = documents(n, texts(n, extra, 1))
    del embedder
    t = time.perf_counter()
    await graph.store_documents(new_docs)
    await graph.create_relations(relations(n, extra))
    write = time.perf_counter() - t
    t = time.perf_counter()
    await graph.refresh_pagerank()
    refresh = time.perf_counter() - t
    ids_after, adj_after = await graph.adjacency()
    coo = adj_after.tocoo()
    position = {d: i for i, d in enumerate(ids_before)}
    start = np.asarray([before[position[d]] if d in position else before.mean() for d in ids_after])
    t = time.perf_counter()
    cold = pagerank_scores(len(ids_after), coo.row, coo.col, coo.data)
    cold_s = time.perf_counter() - t
    t = time.perf_counter()
    warm = pagerank_scores(len(ids_after), coo.row, coo.col, coo.data, start=start)
    warm_s = time.perf_counter() - t
    return {
        "initial_refresh_s": round(first, 2),
        "update_passages": extra,
        "update_write_s": round(write, 2),
        "refresh_after_update_s (adjacency rebuild + warm PageRank + persist)": round(refresh, 2),
        "power_iteration_cold_s": round(cold_s, 3),
        "power_iteration_warm_s": round(warm_s, 3),
        "warm_vs_cold_max_abs_diff": float(np.abs(warm - cold).max()),
    }


def peers(matrix: np.ndarray, tenants: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    n = len(matrix)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    qs = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    exact = {}
    for name, mask in (("no filter", None), ("tenant filter (10 %)", tenants == 3)):
        ref = []
        for q in qs:
            s = unit @ q
            if mask is not None:
                s = np.where(mask, s, -np.inf)
            ref.append(set(np.argsort(-s)[:10].tolist()))
        exact[name] = ref

    def recall(name: str, found: list[list[int]]) -> float:
        pairs = zip(found, exact[name][: len(found)], strict=True)
        return round(sum(len(set(f) & e) for f, e in pairs) / (10 * len(found)), 4)

    # LlamaIndex SimpleVectorStore.
    try:
        from llama_index.core.schema import TextNode
        from llama_index.core.vector_stores import SimpleVectorStore
        from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters, VectorStoreQuery

        t = time.perf_counter()
        store = SimpleVectorStore()
        step = 10_000
        for i in range(0, n, step):
            store.add(
                [
                    TextNode(id_=str(j), text="", embedding=matrix[j].tolist(), metadata={"tenant": int(tenants[j])})
                    for j in range(i, min(n, i + step))
                ]
            )
        build = time.perf_counter() - t
        flt = MetadataFilters(filters=[MetadataFilter(key="tenant", value=3)])
        for name, f in (("no filter", None), ("tenant filter (10 %)", flt)):
            times, found = [], []
            for q in queries[:SIMPLE_QUERIES]:
                t = time.perf_counter()
                res = store.query(VectorStoreQuery(query_embedding=q.tolist(), similarity_top_k=10, filters=f))
                times.append(time.perf_counter() - t)
                found.append([int(i) for i in res.ids or []])
            rows.append(
                {
                    "engine": "llama-index SimpleVectorStore (exact, pure Python)",
                    "n": n,
                    "search": name,
                    **latency_ms(times),
                    "recall_at_10": recall(name, found),
                    "queries": len(found),
                    "build_s": round(build, 1),
                }
            )
    except ImportError as exc:
        rows.append({"engine": "llama-index SimpleVectorStore", "skipped": str(exc)})
    # qdrant-edge-py.
    try:
        import qdrant_edge as q

        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            config = q.EdgeConfig(vectors={"": q.EdgeVectorParams(size=DIMENSION, distance=q.Distance.Cosine)})
            shard = q.EdgeShard.create(tmp, config)
            for i in range(0, n, 5000):
                shard.update(
                    q.UpdateOperation.upsert_points(
                        [
                            q.Point(j, matrix[j].tolist(), {"tenant": int(tenants[j])})
                            for j in range(i, min(n, i + 5000))
                        ]
                    )
                )
            shard.optimize()
            build = time.perf_counter() - t
            flt_q = q.Filter(must=[q.FieldCondition(key="tenant", match=q.MatchValue(3))])
            for name, f in (("no filter", None), ("tenant filter (10 %)", flt_q)):
                times, found = [], []
                for v in queries:
                    t = time.perf_counter()
                    points = shard.query(q.QueryRequest(limit=10, query=q.Query.Nearest(v.tolist()), filter=f))
                    times.append(time.perf_counter() - t)
                    found.append([int(p.id) for p in points])
                rows.append(
                    {
                        "engine": "qdrant-edge-py (HNSW, optimised)",
                        "n": n,
                        "search": name,
                        **latency_ms(times),
                        "recall_at_10": recall(name, found),
                        "queries": len(queries),
                        "build_s": round(build, 1),
                    }
                )
            shard.close()
    except ImportError as exc:
        rows.append({"engine": "qdrant-edge-py", "skipped": str(exc)})
    return rows


async def graphfuse_peer(matrix: np.ndarray, tenants: np.ndarray, queries: np.ndarray) -> list[dict[str, Any]]:
    store = LocalVectorStore()
    t = time.perf_counter()
    for i in range(0, len(matrix), BATCH):
        await store.upsert(
            [
                VectorRecord(doc_id(j), matrix[j], {"tenant": f"t{tenants[j]}"})
                for j in range(i, min(len(matrix), i + BATCH))
            ]
        )
    kind = await store.build_index()
    build = time.perf_counter() - t
    rows, _ = await search_rows(store, queries, f"graphfuse LocalVectorStore (in memory, {kind})")
    await store.close()
    return [{**r, "n": len(matrix), "build_s": round(build, 1)} for r in rows]


async def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/scale_1m.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="passages (default 1,000,000)")
    parser.add_argument("--peer-n", type=int, default=100_000, help="vectors for the side-by-side peers")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the store (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=RESULTS / "scale_1m.json")
    args = parser.parse_args()
    n = args.n
    directory = Path(tempfile.mkdtemp(prefix="scale-", dir=args.dir))
    started = time.perf_counter()
    results: dict[str, Any] = {}
    parameters = {"n": n, "peer_n": min(args.peer_n, n), "queries": args.queries, "dimension": DIMENSION}

    def save(phase: str) -> None:
        # Written after every phase: a run stopped early still reports what it measured.
        results["completed_phase"] = phase
        results["peak_rss_mb"] = round(peak_rss_mb())
        results["elapsed_s"] = round(time.perf_counter() - started, 1)
        payload = {"benchmark": "scale_1m", "machine": machine(), "parameters": parameters, "results": results}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"[{results['elapsed_s']} s] {phase} done -> {args.out}", flush=True)

    try:
        graph = SQLiteGraphStore(directory / "graph.sqlite")
        vectors = LocalVectorStore(directory / "vectors.sqlite")
        matrix = np.zeros((n, DIMENSION), dtype=np.float32)
        print(f"embedding {n:,} passages", flush=True)
        corpus, results["embedding"] = embed_all(n, matrix)
        print(f"ingesting {n:,} passages into {directory}", flush=True)
        results["ingest"] = await ingest(graph, vectors, corpus, matrix)
        del corpus
        save("ingest")
        results["pagerank"] = await pagerank_update(graph, n, DIMENSION)
        save("pagerank")
        results["stages_from_50_seeds"] = await stage_rows(graph, n, 100)
        save("stages")
        queries = embed_chunk((0, args.queries, 99))[2]
        peer_n = min(args.peer_n, n)
        tenants = np.arange(peer_n) % TENANTS
        results["side_by_side"] = {
            "n": peer_n,
            "rows": await graphfuse_peer(matrix[:peer_n], tenants, queries) + peers(matrix[:peer_n], tenants, queries),
        }
        save("side_by_side")
        print("building the approximate index", flush=True)
        t = time.perf_counter()
        kind = await vectors.build_index()
        results["index"] = {
            "kind": kind,
            "build_and_save_s": round(time.perf_counter() - t, 1),
            "rss_mb": round(rss_mb()),
        }
        save("index")
        rows, _ = await search_rows(vectors, queries, f"graphfuse LocalVectorStore (on disk, n={n:,})")
        default_ef = vectors.ef_search
        for ef in (128, 256):  # a narrower and a wider beam on the same index: the recall/latency trade
            vectors.ef_search = ef
            label = f"graphfuse LocalVectorStore (on disk, n={n:,}, ef_search={ef})"
            more, _ = await search_rows(vectors, queries, label)
            rows += [r for r in more if "hnsw" in str(r["search"])]
        vectors.ef_search = default_ef
        results["vector_search"] = rows
        save("vector_search")
        t = time.perf_counter()
        await vectors.close()
        results["index"]["close_with_save_s"] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        reopened = LocalVectorStore(directory / "vectors.sqlite")
        results["index"]["reopen_s"] = round(time.perf_counter() - t, 1)
        results["index"]["kind_after_reopen"] = reopened.index_kind
        await reopened.close()
        await graph.close()
        save("done")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "2")
    asyncio.run(main())
