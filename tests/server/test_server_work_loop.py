"""The server's work runs on the service's work loop: a computing request never holds the loop
that answers HTTP, pipeline runs are bounded, and the start-up warm-up is reported by /health."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import httpx
from _server_world import served, uvicorn_served

from graphfuse import Pipeline, presets
from graphfuse.server import Limits, WorkLoop


class _Hold:
    """A pass-through stage that holds its run until ``release`` is set.

    ``blocking=True`` holds the event loop it runs on, as CPU-bound stage code (BM25, PageRank,
    sentence selection) does; otherwise it waits without holding it and counts the runs inside.
    """

    name = "hold"

    def __init__(self, *, blocking: bool) -> None:
        self.blocking = blocking
        self.entered = threading.Event()
        self.release = threading.Event()
        self.inside = 0
        self.most_inside = 0
        self._lock = threading.Lock()

    async def run(self, query: Any, candidates: Sequence[Any], context: Any) -> Sequence[Any]:
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        self.entered.set()
        try:
            if self.blocking:
                self.release.wait(20)  # holds this thread's event loop, like a long computation
            else:
                await asyncio.to_thread(self.release.wait, 20)
        finally:
            with self._lock:
                self.inside -= 1
        return candidates


@contextmanager
def _held_preset(name: str, *, blocking: bool) -> Iterator[_Hold]:
    hold = _Hold(blocking=blocking)

    def factory(vector_store: Any, embedder: Any) -> Any:
        return Pipeline([*presets.minimal(vector_store, embedder).stages, hold])

    presets.register(name, factory, needs=("vector_store", "embedder"))
    try:
        yield hold
    finally:
        hold.release.set()
        presets.unregister(name)


@pytest.mark.parametrize("route", ["/v1/context", "/v1/retrieve"])
async def test_health_and_deadlines_answer_while_a_request_computes(tmp_path: Path, route: str) -> None:
    with _held_preset("hold_compute_probe", blocking=True) as hold:
        async with (
            served(tmp_path, limits=Limits(request_timeout=30)) as w,
            uvicorn_served(w.app) as base,
            httpx.AsyncClient(base_url=base, timeout=30) as client,
        ):
            body = {"query": "apple", "preset": "hold_compute_probe", "budget": 200}
            if route == "/v1/retrieve":
                del body["budget"]
            slow = asyncio.create_task(client.post(route, json=body, headers=w.auth("acme")))
            assert await asyncio.to_thread(hold.entered.wait, 20)
            # The computation holds the work loop; the HTTP loop still answers, and says so.
            health = await client.get("/health", timeout=10)
            assert health.status_code == 200
            report = health.json()
            assert report["status"] == "busy", report
            assert report["checks"]["graph_store"] == "busy"
            assert report["work"]["running"] == 1
            # Bad input is refused without waiting for the work loop.
            bad = await client.post(route, json={"query": ""}, headers=w.auth("acme"), timeout=10)
            assert bad.status_code == 422
            assert not slow.done()
            hold.release.set()
            r = await slow
            assert r.status_code == 200, r.text
            after = (await client.get("/health", timeout=10)).json()
            assert after["status"] == "ok", after
            assert after["work"]["running"] == 0


async def test_a_request_past_its_deadline_answers_504_while_the_work_loop_computes(tmp_path: Path) -> None:
    with _held_preset("hold_deadline_probe", blocking=True) as hold:
        async with (
            served(tmp_path, limits=Limits(request_timeout=0.5)) as w,
            uvicorn_served(w.app) as base,
            httpx.AsyncClient(base_url=base, timeout=30) as client,
        ):
            body = {"query": "apple", "preset": "hold_deadline_probe", "budget": 200}
            slow = asyncio.create_task(client.post("/v1/context", json=body, headers=w.auth("acme")))
            assert await asyncio.to_thread(hold.entered.wait, 20)
            # The deadline timer lives on the HTTP loop: it fires although the computation goes on.
            r = await slow
            assert r.status_code == 504, r.text
            assert hold.inside == 1
            hold.release.set()


async def test_pipeline_runs_are_bounded_by_max_concurrent_runs(tmp_path: Path) -> None:
    with _held_preset("hold_limit_probe", blocking=False) as hold:
        async with served(tmp_path, limits=Limits(max_concurrent_runs=2)) as w:
            body = {"query": "apple", "preset": "hold_limit_probe"}
            requests = [
                asyncio.create_task(w.client.post(route, json={**body, **extra}, headers=w.auth("acme")))
                for route, extra in (("/v1/context", {"budget": 200}), ("/v1/retrieve", {})) * 3
            ]
            assert await asyncio.to_thread(hold.entered.wait, 20)
            work: dict[str, Any] = {}
            for _ in range(200):  # until all six reached the service: two running, four waiting
                work = (await w.client.get("/health")).json()["work"]
                if work["waiting"] == 4:
                    break
                await asyncio.sleep(0.05)
            assert work == {"running": 2, "waiting": 4, "max_concurrent_runs": 2}
            assert hold.inside == 2
            # Other work is not a pipeline run: it does not wait for a slot.
            r = await w.ingest("acme", [{"id": "a9", "text": "ACMEWORD a late note"}])
            assert r.status_code == 200, r.text
            hold.release.set()
            answers = await asyncio.gather(*requests)
            assert [a.status_code for a in answers] == [200] * 6
            assert hold.most_inside == 2


async def test_health_says_not_ready_until_the_warm_up_is_over(tmp_path: Path) -> None:
    building, release = threading.Event(), threading.Event()

    def factory(vector_store: Any, embedder: Any) -> Any:
        building.set()
        release.wait(20)
        return presets.minimal(vector_store, embedder)

    presets.register("slow_warm_probe", factory, needs=("vector_store", "embedder"))
    try:
        async with served(tmp_path) as w:
            assert (await w.client.get("/health")).json()["ready"] is True  # no warm-up started
            w.service.default_preset = "slow_warm_probe"
            w.service.start_warm_up()
            assert await asyncio.to_thread(building.wait, 20)
            report = (await w.client.get("/health")).json()
            assert report["ready"] is False
            assert "slow_warm_probe" in report["warming"]
            release.set()
            for _ in range(200):
                report = (await w.client.get("/health")).json()
                if report["ready"]:
                    break
                await asyncio.sleep(0.05)
            assert report["ready"] is True
            assert report["warming"] == []
            # The preset the warm-up built serves the next request without a build.
            building.clear()
            body = {"query": "apple", "preset": "slow_warm_probe"}
            r = await w.client.post("/v1/retrieve", json=body, headers=w.auth("acme"))
            assert r.status_code == 200, r.text
            assert not building.is_set()
    finally:
        release.set()
        presets.unregister("slow_warm_probe")


async def test_work_loop_runs_coroutines_on_its_own_thread_and_cancels_with_the_caller() -> None:
    work = WorkLoop(1)
    try:
        here = threading.get_ident()
        assert await work.run(asyncio.to_thread(lambda: 1)) == 1

        async def where() -> tuple[int, bool]:
            return threading.get_ident(), work.on_loop()

        ident, on_loop = await work.run(where())
        assert ident != here
        assert on_loop
        assert not work.on_loop()
        started, cancelled = threading.Event(), threading.Event()

        async def forever() -> None:
            started.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                cancelled.set()
                raise

        task = asyncio.create_task(work.run(forever(), limited=True))
        assert await asyncio.to_thread(started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(cancelled.wait, 10)
        # The slot of the cancelled run is free again.
        assert await asyncio.wait_for(work.run(where(), limited=True), 10)
    finally:
        await work.aclose()
    with pytest.raises(Exception, match="max_runs"):
        WorkLoop(0)
