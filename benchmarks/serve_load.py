"""Load on `graphfuse serve`: concurrent clients on loopback (retrieval, ingest, contexts), dashboard questions.

Bounded: ``--clients`` (50) clients for ``--seconds`` (60) per phase, at most ``--max-requests``
per phase, all to 127.0.0.1. The server is a real ``graphfuse serve`` process over the demo
store (the bundled sample, indexed into a temporary directory unless ``--store`` is given).

Phases (``--phases``, in order): ``retrieve`` (every client asks ``/v1/retrieve``), ``ingest``
(the same, with ``--ingest-clients`` of the clients ingesting one document per request) and
``context`` (every client alternates ``/v1/retrieve`` and ``/v1/context`` with the same
question, preset and ``top_k``, so both endpoints see the same load). During every phase one
more client asks ``/health`` and a dashboard file (``/style.css``) every 0.25 s: the file's
latency shows how long the loop that answers HTTP was held, ``/health``'s how long the store
took to answer its probes. Reports requests/s, p50, p95, p99 and errors (which must be 0: exit 1 otherwise).

``--dashboard N`` first asks N questions the way the dashboard does (its four requests at once:
retrieval and context of the basic preset ``minimal`` and the graph preset ``multihop``, the
graph one with its subgraph), before anything else, right after the server says it is ready:
the first question against the later ones. ``--python`` serves with another interpreter (another
install of GraphFuse), to compare two versions on the same store in alternation.

    python benchmarks/serve_load.py [--preset multihop] [--clients 50] [--seconds 60]
    python benchmarks/serve_load.py --store DOCS_STORE --questions q.txt --phases context --dashboard 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _common import RESULTS, write_results

from graphfuse.data import sample_corpus, sample_questions
from graphfuse.indexing import Indexer, read_sources
from graphfuse.stores import aopen_store, default_embedder

PHASES = ("retrieve", "ingest", "context")
HEALTH_EVERY = 0.25


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _build_demo_store(directory: Path) -> str:
    embedder = default_embedder()[0]
    with sample_corpus() as corpus:
        records = list(read_sources([corpus]))
    store = await aopen_store(directory, create=True, embedder=embedder)
    try:
        await Indexer.for_records(records, store.graph, store.vectors, store.embedder).aindex(records)
    finally:
        await store.aclose()
    return embedder


def _questions(path: Path | None) -> list[str]:
    if path is None:
        return [q.question for q in sample_questions()]
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line:
            out.append(str(json.loads(line)["question"]) if line.startswith("{") else line)
    return out


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _row(kind: str, done: list[float], errors: list[str], elapsed: float) -> dict[str, Any]:
    return {
        "requests": kind,
        "ok": len(done),
        "errors": len(errors),
        "requests_per_s": round(len(done) / elapsed, 2),
        "p50_ms": round(_percentile(done, 0.50) * 1000, 1),
        "p95_ms": round(_percentile(done, 0.95) * 1000, 1),
        "p99_ms": round(_percentile(done, 0.99) * 1000, 1),
        "max_ms": round(max(done, default=float("nan")) * 1000, 1),
        "first_error": errors[0] if errors else None,
    }


async def _phase(
    base: str, args: argparse.Namespace, questions: list[str], phase: str, warm: bool = False
) -> list[dict[str, Any]]:
    clients = 2 if warm else args.clients
    seconds = 600.0 if warm else args.seconds
    max_requests = 4 if warm else args.max_requests
    ingesters = args.ingest_clients if phase == "ingest" else 0
    kinds = ("retrieve", "context", "ingest", "health", "static file")
    latencies: dict[str, list[float]] = {k: [] for k in kinds}
    errors: dict[str, list[str]] = {k: [] for k in kinds}
    deadline = time.perf_counter() + seconds
    sent = 0
    limits = httpx.Limits(max_connections=clients + 1, max_keepalive_connections=clients + 1)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:

        async def timed(kind: str, request: Any) -> None:
            started = time.perf_counter()
            try:
                response = await request
                if response.status_code != 200:
                    errors[kind].append(f"HTTP {response.status_code}: {response.text[:200]}")
                    return
            except httpx.HTTPError as exc:
                errors[kind].append(f"{type(exc).__name__}: {exc}")
                return
            latencies[kind].append(time.perf_counter() - started)

        async def worker(n: int) -> None:
            nonlocal sent
            i = n
            while time.perf_counter() < deadline and sent < max_requests:
                sent += 1
                i += clients
                question = questions[i % len(questions)]
                if n < ingesters:
                    doc = {"id": f"load-{n}-{i}", "title": f"Load note {n}-{i}", "text": f"{question} (note {i})"}
                    await timed("ingest", client.post("/v1/ingest", json={"documents": [doc]}))
                    continue
                ask = {"query": question, "top_k": args.top_k, "preset": args.preset}
                if phase == "context":
                    # Alternate the order by client and round so neither endpoint always goes first.
                    both = [
                        ("retrieve", "/v1/retrieve", ask),
                        ("context", "/v1/context", {**ask, "budget": args.budget, "format": args.format}),
                    ]
                    for kind, path, body in both if (i // clients + n) % 2 else reversed(both):
                        await timed(kind, client.post(path, json=body))
                else:
                    await timed("retrieve", client.post("/v1/retrieve", json=ask))

        async def health() -> None:
            while time.perf_counter() < deadline and sent < max_requests:
                await timed("health", client.get("/health"))
                await timed("static file", client.get("/style.css"))
                await asyncio.sleep(HEALTH_EVERY)

        started = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(clients)), *([] if warm else [health()]))
        elapsed = time.perf_counter() - started
    return [_row(k, latencies[k], errors[k], elapsed) for k in kinds if latencies[k] or errors[k]]


async def _dashboard(base: str, questions: list[str], n: int) -> list[dict[str, Any]]:
    """``n`` questions asked as the dashboard asks them (``app.js``: four requests at once)."""
    rows = []
    async with httpx.AsyncClient(base_url=base, timeout=600) as client:
        for k, question in enumerate(questions[:n], 1):
            requests = {
                "retrieve minimal": ("/v1/retrieve", {"query": question, "top_k": 5, "preset": "minimal"}),
                "retrieve multihop": (
                    "/v1/retrieve",
                    {"query": question, "top_k": 5, "preset": "multihop", "graph": True},
                ),
                "context minimal": (
                    "/v1/context",
                    {"query": question, "budget": 2000, "format": "passages", "preset": "minimal", "top_k": 5},
                ),
                "context multihop": (
                    "/v1/context",
                    {"query": question, "budget": 2000, "format": "graph", "preset": "multihop", "top_k": 5},
                ),
            }
            started = time.perf_counter()
            answers = await asyncio.gather(*(client.post(path, json=body) for path, body in requests.values()))
            wall = time.perf_counter() - started
            row: dict[str, Any] = {"phase": "dashboard", "question": k, "wall_ms": round(wall * 1000, 1)}
            for name, r in zip(requests, answers, strict=True):
                if r.status_code != 200:
                    raise SystemExit(f"dashboard question {k}: {name} answered {r.status_code}: {r.text[:300]}")
                row[f"{name} took_ms"] = r.json()["took_ms"]
            rows.append(row)
            print(f"dashboard question {k}: {wall:.2f} s", file=sys.stderr)
    return rows


async def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> float:
    """Seconds until ``/health`` answers 200 and (when it says) the server is ready."""
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base, timeout=5) as client:
        for _ in range(6000):
            if proc.poll() is not None:
                raise SystemExit(f"graphfuse serve exited with {proc.returncode} (see its log)")
            try:
                r = await client.get("/health")
                if r.status_code == 200 and r.json().get("ready", True):
                    return time.perf_counter() - started
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("graphfuse serve did not come up")


async def main(args: argparse.Namespace) -> int:
    phases = [p for p in args.phases.split(",") if p]
    unknown = sorted(set(phases) - set(PHASES))
    if unknown:
        raise SystemExit(f"unknown phases {unknown}; known: {', '.join(PHASES)}")
    questions = _questions(args.questions)
    with tempfile.TemporaryDirectory(prefix="graphfuse-load-") as tmp:
        store = args.store or Path(tmp) / "store"
        print("indexing the demo store" if args.store is None else f"serving {store}", file=sys.stderr)
        embedder = await _build_demo_store(store) if args.store is None else "as recorded in the store"
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        cli = [args.python, "-m", "graphfuse.cli", "serve", "--store", str(store), "--port", str(port)]
        log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115, ASYNC230 - closed after the server exits
        launched = time.perf_counter()
        proc = subprocess.Popen(  # noqa: ASYNC220 - starting the server process does not wait for it
            [*cli, "--preset", args.preset], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        rows: list[dict[str, Any]] = []
        try:
            await _wait_ready(base, proc)
            rows.append({"phase": "start", "ready_s": round(time.perf_counter() - launched, 1)})
            if args.dashboard:
                rows += await _dashboard(base, questions, args.dashboard)
            # Warm up (model, caches, the preset's indexes) before anything is measured.
            print("server up; warming up", file=sys.stderr)
            await _phase(base, args, questions, "context" if "context" in phases else "retrieve", warm=True)
            for phase in phases:
                print(f"phase: {phase}", file=sys.stderr)
                for row in await _phase(base, args, questions, phase):
                    rows.append({"phase": phase, **row})
        finally:
            proc.terminate()
            await asyncio.to_thread(proc.wait, 60)
            log.close()
    parameters = {
        "clients": args.clients,
        "seconds_per_phase": args.seconds,
        "max_requests_per_phase": args.max_requests,
        "phases": phases,
        "ingest_clients": args.ingest_clients,
        "preset": args.preset,
        "top_k": args.top_k,
        "context": {"budget": args.budget, "format": args.format},
        "dashboard_questions": args.dashboard,
        "questions": str(args.questions) if args.questions else "bundled sample questions",
        "store": "bundled sample (400 passages)" if args.store is None else str(args.store),
        "embedder": embedder,
        "server_python": args.python,
        "server": "graphfuse serve (one uvicorn process) on 127.0.0.1; client in another process, same machine",
    }
    write_results(args.out, "serve_load", parameters, rows)
    return 1 if any(r.get("errors") for r in rows) else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="benchmarks/serve_load.py", description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="serve this store instead of a fresh demo store")
    parser.add_argument("--questions", type=Path, default=None, help="questions, one per line or JSONL")
    parser.add_argument("--preset", default="multihop")
    parser.add_argument("--phases", default="retrieve,ingest", help=f"comma-separated, of {', '.join(PHASES)}")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--ingest-clients", type=int, default=5, help="of the clients, how many ingest (ingest phase)")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--budget", type=int, default=2000, help="context phase: tokens")
    parser.add_argument("--format", default="passages", help="context phase: passages, evidence or graph")
    parser.add_argument("--dashboard", type=int, default=0, help="first ask N questions as the dashboard does")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs graphfuse serve")
    parser.add_argument("--out", type=Path, default=RESULTS / "serve_load.json")
    sys.exit(asyncio.run(main(parser.parse_args())))
