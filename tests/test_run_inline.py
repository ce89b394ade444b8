"""graphfuse.hosts.run_inline: a host's sync path runs work that never suspends on the caller's thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from graphfuse.hosts import run_inline


def test_work_that_never_suspends_runs_on_the_callers_thread() -> None:
    threads: list[str] = []

    async def work() -> int:
        threads.append(threading.current_thread().name)
        return 42

    assert run_inline(work) == 42
    assert threads == [threading.current_thread().name]


def test_work_that_suspends_is_run_again_on_graphfuses_loop() -> None:
    attempts: list[str] = []

    async def work() -> str:
        attempts.append(threading.current_thread().name)
        await asyncio.sleep(0)
        return "done"

    assert run_inline(work) == "done"
    assert attempts == [threading.current_thread().name, "graphfuse-sync"]  # the first attempt abandoned


def test_inline_false_goes_to_graphfuses_loop_at_once_and_errors_surface() -> None:
    threads: list[str] = []

    async def work() -> None:
        threads.append(threading.current_thread().name)
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad"):
        run_inline(work, inline=False)
    assert threads == ["graphfuse-sync"]
    with pytest.raises(ValueError, match="bad"):
        run_inline(work)  # raised before any suspension: on the caller's thread, not run twice
    assert threads == ["graphfuse-sync", threading.current_thread().name]
