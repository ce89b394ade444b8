"""The ``graphfuse`` command line: ``index``, ``query``, ``plugins``, ``demo``, ``eval``, ``delete``.

Each command is one module here exposing ``register(app)``; adding a command is one module
plus one entry in :data:`COMMANDS`.
"""

from __future__ import annotations

import importlib

import typer

__all__ = ["COMMANDS", "app", "main"]

COMMANDS = ("index", "query", "plugins", "demo", "eval", "delete", "serve", "keys", "compare", "context", "check")
"""Modules (``graphfuse.cli._<name>``) whose ``register(app)`` adds a command."""

app = typer.Typer(
    name="graphfuse",
    help="Graph-aware retrieval for RAG: index documents, query them, list plugins, run the demo.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)

for _name in COMMANDS:
    importlib.import_module(f"{__name__}._{_name}").register(app)


def main() -> None:
    """Entry point of the ``graphfuse`` console script."""
    app()
