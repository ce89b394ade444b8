"""The ``graphfuse`` command line: ``index``, ``query``, ``plugins``, ``demo``, ``eval``, ``delete``.

Each command is one module here exposing ``register(app)``; adding a command is one module
plus one entry in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import typer

__all__ = ["COMMANDS", "app", "build", "main"]

COMMANDS = ("index", "query", "plugins", "demo", "eval", "delete", "serve", "keys", "compare", "context", "check")
"""Modules (``graphfuse.cli._<name>``) whose ``register(app)`` adds a command."""

HELP = "Graph-aware retrieval for RAG: index documents, query them, list plugins, run the demo."


def build(commands: Sequence[str] = COMMANDS) -> typer.Typer:
    """A ``graphfuse`` app with ``commands`` (default: all of them), each imported now."""
    app = typer.Typer(
        name="graphfuse", help=HELP, no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False
    )
    if len(commands) == 1:

        @app.callback()
        def _group() -> None:
            # With one command typer would run it as the whole app: keep ``graphfuse NAME ...``.
            pass

    for name in commands:
        importlib.import_module(f"{__name__}._{name}").register(app)
    return app


_full: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    # ``graphfuse.cli.app``, every command, built on first use (the tests and ``CliRunner`` use it).
    global _full
    if name == "app":
        if _full is None:
            _full = build()
        return _full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Entry point of the ``graphfuse`` console script.

    ``graphfuse NAME ...`` imports the module of command ``NAME`` only: a query does not pay
    for importing the indexing, evaluation and server commands. Anything else (``--help``, a
    misspelt command) gets every command.
    """
    argv = sys.argv[1:]
    build([argv[0]] if argv and argv[0] in COMMANDS else COMMANDS)()
