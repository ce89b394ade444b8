"""Progress bars for long CLI commands: one bar per step, driven by ``(step, done, total)`` calls."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

__all__ = ["StepBars"]


class StepBars:
    """A rich progress display (on stderr) where each named step gets its own bar.

    Use as a context manager and pass :meth:`advance` as a callback. Bars vanish when the
    command ends (``transient``), so the command's own output stays clean; nothing is drawn
    when the console is not a terminal.
    """

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            TextColumn("{task.description:<24}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[str, TaskID] = {}

    def advance(self, step: str, done: int, total: int) -> None:
        """Show ``done`` of ``total`` for ``step`` (a new step gets a new bar)."""
        task = self._tasks.get(step)
        if task is None:
            task = self._tasks[step] = self._progress.add_task(step, total=total)
        self._progress.update(task, completed=done, total=total)

    def __enter__(self) -> StepBars:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()
