"""How commands report GraphFuse errors: one line on stderr, exit code 1, no traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from .._errors import GraphFuseError, PermissionDenied, StageFailed, StoreCorrupted

__all__ = ["err_console", "reports_errors"]

F = TypeVar("F", bound=Callable[..., Any])

_STORE_FAULTS = (StoreCorrupted, PermissionDenied)

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def reports_errors(command: F) -> F:
    """Turn a :class:`~graphfuse.GraphFuseError` raised by ``command`` into a clean exit."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraphFuseError as exc:
            # A stage that met a damaged or unreadable store: the store is what to tell about.
            shown = exc.cause if isinstance(exc, StageFailed) and isinstance(exc.cause, _STORE_FAULTS) else exc
            err_console.print(Text.assemble(("error: ", "bold red"), str(shown)))
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]
