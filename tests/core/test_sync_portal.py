"""graphfuse.run_sync and the generated twins: one event-loop thread, with or without a running loop."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from graphfuse import InvalidInput, run_sync
from graphfuse.presets import aminimal, minimal
from graphfuse.stores import LocalVectorStore

_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("graphfuse_test_var", default="unset")


async def _where() -> tuple[str, str]:
    await asyncio.sleep(0)
    return threading.current_thread().name, _VAR.get()


def test_runs_on_graphfuses_loop_thread_and_carries_context_variables() -> None:
    token = _VAR.set("caller's")
    try:
        assert run_sync(_where()) == ("graphfuse-sync", "caller's")
    finally:
        _VAR.reset(token)
    assert run_sync(_where()) == ("graphfuse-sync", "unset")  # the portal's task kept nothing


def test_one_loop_serves_every_call_from_every_thread() -> None:
    async def loop_id() -> int:
        return id(asyncio.get_running_loop())

    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(run_sync(loop_id()))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set([*seen, run_sync(loop_id())])) == 1


async def test_works_inside_a_running_event_loop() -> None:
    # As in Jupyter: the caller's thread runs a loop; the work runs on GraphFuse's.
    assert run_sync(_where())[0] == "graphfuse-sync"


def test_errors_surface_as_raised() -> None:
    async def bad() -> None:
        raise InvalidInput("bad input, named")

    with pytest.raises(InvalidInput, match="bad input, named"):
        run_sync(bad())


def test_refused_on_its_own_loop_thread() -> None:
    async def nested() -> None:
        coro = _where()
        run_sync(coro)

    with pytest.raises(RuntimeError, match="await instead"):
        run_sync(nested())


def test_generated_twins_keep_name_signature_and_docstring() -> None:
    import inspect

    from graphfuse.stores import StoreDirectory, aopen_store, open_store

    assert open_store.__name__ == "open_store"
    assert aopen_store.__name__ == "aopen_store"
    assert inspect.signature(open_store).parameters.keys() == inspect.signature(aopen_store).parameters.keys()
    assert open_store.__doc__ == aopen_store.__doc__
    assert StoreDirectory.pipeline.__qualname__ == "StoreDirectory.pipeline"
    assert aminimal.__name__ == "aminimal"
    assert not inspect.iscoroutinefunction(minimal)


async def test_async_twin_of_a_sync_builder_runs_in_a_worker_thread() -> None:
    from graphfuse.embedders import HashingEmbedder

    pipeline = await aminimal(LocalVectorStore(), HashingEmbedder(8))
    assert [s.name for s in pipeline.stages] == ["semantic"]
