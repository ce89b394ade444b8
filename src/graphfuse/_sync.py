"""Run GraphFuse coroutines from synchronous code, including inside a running event loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_inline", "run_sync"]

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def _portal() -> asyncio.AbstractEventLoop:
    # One daemon loop serves every sync call, so loop-bound clients (async drivers) that a
    # component creates lazily stay on a single loop for the life of the process.
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="graphfuse-sync", daemon=True)
            thread.start()
            _loop = loop
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result, from any thread.

    Works when the calling thread already runs an event loop (Jupyter): the coroutine runs on
    GraphFuse's private loop thread and this call blocks the caller until it finishes.
    Context variables (deadlines, tracing context) are carried over.
    """
    loop = _portal()
    if threading.current_thread().name == "graphfuse-sync":
        coro.close()
        raise RuntimeError("run_sync called from GraphFuse's own loop thread; await instead")
    ctx = contextvars.copy_context()
    future = ctx.run(asyncio.run_coroutine_threadsafe, coro, loop)
    return future.result()


def run_inline(make: Callable[[], Coroutine[Any, Any, T]], *, inline: bool = True) -> T:
    """Run the coroutine ``make()`` builds on the caller's thread when it finishes without suspending,
    else on GraphFuse's loop (:func:`run_sync`).

    For a host's sync path over work that awaits nothing that suspends (in-memory stages, an
    in-memory store): no hop to another thread. ``make`` must build a side-effect-free coroutine:
    one that suspends after all is closed and a fresh one runs through :func:`run_sync`.
    ``inline=False`` goes to :func:`run_sync` at once.
    """
    if inline:
        coro = make()
        try:
            coro.send(None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        coro.close()  # it suspended after all (nothing was written): run it again on GraphFuse's loop
    return run_sync(make())
