"""Shared helpers for the speed benchmarks: synthetic data, timing, JSON results, tables.

The benchmarks report; they never assert. Results go to ``benchmarks/results/<name>.json``
(or ``--out``) with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from graphfuse import Document, Relation

RESULTS = Path(__file__).resolve().parent / "results"
RELATION_TYPES = ("CITES", "MENTIONS", "PART_OF")
TENANTS = 10


def arguments(name: str, description: str, **defaults: int) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=f"benchmarks/{name}.py", description=description)
    parser.add_argument("--out", type=Path, default=RESULTS / f"{name}.json", help="where to write the JSON results")
    for key, value in defaults.items():
        parser.add_argument(f"--{key.replace('_', '-')}", type=int, default=value)
    return parser.parse_args()


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        # Other work on the machine inflates latencies; the load average says how busy it was.
        "load_average_1m": round(os.getloadavg()[0], 2),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_results(out: Path, name: str, parameters: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"benchmark": name, "machine": machine(), "parameters": parameters, "results": rows}
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print_table(rows)
    print(f"\nwritten to {out}")


def print_table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    columns = list(dict.fromkeys(k for row in rows for k in row))
    cells = [[_cell(row.get(c, "")) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for r in cells:
        print("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)))


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def latency_ms(samples: Iterable[float]) -> dict[str, float]:
    """p50, p99 and mean of durations in seconds, as milliseconds."""
    values = sorted(s * 1000 for s in samples)
    return {
        "p50_ms": statistics.median(values),
        "p99_ms": float(np.percentile(values, 99)),
        "mean_ms": statistics.fmean(values),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def synthetic_documents(n: int, seed: int = 0) -> list[Document]:
    """``n`` documents with tenant, year and access_count metadata and creation dates."""
    rng = np.random.default_rng(seed)
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    ages = rng.integers(0, 3 * 365, n).tolist()
    access = rng.zipf(1.8, n).clip(max=10_000).tolist()
    return [
        Document(
            f"doc-{i:07d}",
            f"Synthetic passage {i} about topic {i % 997} in tenant {i % TENANTS}.",
            {"tenant": f"t{i % TENANTS}", "year": 2000 + i % 25, "access_count": int(access[i])},
            created_at=now - timedelta(days=int(ages[i])),
        )
        for i in range(n)
    ]


def synthetic_edges(n_nodes: int, n_edges: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n_edges`` distinct (source, target, type-code) triples without self-loops.

    Targets are skewed towards low node numbers, so the graph has hubs like real citation graphs.
    """
    rng = np.random.default_rng(seed + 1)
    src = np.empty(0, dtype=np.int64)
    dst = np.empty(0, dtype=np.int64)
    typ = np.empty(0, dtype=np.int64)
    while src.size < n_edges:
        k = int((n_edges - src.size) * 1.1) + 10
        s = rng.integers(0, n_nodes, k)
        t = (n_nodes * rng.random(k) ** 2).astype(np.int64)
        c = rng.integers(0, len(RELATION_TYPES), k)
        keep = s != t
        src, dst, typ = np.concatenate([src, s[keep]]), np.concatenate([dst, t[keep]]), np.concatenate([typ, c[keep]])
        key = (src * n_nodes + dst) * len(RELATION_TYPES) + typ
        _, first = np.unique(key, return_index=True)
        first.sort()
        src, dst, typ = src[first], dst[first], typ[first]
    return src[:n_edges], dst[:n_edges], typ[:n_edges]


def synthetic_relations(n_nodes: int, n_edges: int, seed: int = 0) -> list[Relation]:
    src, dst, typ = synthetic_edges(n_nodes, n_edges, seed)
    return [
        Relation(f"doc-{s:07d}", f"doc-{t:07d}", RELATION_TYPES[c])
        for s, t, c in zip(src.tolist(), dst.tolist(), typ.tolist(), strict=True)
    ]


def batches(items: list[Any], size: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
