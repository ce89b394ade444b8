"""``graphfuse plugins``: the installed plugins as JSON."""

from __future__ import annotations

import json

import typer

from ..plugins import get_registry
from ._errors import reports_errors

__all__ = ["register"]


@reports_errors
def plugins() -> None:
    """List installed plugins as JSON: name, version, hooks, what each registers, and load errors."""
    rows = [p.to_dict() for p in get_registry().plugins()]
    typer.echo(json.dumps(rows, indent=2))


def register(app: typer.Typer) -> None:
    app.command("plugins")(plugins)
