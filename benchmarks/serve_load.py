"""Load on `graphfuse serve`: concurrent clients on loopback, retrieval alone, then with ingest mixed in.

Bounded: ``--clients`` (50) clients for ``--seconds`` (60) per phase, at most ``--max-requests``
per phase, all to 127.0.0.1. The server is a real ``graphfuse serve`` process over the demo
store (the bundled sample, indexed into a temporary directory unless ``--store`` is given).
Reports requests/s, p50, p99 and errors (which must be 0: the script exits 1 otherwise).

    python benchmarks/serve_load.py [--preset multihop] [--clients 50] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
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
from graphfuse.indexing import Indexer, TitleLinker, read_sources
from graphfuse.stores import default_embedder, open_store


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _build_demo_store(directory: Path) -> str:
    embedder = default_embedder()[0]
    with sample_corpus() as corpus:
        records = list(read_sources([corpus]))
    store = await open_store(directory, create=True, embedder=embedder)
    try:
        await Indexer(store.graph, store.vectors, store.embedder, extractors=[TitleLinker()]).aindex(records)
    finally:
        await store.close()
    return embedder


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _phase(
    base: str, preset: str, clients: int, seconds: float, max_requests: int, ingesters: int
) -> list[dict[str, Any]]:
    questions = [q.question for q in sample_questions()]
    latencies: dict[str, list[float]] = {"retrieve": [], "ingest": []}
    errors: dict[str, list[str]] = {"retrieve": [], "ingest": []}
    deadline = time.perf_counter() + seconds
    sent = 0
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as client:

        async def worker(n: int) -> None:
            nonlocal sent
            kind = "ingest" if n < ingesters else "retrieve"
            i = n
            while time.perf_counter() < deadline and sent < max_requests:
                sent += 1
                i += clients
                if kind == "ingest":
                    doc = {
                        "id": f"load-{n}-{i}",
                        "title": f"Load note {n}-{i}",
                        "text": f"{questions[i % len(questions)]} (note {i})",
                    }
                    request = client.post("/v1/ingest", json={"documents": [doc]})
                else:
                    request = client.post(
                        "/v1/retrieve", json={"query": questions[i % len(questions)], "top_k": 10, "preset": preset}
                    )
                started = time.perf_counter()
                try:
                    response = await request
                    if response.status_code != 200:
                        errors[kind].append(f"HTTP {response.status_code}: {response.text[:200]}")
                        continue
                except httpx.HTTPError as exc:
                    errors[kind].append(f"{type(exc).__name__}: {exc}")
                    continue
                latencies[kind].append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(worker(n) for n in range(clients)))
        elapsed = time.perf_counter() - started
    rows = []
    for kind in ("retrieve", "ingest"):
        done = latencies[kind]
        if not done and not errors[kind]:
            continue
        rows.append(
            {
                "requests": kind,
                "ok": len(done),
                "errors": len(errors[kind]),
                "requests_per_s": round(len(done) / elapsed, 2),
                "p50_ms": round(_percentile(done, 0.50) * 1000, 1),
                "p99_ms": round(_percentile(done, 0.99) * 1000, 1),
                "first_error": errors[kind][0] if errors[kind] else None,
            }
        )
    return rows


async def _wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=2) as client:
        for _ in range(1200):
            if proc.poll() is not None:
                raise SystemExit(f"graphfuse serve exited with {proc.returncode} (see its log)")
            try:
                if (await client.get("/health")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit("graphfuse serve did not come up")


async def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="graphfuse-load-") as tmp:
        store = args.store or Path(tmp) / "store"
        print("indexing the demo store" if args.store is None else f"serving {store}", file=sys.stderr)
        embedder = await _build_demo_store(store) if args.store is None else "as recorded in the store"
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        cli = [sys.executable, "-m", "graphfuse.cli", "serve", "--store", str(store), "--port", str(port)]
        log = open(Path(tmp) / "server.log", "wb")  # noqa: SIM115, ASYNC230 - closed after the server exits
        proc = subprocess.Popen(  # noqa: ASYNC220 - starting the server process does not wait for it
            [*cli, "--preset", args.preset], env=env, stdout=log, stderr=subprocess.STDOUT
        )
        try:
            await _wait_ready(base, proc)
            # Warm up (model, caches, the preset's indexes) before anything is measured.
            print("server up; warming up", file=sys.stderr)
            await _phase(base, args.preset, 2, 600.0, 4, 0)
            rows = []
            for name, ingesters in (("retrieve only", 0), ("retrieve + ingest", args.ingest_clients)):
                print(f"phase: {name}", file=sys.stderr)
                for row in await _phase(base, args.preset, args.clients, args.seconds, args.max_requests, ingesters):
                    rows.append({"phase": name, **row})
        finally:
            proc.terminate()
            await asyncio.to_thread(proc.wait, 60)
            log.close()
    parameters = {
        "clients": args.clients,
        "seconds_per_phase": args.seconds,
        "max_requests_per_phase": args.max_requests,
        "ingest_clients": args.ingest_clients,
        "preset": args.preset,
        "top_k": 10,
        "store": "bundled sample (400 passages)" if args.store is None else str(args.store),
        "embedder": embedder,
        "server": "graphfuse serve (one uvicorn process) on 127.0.0.1; client in another process, same machine",
    }
    write_results(args.out, "serve_load", parameters, rows)
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="benchmarks/serve_load.py", description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="serve this store instead of a fresh demo store")
    parser.add_argument("--preset", default="multihop")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--ingest-clients", type=int, default=5, help="of the clients, how many ingest in phase 2")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--max-requests", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "serve_load.json")
    sys.exit(asyncio.run(main(parser.parse_args())))
