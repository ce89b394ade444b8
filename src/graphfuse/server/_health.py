"""``/health``: the version, whether the stores and the embedder answer, whether the server is ready.

Called from the HTTP loop: the store probes run on the work loop; when that loop does not take
them up within a second (a long computation holds it) they say ``busy``, and so does the status.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .. import __version__
from .._core._protocols import Embedder, GraphStore, VectorStore
from ._scope import TENANT_KEY
from ._warm_up import WarmUp
from ._work import WorkLoop

__all__ = ["health_report"]

logger = logging.getLogger("graphfuse.server")

_HEALTH_START = 1.0  # seconds /health waits for the work loop to take its store probes up
_HEALTH_PROBE = 5.0  # seconds each store probe may take


async def _probe_stores(graph: GraphStore, vectors: VectorStore, begun: list[bool]) -> dict[str, str]:
    begun.append(True)
    checks: dict[str, str] = {}
    probes: tuple[tuple[str, Callable[[], Awaitable[Any]]], ...] = (
        ("graph_store", lambda: graph.get_documents(["graphfuse-health-probe"])),
        ("vector_store", vectors.count),
    )
    for name, probe in probes:
        try:
            await asyncio.wait_for(probe(), timeout=_HEALTH_PROBE)
            checks[name] = "ok"
        except Exception as exc:  # reported, not raised: health says what is down
            logger.warning("health check %s failed: %s", name, exc)
            checks[name] = "unreachable"
    return checks


async def health_report(
    work: WorkLoop,
    graph: GraphStore,
    vectors: VectorStore,
    embedder: Embedder,
    *,
    warm_up: WarmUp,
    description: Mapping[str, str],
) -> dict[str, Any]:
    """The ``/health`` answer (see :meth:`graphfuse.server.Service.health`)."""
    started = time.perf_counter()
    begun: list[bool] = []
    probes = asyncio.ensure_future(work.run(_probe_stores(graph, vectors, begun)))
    done, _ = await asyncio.wait({probes}, timeout=_HEALTH_START)
    if not done and not begun:
        probes.cancel()
        checks = {"graph_store": "busy", "vector_store": "busy"}
    else:
        try:
            checks = await asyncio.wait_for(probes, timeout=2 * _HEALTH_PROBE)
        except asyncio.TimeoutError:
            checks = {"graph_store": "busy", "vector_store": "busy"}
    checks["embedder"] = "ok" if embedder.dimension > 0 else "unreachable"
    values = set(checks.values())
    status = "degraded" if "unreachable" in values else "busy" if "busy" in values else "ok"
    return {
        "status": status,
        "ready": warm_up.ready,
        "warming": list(warm_up.warming),
        "version": __version__,
        "checks": checks,
        "work": {"running": work.running, "waiting": work.waiting, "max_concurrent_runs": work.max_runs},
        "components": dict(description),
        "tenant_key": TENANT_KEY,
        "took_ms": round((time.perf_counter() - started) * 1000, 3),
    }
