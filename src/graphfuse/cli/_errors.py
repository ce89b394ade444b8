"""How commands report GraphFuse errors (and a full disk): one line on stderr, exit code 1, no traceback."""

from __future__ import annotations

import errno
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from .._core._errors import GraphFuseError, PermissionDenied, StageFailed, StoreCorrupted

__all__ = ["err_console", "reports_errors"]

F = TypeVar("F", bound=Callable[..., Any])

_STORE_FAULTS = (StoreCorrupted, PermissionDenied)
_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))  # (no space left, disk quota exceeded)

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
        except OSError as exc:
            if exc.errno not in _NO_SPACE:
                raise
            # A full disk met by a writer that does not say so itself (a cache file, an index file):
            # every write is atomic (temporary file, then rename) or a rolled-back transaction.
            where = f" writing {exc.filename}" if exc.filename else ""
            message = f"no space left on the disk{where} ({exc.strerror}); free space and run the same command again"
            err_console.print(Text.assemble(("error: ", "bold red"), message))
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]
