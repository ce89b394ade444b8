"""The sync/async rule's machinery: one event-loop thread (an anyio portal) and the generated twins.

Every entry point has one implementation; :func:`sync_form` makes the plain sync twin of an
``a``-prefixed coroutine function (it runs on the portal, so it works with or without a running
event loop), :func:`async_form` the ``a``-prefixed twin of a sync function (it runs in a worker
thread). :func:`run_sync` runs one coroutine on the portal. The rule: docs/architecture.md.
"""

from __future__ import annotations

import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any, ParamSpec, TypeVar

import anyio
import anyio.to_thread
from anyio.from_thread import BlockingPortal

__all__ = ["async_form", "run_sync", "sync_form"]

P = ParamSpec("P")
T = TypeVar("T")

_THREAD = "graphfuse-sync"
_lock = threading.Lock()
_portal: BlockingPortal | None = None
_thread: threading.Thread | None = None


def _serve(ready: Future[BlockingPortal]) -> None:
    async def main() -> None:
        async with BlockingPortal() as portal:
            ready.set_result(portal)
            await portal.sleep_until_stopped()

    try:
        anyio.run(main)
    except BaseException as exc:  # the loop never started: the caller waiting on ``ready`` hears why
        if not ready.done():
            ready.set_exception(exc)
        raise


def _get_portal() -> BlockingPortal:
    # One portal serves every sync call, so loop-bound clients (async drivers) that a component
    # creates lazily stay on a single event loop for the life of the process. Its thread is a
    # daemon: a process never waits on it to exit.
    global _portal, _thread
    with _lock:
        if _portal is None or _thread is None or not _thread.is_alive():
            ready: Future[BlockingPortal] = Future()
            _thread = threading.Thread(target=_serve, args=(ready,), name=_THREAD, daemon=True)
            _thread.start()
            _portal = ready.result()
        return _portal


async def _with_context(values: list[tuple[contextvars.ContextVar[Any], Any]], coro: Coroutine[Any, Any, T]) -> T:
    for var, value in values:  # the portal's task has its own copy of the context: set there only
        var.set(value)
    return await coro


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on GraphFuse's event-loop thread and return its result.

    Callable from any thread but that one, with or without a running event loop (Jupyter): the
    caller blocks until the coroutine finishes. Context variables (deadlines, tracing context)
    are carried over. Public for hosts and tests; GraphFuse's entry points have sync forms
    (:func:`sync_form`), so an application never needs it.
    """
    if threading.current_thread().name == _THREAD:
        coro.close()
        raise RuntimeError("run_sync called from GraphFuse's own event-loop thread; await instead")
    values = list(contextvars.copy_context().items())
    result: T = _get_portal().call(_with_context, values, coro)
    return result


def _rename(twin: Callable[..., Any], of: Callable[..., Any], name: str) -> None:
    owner, _, _ = of.__qualname__.rpartition(".")
    twin.__name__ = name
    twin.__qualname__ = f"{owner}.{name}" if owner else name


def sync_form(afn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The sync twin of the coroutine function ``afn`` (``aname`` -> ``name``): same arguments,
    result and docstring, run on GraphFuse's event-loop thread (:func:`run_sync`)."""

    @functools.wraps(afn)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_sync(afn(*args, **kwargs))

    _rename(call, afn, afn.__name__.removeprefix("a"))
    return call


def async_form(fn: Callable[P, T]) -> Callable[P, Coroutine[Any, Any, T]]:
    """The async twin of the sync function ``fn`` (``name`` -> ``aname``): same arguments, result
    and docstring, run in a worker thread so the caller's event loop keeps serving."""

    @functools.wraps(fn)
    async def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))

    _rename(call, fn, f"a{fn.__name__}")
    return call
