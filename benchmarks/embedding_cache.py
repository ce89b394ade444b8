"""Embedding throughput through the cache: a cold run, then the same texts again.

Embeds the bundled sample's passages with the offline MiniLM embedder (``--embedder hashing``
for a model-free run) through :class:`~graphfuse.embedders.CachingEmbedder`, first on an empty
cache, then repeated, on the in-process cache and on a private redis-server. Reports texts per
second; writes ``benchmarks/results/embedding_cache.json``. Reports only.

Run: ``python benchmarks/embedding_cache.py [--embedder local|hashing]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from _common import RESULTS, write_results
from graphfuse_redis import RedisCacheStore
from redis_cache import redis_server

from graphfuse import CacheStore, Embedder
from graphfuse.data import sample_corpus
from graphfuse.embedders import CachingEmbedder, HashingEmbedder, LocalEmbedder
from graphfuse.stores import InMemoryCacheStore


def passages() -> list[str]:
    with sample_corpus() as path:
        return [json.loads(line)["text"] for line in Path(path).read_text(encoding="utf-8").splitlines() if line]


async def throughput(embedder: Embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        await embedder.embed_documents(texts[i : i + batch])
    return len(texts) / (time.perf_counter() - started)


async def measure(name: str, inner: Embedder, cache: CacheStore, texts: list[str], batch: int) -> dict[str, Any]:
    cached = CachingEmbedder(inner, cache)
    cold = await throughput(cached, texts, batch)
    warm = await throughput(cached, texts, batch)
    await cache.close()
    return {
        "cache": name,
        "texts": len(texts),
        "cold_texts_per_s": round(cold, 1),
        "repeat_texts_per_s": round(warm, 1),
    }


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    texts = passages()
    inner: Embedder = LocalEmbedder() if args.embedder == "local" else HashingEmbedder()
    await inner.embed_documents(texts[:8])  # load the model outside the timings
    rows = [{"cache": "none", "texts": len(texts), "cold_texts_per_s": round(await throughput(inner, texts, 64), 1)}]
    rows.append(await measure("in-memory", inner, InMemoryCacheStore(), texts, 64))
    with redis_server() as url:
        rows.append(await measure("redis (loopback)", inner, RedisCacheStore(url, namespace="bench"), texts, 64))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", choices=("local", "hashing"), default="local")
    parser.add_argument("--out", type=Path, default=RESULTS / "embedding_cache.json")
    args = parser.parse_args()
    rows = asyncio.run(run(args))
    write_results(args.out, "embedding_cache", {"embedder": args.embedder, "batch": 64}, rows)


if __name__ == "__main__":
    main()
