"""graphfuse-redis latency on loopback: get / set / get_many p50 and p99 (reports, never asserts).

Starts a private redis-server on a free 127.0.0.1 port (or uses ``--url``), times each call of
RedisCacheStore with embedding-sized values (384 float32 = 1536 bytes), and writes
``benchmarks/results/redis_cache.json``. The in-process InMemoryCacheStore is timed the same
way, as the floor.

    python benchmarks/redis_cache.py [--ops 2000] [--url redis://host:port/db] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, latency_ms, write_results
from graphfuse_redis import RedisCacheStore

from graphfuse import CacheStore
from graphfuse.stores import InMemoryCacheStore

VALUE = os.urandom(1536)
BATCH = 32


@contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (apt-get install redis-server); or pass --url")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def _samples(ops: int, call: Callable[[int], Awaitable[Any]]) -> list[float]:
    for i in range(min(100, ops)):  # warm up: connections, allocator
        await call(i)
    out = []
    for i in range(ops):
        start = time.perf_counter()
        await call(i)
        out.append(time.perf_counter() - start)
    return out


async def measure(backend: str, store: CacheStore, ops: int) -> list[dict[str, Any]]:
    batch = {f"m{i}": VALUE for i in range(BATCH)}
    await store.set_many(batch)
    operations: dict[str, tuple[int, Callable[[int], Awaitable[Any]]]] = {
        "set": (ops, lambda i: store.set(f"k{i}", VALUE)),
        "get (hit)": (ops, lambda i: store.get(f"k{i}")),
        "get (miss)": (ops, lambda i: store.get(f"missing{i}")),
        f"set_many {BATCH}": (ops // 4, lambda i: store.set_many(batch)),
        f"get_many {BATCH}": (ops // 4, lambda i: store.get_many(list(batch))),
    }
    rows = []
    for name, (n, call) in operations.items():
        rows.append({"backend": backend, "operation": name, "calls": n, **latency_ms(await _samples(n, call))})
    return rows


async def run(url: str, ops: int) -> list[dict[str, Any]]:
    redis_store = RedisCacheStore(url, namespace=f"bench-{os.getpid()}")
    memory_store = InMemoryCacheStore()
    try:
        return await measure("redis", redis_store, ops) + await measure("in_memory", memory_store, ops)
    finally:
        await redis_store.close()
        await memory_store.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="benchmarks/redis_cache.py", description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2000, help="timed calls per single-key operation")
    parser.add_argument("--url", help="an existing Redis server (default: start a private one)")
    parser.add_argument("--out", type=Path, default=RESULTS / "redis_cache.json")
    args = parser.parse_args()
    if args.url:
        rows = asyncio.run(run(args.url, args.ops))
    else:
        with redis_server() as url:
            rows = asyncio.run(run(url, args.ops))
    write_results(args.out, "redis_cache", {"ops": args.ops, "value_bytes": len(VALUE), "batch": BATCH}, rows)


if __name__ == "__main__":
    main()
