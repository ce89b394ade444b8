"""How commands report GraphFuse errors: one line on stderr, exit code 1, no traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from .._errors import GraphFuseError

__all__ = ["err_console", "reports_errors"]

F = TypeVar("F", bound=Callable[..., Any])

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def reports_errors(command: F) -> F:
    """Turn a :class:`~graphfuse.GraphFuseError` raised by ``command`` into a clean exit."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except GraphFuseError as exc:
            err_console.print(Text.assemble(("error: ", "bold red"), str(exc)))
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]
