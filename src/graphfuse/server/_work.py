"""The server's work loop: one event loop, in a thread of its own, where all the store's work runs.

The HTTP loop (uvicorn's) parses, authenticates, enforces deadlines and answers; everything a
request makes the store's components do (retrieval stages, context assembly, ingest, graph
numbers) runs on this loop instead. Stage code is partly CPU-bound (BM25 scoring, PageRank walks,
sentence selection): run on the HTTP loop it held every other request, ``/health`` and the
deadline timers for as long as it computed. One loop for all component work, never one per
request: components whose clients belong to the loop that first used them (Redis connections,
HTTP pools) always see the same loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .._core._errors import InvalidInput

__all__ = ["WorkLoop"]

T = TypeVar("T")


class WorkLoop:
    """An event loop in a daemon thread, started on first use; :meth:`run` hands it a coroutine.

    ``max_runs`` bounds the coroutines run with ``limited=True`` (the server's pipeline runs:
    retrieve, context, compare) in progress at once; the others wait their turn, first come
    first served, within their request's deadline. Unlimited work (ingest, health probes) never
    waits for a slot.
    """

    def __init__(self, max_runs: int = 4, *, name: str = "graphfuse-server-work") -> None:
        if isinstance(max_runs, bool) or not isinstance(max_runs, int) or max_runs < 1:
            raise InvalidInput(f"max_runs must be a positive integer, got {max_runs!r}")
        self.max_runs = max_runs
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._slots: asyncio.Semaphore | None = None
        self._running = 0
        self._waiting = 0

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def on_loop(self) -> bool:
        """Whether the caller runs on this work loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    @property
    def running(self) -> int:
        """Limited runs in progress now."""
        return self._running

    @property
    def waiting(self) -> int:
        """Limited runs waiting for a slot now."""
        return self._waiting

    async def _limited(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.max_runs)
        self._waiting += 1
        try:
            await self._slots.acquire()
        except BaseException:
            coro.close()
            raise
        finally:
            self._waiting -= 1
        self._running += 1
        try:
            return await coro
        finally:
            self._running -= 1
            self._slots.release()

    async def run(self, coro: Coroutine[Any, Any, T], *, limited: bool = False) -> T:
        """The result of ``coro``, run on the work loop (directly when already on it).

        Cancelling the caller cancels the work (at its next ``await``); context variables
        (deadlines, the tracing context) are carried over.
        """
        work = self._limited(coro) if limited else coro
        if self.on_loop():
            return await work
        loop = self._started()
        future = contextvars.copy_context().run(asyncio.run_coroutine_threadsafe, work, loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start ``coro`` on the work loop in the background (from any thread); returns its future."""
        return asyncio.run_coroutine_threadsafe(coro, self._started())

    async def aclose(self) -> None:
        """Cancel what still runs on the loop, stop it and wait for its thread (idempotent)."""
        if self.on_loop():
            raise RuntimeError("WorkLoop.aclose() called on the work loop itself")
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
            self._slots = None
        if loop is None or thread is None:
            return

        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(cancel_all(), loop))
        loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join, 10)
        if not thread.is_alive():
            loop.close()
