"""Crash harness: kill -9 index and re-index runs at random points, re-run, compare.

Each trial copies a starting store (empty for ``index``, holding version 1 of a synthetic
corpus for ``reindex``), starts a worker process that indexes the corpus (version 1, or
version 2 with changed texts, metadata, chunking and links) into it, and kills the worker
with SIGKILL at a random point: either after a random delay, or (``--points``) right after
a random call into the graph or vector store. The worker is then run again without a kill;
the store must end exactly as after an uninterrupted run: documents (content and
metadata), relations (types and weights), vectors (values and metadata), PageRank and
manifest counts. Between the kill and the re-run, no ``pending`` document may be visible
to a query.

    python benchmarks/crash_harness.py                       # 20 trials -> results/crash_harness.json
    python benchmarks/crash_harness.py --trials 200 --documents 300

The test suite runs a small form (``tests/stores/test_crash_harness.py``). The harness reports and
exits 1 when a trial diverges.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
DIMENSION = 32
WORDS = "river stone castle harbour forest market bridge valley tower garden abbey meadow".split()  # noqa: SIM905


# -- the corpus -------------------------------------------------------------------------------


def corpus(n: int, version: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` records whose texts mention each other's titles; version 2 changes about a third."""
    rng = random.Random(seed)
    titles = [f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}" for i in range(n)]
    out = []
    for i in range(n):
        changed = version == 2 and i % 3 == 0
        mentions = rng.sample(range(n), k=min(3, n))
        words = rng.choices(WORDS, k=40 if i % 5 else 400)  # every fifth is long: chunked
        if changed and i % 2 == 0:
            words = words[:40] if len(words) > 40 else words * 10  # chunked <-> whole
        text = f"{titles[i]}. " + " ".join(words) + ". " + " ".join(f"See {titles[m]}." for m in mentions)
        if changed:
            text += " Revised."
        links = sorted({f"doc{rng.randrange(n)}" for _ in range(2)} - {f"doc{i}"})
        if changed:
            links = links[:1]
        out.append(
            {
                "id": f"doc{i}",
                "title": titles[i],
                "text": text,
                "metadata": {"group": i % 4, "version": version if changed else 1},
                "links": links,
            }
        )
    return out


# -- the worker (a separate process) ----------------------------------------------------------


def _install_kill_point(store: Any, point: str) -> None:
    """Wrap the store's write methods so the process SIGKILLs itself after call ``point``.

    ``point`` is ``"<method>:<n>"``: after the ``n``-th call (1-based) of that method on the
    graph or vector store completes.
    """
    method, _, count = point.partition(":")
    remaining = [int(count)]
    for target in (store.graph, store.vectors):
        original = getattr(target, method, None)
        if original is None:
            continue

        async def wrapped(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
            result = await _original(*args, **kwargs)
            remaining[0] -= 1
            if remaining[0] == 0:
                os.kill(os.getpid(), signal.SIGKILL)
            return result

        setattr(target, method, wrapped)


async def _work(directory: Path, records: list[dict[str, Any]], batch_size: int, point: str | None) -> None:
    from graphfuse.embedders import HashingEmbedder
    from graphfuse.indexing import Indexer, SourceRecord, TitleLinker
    from graphfuse.stores import LocalStore

    store = LocalStore.open(directory)
    try:
        if point:
            _install_kill_point(store, point)
        indexer = Indexer(
            store.graph, store.vectors, HashingEmbedder(DIMENSION), extractors=[TitleLinker()], batch_size=batch_size
        )
        await indexer.aindex([SourceRecord(**{**r, "links": tuple(r["links"])}) for r in records])
    finally:
        await store.aclose()


def run_worker(directory: Path, records_file: Path, batch_size: int, point: str | None = None) -> int:
    """Run one worker process to completion (or to its kill point); its return code."""
    argv = [sys.executable, __file__, "worker", str(directory), str(records_file), str(batch_size)]
    if point:
        argv.append(point)
    return subprocess.run(argv, check=False, capture_output=True, timeout=300).returncode


def run_and_kill(directory: Path, records_file: Path, batch_size: int, delay: float) -> bool:
    """Start a worker and SIGKILL it after ``delay`` seconds; True if it was killed mid-run."""
    argv = [sys.executable, __file__, "worker", str(directory), str(records_file), str(batch_size)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        return True


# -- comparing stores -------------------------------------------------------------------------


def store_state(directory: Path) -> dict[str, Any]:
    """Everything an index run decides, read straight from the store's files (read-only)."""
    graph = sqlite3.connect(f"file:{directory / 'graph.sqlite'}?mode=ro", uri=True)
    vectors = sqlite3.connect(f"file:{directory / 'vectors.sqlite'}?mode=ro", uri=True)
    try:
        documents = {i: [c, json.loads(m)] for i, c, m in graph.execute("SELECT id, content, metadata FROM documents")}
        relations = sorted(
            [s, t, k, round(w, 9)]
            for s, t, k, w in graph.execute(
                "SELECT a.id, b.id, r.type, r.weight FROM relations r "
                "JOIN documents a ON a.node = r.source JOIN documents b ON b.node = r.target"
            )
        )
        vector_rows = {
            i: [v.hex(), json.loads(m)] for i, v, m in vectors.execute("SELECT id, vector, metadata FROM vectors")
        }
    finally:
        graph.close()
        vectors.close()
    return {"documents": documents, "relations": relations, "vectors": vector_rows, "pagerank": _pagerank(directory)}


def _pagerank(directory: Path) -> dict[str, float]:
    from graphfuse.stores import LocalStore

    async def go() -> dict[str, float]:
        store = LocalStore.open(directory, create=False)
        try:
            scores = await store.graph.pagerank()
            counts = store.manifest["counts"]
        finally:
            await store.aclose()
        return {**{k: round(v, 6) for k, v in scores.items()}, "__counts__": counts}

    return asyncio.run(go())


def visible_pending(directory: Path) -> list[str]:
    """Documents marked pending that a query through ``Hydrate`` would still return (should be none)."""
    from graphfuse import Candidate, Document, Query
    from graphfuse.stages import Hydrate
    from graphfuse.stores import LocalStore

    async def go() -> list[str]:
        store = LocalStore.open(directory, create=False)
        try:
            graph = store.graph
            ids = [d.id async for d in graph.iter_documents()]
            hydrate = Hydrate(graph)
            out = await hydrate.run(Query("x"), [Candidate(Document(i), {}) for i in ids], None)  # type: ignore[arg-type]
            return [c.id for c in out if c.document.metadata.get("graphfuse_state") == "pending"]
        finally:
            await store.aclose()

    return asyncio.run(go())


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Human-readable differences between two :func:`store_state` results (empty when equal)."""
    out = []
    for part in ("documents", "vectors", "pagerank"):
        a, b = expected[part], actual[part]
        missing, extra = sorted(set(a) - set(b)), sorted(set(b) - set(a))
        changed = sorted(k for k in set(a) & set(b) if a[k] != b[k])
        for what, ids in (("missing", missing), ("extra", extra), ("different", changed)):
            if ids:
                out.append(f"{part}: {len(ids)} {what} ({', '.join(ids[:5])})")
    if expected["relations"] != actual["relations"]:
        a = {tuple(r) for r in expected["relations"]}
        b = {tuple(r) for r in actual["relations"]}
        out.append(f"relations: {len(a - b)} missing, {len(b - a)} extra")
    return out


# -- trials -----------------------------------------------------------------------------------


_POINT_METHODS = ("store_documents", "delete_relations", "delete_documents", "create_relations", "upsert", "delete")


def trials(
    n_trials: int, documents: int, batch_size: int, seed: int, points_share: float, workdir: Path
) -> dict[str, Any]:
    """Run the trials; returns a summary with every divergence."""
    rng = random.Random(seed)
    v1, v2 = workdir / "v1.json", workdir / "v2.json"
    v1.write_text(json.dumps(corpus(documents, 1)))
    v2.write_text(json.dumps(corpus(documents, 2)))
    empty, indexed = workdir / "empty", workdir / "indexed"
    if run_worker(indexed, v1, batch_size) != 0:
        raise RuntimeError("the uninterrupted version-1 run failed")
    reference: dict[str, dict[str, Any]] = {}
    durations: dict[str, float] = {}
    for scenario, base, records in (("index", empty, v1), ("reindex", indexed, v2)):
        target = workdir / f"reference-{scenario}"
        if base.exists():
            shutil.copytree(base, target)
        started = time.perf_counter()
        if run_worker(target, records, batch_size) != 0:
            raise RuntimeError(f"the uninterrupted {scenario} run failed")
        durations[scenario] = time.perf_counter() - started
        reference[scenario] = store_state(target)
    # "revert": the killed run indexes version 2 over version 1, the re-run version 1 again.
    reference["revert"], durations["revert"] = reference["index"], durations["reindex"]
    scenarios = {"index": (empty, v1, v1), "reindex": (indexed, v2, v2), "revert": (indexed, v2, v1)}
    results = []
    for trial in range(n_trials):
        scenario = ("index", "reindex", "revert")[trial % 3]
        base, records, rerun = scenarios[scenario]
        target = workdir / f"trial-{trial}"
        if base.exists():
            shutil.copytree(base, target)
        if rng.random() < points_share:
            point = f"{rng.choice(_POINT_METHODS)}:{rng.randint(1, max(1, documents // batch_size))}"
            code = run_worker(target, records, batch_size, point)
            killed = code == -signal.SIGKILL
            how = point
        else:
            delay = rng.uniform(0.0, durations[scenario])
            killed = run_and_kill(target, records, batch_size, delay)
            how = f"after {delay:.2f}s"
        ghosts = visible_pending(target) if (target / "manifest.json").exists() else []
        if run_worker(target, rerun, batch_size) != 0:
            diverged = ["the re-run failed"]
        else:
            diverged = differences(reference[scenario], store_state(target))
        if ghosts:
            diverged.append(f"{len(ghosts)} pending documents visible after the kill ({', '.join(ghosts[:5])})")
        results.append({"trial": trial, "scenario": scenario, "kill": how, "killed": killed, "differences": diverged})
        shutil.rmtree(target)
    return {
        "documents": documents,
        "batch_size": batch_size,
        "trials": n_trials,
        "killed": sum(r["killed"] for r in results),
        "diverged": sum(bool(r["differences"]) for r in results),
        "uninterrupted_seconds": {k: round(v, 3) for k, v in durations.items()},
        "results": results,
    }


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["worker"]:
        _, directory, records_file, batch_size, *point = args
        records = json.loads(Path(records_file).read_text())
        asyncio.run(_work(Path(directory), records, int(batch_size), point[0] if point else None))
        return 0
    parser = argparse.ArgumentParser(prog="benchmarks/crash_harness.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--documents", type=int, default=120)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--points", type=float, default=0.5, help="share of trials killed at a store call")
    parser.add_argument("--out", type=Path, default=RESULTS / "crash_harness.json")
    opts = parser.parse_args(args)
    with tempfile.TemporaryDirectory(prefix="graphfuse-crash-") as tmp:
        summary = trials(opts.trials, opts.documents, opts.batch_size, opts.seed, opts.points, Path(tmp))
    summary["command"] = "python benchmarks/crash_harness.py " + " ".join(args)
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"{summary['trials']} trials ({summary['killed']} killed mid-run): {summary['diverged']} diverged "
        f"from the uninterrupted run -> {opts.out}"
    )
    for r in summary["results"]:
        if r["differences"]:
            print(f"  trial {r['trial']} ({r['scenario']}, kill {r['kill']}): {'; '.join(r['differences'])}")
    return 1 if summary["diverged"] else 0


if __name__ == "__main__":
    sys.exit(main())
